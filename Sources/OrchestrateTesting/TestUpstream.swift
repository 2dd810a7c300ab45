import CompressNIO
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import Synchronization

/// A real HTTP server on 127.0.0.1 standing in for a backend: it answers with what it received
/// (method, path, query, body, the hit number) as JSON, plus a few headers a backend sends.
///
/// A few paths answer otherwise: `…/missing` 404; `…/unavailable-once` 503 the first time that path is asked, then as
/// the others do (a backend that had a moment's outage); `…/login` a token (`{"token": "tok-…", "user": "ann"}`); `…/headers`
/// the request's headers (`{"headers": {…}}`, as httpbin's does);
/// `…/links` a body full of absolute URLs (its own, another host's with its own in a query parameter,
/// JSON-escaped) with Location and Link headers. `?gzip=1` gzips the body, `?chunked=1` sends it chunked. ``takeDown()``
/// makes it an outage mid-run.
package final class TestUpstream: Sendable {
    package let hits = Mutex(0)
    /// The `…/unavailable-once` paths asked already.
    private let unavailable = Mutex(Set<String>())
    /// Taken down (``takeDown()``).
    private let down = Mutex(false)
    private let channel: any Channel
    package let name: String

    private init(name: String, channel: any Channel) {
        self.name = name
        self.channel = channel
    }

    package var port: Int { channel.localAddress!.port! }
    package var url: String { "http://127.0.0.1:\(port)" }

    package static func start(name: String = "upstream") async throws -> TestUpstream {
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

    package func stop() async {
        try? await channel.close()
    }

    /// An outage: it stops accepting connections (they are refused), and the connections clients kept open end at their
    /// next request without an answer.
    package func takeDown() async {
        down.withLock { $0 = true }
        try? await channel.close()
    }

    /// Runs `body` with a started upstream and stops it afterwards, whatever happens.
    package static func with<R>(name: String = "upstream", _ body: (TestUpstream) async throws -> R) async throws -> R {
        let upstream = try await start(name: name)
        do {
            let result = try await body(upstream)
            await upstream.stop()
            return result
        } catch {
            await upstream.stop()
            throw error
        }
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
                // Taken down: the connections it kept open end without an answer, as a backend's that went away.
                if upstream()?.down.withLock({ $0 }) == true {
                    context.close(promise: nil)
                    return
                }
                let hit =
                    upstream()?.hits.withLock { hits -> Int in
                        hits += 1
                        return hits
                    } ?? 0
                let (path, query) =
                    head.uri.firstIndex(of: "?").map {
                        (String(head.uri[..<$0]), String(head.uri[head.uri.index(after: $0)...]))
                    } ?? (head.uri, "")
                let own = "http://127.0.0.1:\(context.channel.localAddress?.port ?? 0)"
                var data: Data
                var headers = HTTPHeaders()
                if path.hasSuffix("/links") {
                    let escaped = own.replacingOccurrences(of: "/", with: "\\/")
                    data = Data(
                        """
                        {"self":"\(own)/v1/items/1","next":"\(own)/v1/items?page=2","other":"https://cdn.example/img?src=\(own)/v1/x",\
                        "escaped":"\(escaped)\\/v1\\/e","text":"see \(own)/help.","lookalike":"\(own)0/v1/no"}
                        """.utf8)
                    headers.add(name: "location", value: "\(own)/v1/items/2")
                    headers.add(name: "link", value: "<\(own)/v1/items?page=3>; rel=\"next\"")
                } else if path.hasSuffix("/headers") {
                    let echoed = Dictionary(
                        head.headers.map { ($0.name, $0.value) }, uniquingKeysWith: { first, _ in first })
                    data = try! JSONSerialization.data(
                        withJSONObject: ["headers": echoed], options: [.sortedKeys, .withoutEscapingSlashes])
                } else if path.hasSuffix("/login") {
                    data = Data(#"{"token":"tok-\#(hit)-SECRET","user":"ann"}"#.utf8)
                } else {
                    let reply: [String: Any] = [
                        "upstream": name, "method": head.method.rawValue, "path": path, "query": query, "body": body,
                        "hit": hit,
                        "authorized": head.headers.first(name: "authorization") == "Bearer s3cret",
                        "acceptEncoding": head.headers.first(name: "accept-encoding") ?? "",
                    ]
                    data = try! JSONSerialization.data(
                        withJSONObject: reply, options: [.sortedKeys, .withoutEscapingSlashes])
                }
                if query.contains("gzip=1") {
                    var buffer = ByteBuffer(bytes: data)
                    data = Data(try! buffer.compress(with: .gzip()).readableBytesView)
                    headers.add(name: "content-encoding", value: "gzip")
                }
                headers.add(name: "content-type", value: "application/json")
                if query.contains("chunked=1") {
                    headers.add(name: "transfer-encoding", value: "chunked")
                } else {
                    headers.add(name: "content-length", value: "\(data.count)")
                }
                headers.add(name: "x-upstream", value: name)
                headers.add(name: "set-cookie", value: "session=secret-\(hit)")
                let firstOutage =
                    path.hasSuffix("/unavailable-once")
                    && upstream()?.unavailable.withLock { $0.insert(path).inserted } == true
                let status: HTTPResponseStatus =
                    path.hasSuffix("/missing") ? .notFound : firstOutage ? .serviceUnavailable : .ok
                context.write(
                    wrapOutboundOut(.head(HTTPResponseHead(version: head.version, status: status, headers: headers))),
                    promise: nil)
                // In two pieces, so that a chunked body really has chunks.
                let half = data.count / 2
                context.write(
                    wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(bytes: data.prefix(half))))),
                    promise: nil)
                context.write(
                    wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(bytes: data.dropFirst(half))))),
                    promise: nil)
                context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
            }
        }
    }
}
