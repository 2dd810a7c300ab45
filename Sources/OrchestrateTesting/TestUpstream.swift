import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import Synchronization

/// A real HTTP server on 127.0.0.1 standing in for a backend: it answers with what it received
/// (method, path, query, body, the hit number) as JSON, plus a few headers a backend sends.
public final class TestUpstream: Sendable {
    public let hits = Mutex(0)
    private let channel: any Channel
    public let name: String

    private init(name: String, channel: any Channel) {
        self.name = name
        self.channel = channel
    }

    public var port: Int { channel.localAddress!.port! }
    public var url: String { "http://127.0.0.1:\(port)" }

    public static func start(name: String = "upstream") async throws -> TestUpstream {
        let box = Mutex<TestUpstream?>(nil)
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline()
                    try channel.pipeline.syncOperations.addHandler(Handler(name: name) { box.withLock { $0 } })
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        let upstream = TestUpstream(name: name, channel: channel)
        box.withLock { $0 = upstream }
        return upstream
    }

    public func stop() async {
        try? await channel.close()
    }

    private final class Handler: ChannelInboundHandler {
        typealias InboundIn = HTTPServerRequestPart
        typealias OutboundOut = HTTPServerResponsePart
        let name: String
        let upstream: @Sendable () -> TestUpstream?
        var head: HTTPRequestHead?
        var body = ""

        init(name: String, upstream: @escaping @Sendable () -> TestUpstream?) {
            self.name = name
            self.upstream = upstream
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            switch unwrapInboundIn(data) {
            case .head(let head):
                self.head = head
                body = ""
            case .body(let buffer):
                body += String(buffer: buffer)
            case .end:
                guard let head else { return }
                let hit = upstream()?.hits.withLock { hits -> Int in
                    hits += 1
                    return hits
                } ?? 0
                let (path, query) = head.uri.firstIndex(of: "?").map { (String(head.uri[..<$0]), String(head.uri[head.uri.index(after: $0)...])) } ?? (head.uri, "")
                let reply: [String: Any] = [
                    "upstream": name, "method": head.method.rawValue, "path": path, "query": query, "body": body, "hit": hit,
                    "authorized": head.headers.first(name: "authorization") == "Bearer s3cret",
                ]
                let data = try! JSONSerialization.data(withJSONObject: reply, options: [.sortedKeys, .withoutEscapingSlashes])
                var headers = HTTPHeaders()
                headers.add(name: "content-type", value: "application/json")
                headers.add(name: "content-length", value: "\(data.count)")
                headers.add(name: "x-upstream", value: name)
                headers.add(name: "set-cookie", value: "session=secret-\(hit)")
                let status: HTTPResponseStatus = path.hasSuffix("/missing") ? .notFound : .ok
                context.write(wrapOutboundOut(.head(HTTPResponseHead(version: head.version, status: status, headers: headers))), promise: nil)
                context.write(wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(bytes: data)))), promise: nil)
                context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
            }
        }
    }
}
