import NIOCore
import NIOHTTP1
import NIOPosix
import Synchronization

/// Serves ``RunMetrics`` at `GET /metrics` for Prometheus (`--metrics-port`), on loopback unless an address is given
/// (`--metrics-address 0.0.0.0` for a scraper elsewhere: a Kubernetes pod's, a CI's), as Prometheus exporters commonly
/// do.
///
/// Its connections are bounded, so that clients that connect and say nothing (or dribble, or never read) cannot take
/// the process's descriptors or memory or keep a scrape out: one answer per connection; a connection that has not sent
/// its request within ``requestTimeout`` of opening, or taken its answer as long after, is closed; and past
/// ``maximumConnections`` the oldest connection is closed to let a new one in (a scrape sends its request at once; the
/// oldest is the idlest).
package final class MetricsServer: Sendable {
    private let channel: any Channel
    /// The port it listens on (the one asked for, or the one the system chose for 0).
    package let port: Int

    /// Connections open at once at most.
    package static let maximumConnections = 64
    /// How long a connection may take to send a whole request.
    package static let requestTimeout = TimeAmount.seconds(10)

    private init(channel: any Channel, port: Int) {
        self.channel = channel
        self.port = port
    }

    package static func start(metrics: RunMetrics, host: String = "127.0.0.1", port: Int) async throws -> MetricsServer
    {
        let connections = Connections()
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                connections.admit(channel)
                return channel.eventLoop.makeCompletedFuture {
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

    /// The open connections, oldest first.
    private final class Connections: Sendable {
        private let open = Mutex<[ObjectIdentifier: (order: Int, channel: any Channel)]>([:])
        private let counter = Atomic<Int>(0)

        func admit(_ channel: any Channel) {
            let id = ObjectIdentifier(channel)
            let order = counter.add(1, ordering: .relaxed).newValue
            let evicted = open.withLock { open -> (any Channel)? in
                open[id] = (order, channel)
                guard open.count > MetricsServer.maximumConnections,
                    let oldest = open.min(by: { $0.value.order < $1.value.order })
                else {
                    return nil
                }
                open[oldest.key] = nil
                return oldest.value.channel
            }
            evicted?.close(promise: nil)
            channel.closeFuture.whenComplete { [weak self] _ in _ = self?.open.withLock { $0.removeValue(forKey: id) } }
        }
    }
}

/// Answers one request per connection: the exposition for `GET /metrics`, 404 for anything else. A connection that has
/// not sent its request within ``MetricsServer/requestTimeout`` of opening, or not taken its answer as long after, is
/// closed.
private final class MetricsHandler: ChannelDuplexHandler, @unchecked Sendable {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundIn = Never
    typealias OutboundOut = HTTPServerResponsePart

    let metrics: RunMetrics
    /// Loop-bound: read and changed on the channel's event loop only (hence `@unchecked Sendable`).
    private var deadline: Scheduled<Void>?

    init(metrics: RunMetrics) {
        self.metrics = metrics
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { armDeadline(context: context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        armDeadline(context: context)
        context.fireChannelActive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        deadline?.cancel()
    }

    private func armDeadline(context: ChannelHandlerContext) {
        deadline?.cancel()
        let channel = context.channel
        deadline = context.eventLoop.scheduleTask(in: MetricsServer.requestTimeout) { channel.close(promise: nil) }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard case .head(let request) = unwrapInboundIn(data) else { return }
        deadline?.cancel()
        let found = request.method == .GET && request.uri.split(separator: "?").first == "/metrics"
        let body = found ? metrics.render() : "not found: metrics are at /metrics\n"
        var headers = HTTPHeaders()
        headers.add(
            name: "Content-Type",
            value: found ? "text/plain; version=0.0.4; charset=utf-8" : "text/plain; charset=utf-8")
        headers.add(name: "Content-Length", value: "\(body.utf8.count)")
        // One answer per connection: a client that sends request after request without reading the answers would make
        // them pile up in memory. A scraper connects again for its next scrape.
        headers.add(name: "Connection", value: "close")
        let head = HTTPResponseHead(version: request.version, status: found ? .ok : .notFound, headers: headers)
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        context.write(wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(string: body)))), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete {
            [context = NIOLoopBound(context, eventLoop: context.eventLoop)] _ in
            context.value.close(promise: nil)
        }
        // However long the client takes to read it, the connection ends within the same time.
        armDeadline(context: context)
    }
}
