import NIOCore
import NIOHTTP1
import NIOPosix

/// Serves ``RunMetrics`` at `GET /metrics` for Prometheus (`--metrics-port`), on every address of the host by default, so
/// that a scraper elsewhere (a Kubernetes pod's, a CI's) reaches it.
package final class MetricsServer: Sendable {
    private let channel: any Channel
    /// The port it listens on (the one asked for, or the one the system chose for 0).
    package let port: Int

    private init(channel: any Channel, port: Int) {
        self.channel = channel
        self.port = port
    }

    package static func start(metrics: RunMetrics, host: String = "0.0.0.0", port: Int) async throws -> MetricsServer {
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline()
                    try channel.pipeline.syncOperations.addHandler(MetricsHandler(metrics: metrics))
                }
            }
            .bind(host: host, port: port).get()
        return MetricsServer(channel: channel, port: channel.localAddress?.port ?? port)
    }

    package func stop() async {
        try? await channel.close()
    }
}

/// Answers one request at a time on a connection: the exposition for `GET /metrics`, 404 for anything else.
private final class MetricsHandler: ChannelInboundHandler, Sendable {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    let metrics: RunMetrics

    init(metrics: RunMetrics) {
        self.metrics = metrics
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard case .head(let request) = unwrapInboundIn(data) else { return }
        let found = request.method == .GET && request.uri.split(separator: "?").first == "/metrics"
        let body = found ? metrics.render() : "not found: metrics are at /metrics\n"
        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: found ? "text/plain; version=0.0.4; charset=utf-8" : "text/plain; charset=utf-8")
        headers.add(name: "Content-Length", value: "\(body.utf8.count)")
        if !request.isKeepAlive { headers.add(name: "Connection", value: "close") }
        let head = HTTPResponseHead(version: request.version, status: found ? .ok : .notFound, headers: headers)
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        context.write(wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(string: body)))), promise: nil)
        let keepAlive = request.isKeepAlive
        context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { [context = NIOLoopBound(context, eventLoop: context.eventLoop)] _ in
            if !keepAlive { context.value.close(promise: nil) }
        }
    }
}
