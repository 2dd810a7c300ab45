import NIOCore
import NIOHTTP1

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A whole request as the handler collected it.
struct ReceivedRequest: Sendable {
    var method: String
    var uri: String
    var headers: [(name: String, value: String)]
    var body: [UInt8]
}

/// Collects each request (head, body up to a bound, end), lets the server answer it asynchronously and
/// writes the response with an exact Content-Length. Pipelined requests are answered concurrently and
/// written in the order they came; malformed requests get a 400
/// from NIO's error handler and the connection closes, the server keeps serving others.
final class HTTPRequestHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart
    typealias Respond = @Sendable (ReceivedRequest, Bool) async -> MockResponse

    private let maximumBodyBytes: Int
    private let respond: Respond
    private var head: HTTPRequestHead?
    private var body: [UInt8] = []
    private var tooLarge = false
    /// Pipelining: requests are numbered as they arrive and answered in that order; an answer ready
    /// before those ahead of it waits here. Past `maximumPending` unanswered requests, reading stops.
    private var received = 0
    private var answered = 0
    private var waiting: [Int: (response: MockResponse, version: HTTPVersion, keepAlive: Bool, omitBody: Bool)] = [:]
    private var closing = false
    /// A dribbled body is under way: answers after it wait for its end.
    private var dribbling = false
    private var readingPaused = false
    /// The client half-closed: it sends no more requests; the connection closes once the answers are out.
    private var inputClosed = false
    private static let maximumPending = 16

    init(maximumBodyBytes: Int, respond: @escaping Respond) {
        self.maximumBodyBytes = maximumBodyBytes
        self.respond = respond
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            self.head = head
            body.removeAll(keepingCapacity: true)
            tooLarge = false
        case .body(var chunk):
            if body.count + chunk.readableBytes > maximumBodyBytes {
                tooLarge = true
            } else if let bytes = chunk.readBytes(length: chunk.readableBytes) {
                body.append(contentsOf: bytes)
            }
        case .end:
            guard let head else { return }
            self.head = nil
            let request = ReceivedRequest(
                method: head.method.rawValue, uri: head.uri,
                headers: head.headers.map { (name: $0.name, value: $0.value) }, body: body
            )
            let keepAlive = head.isKeepAlive
            let isHead = head.method == .HEAD
            let version = head.version
            let tooLarge = self.tooLarge
            let respond = self.respond
            let number = received
            received += 1
            if received - answered >= Self.maximumPending, !readingPaused {
                readingPaused = true
                try? context.channel.syncOptions?.setOption(.autoRead, value: false)
            }
            let promise = context.eventLoop.makePromise(of: MockResponse.self)
            promise.completeWithTask { await respond(request, tooLarge) }
            let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
            promise.futureResult.whenSuccess { response in
                let (handler, context) = bound.value
                handler.waiting[number] = (response, version, keepAlive, isHead)
                handler.writeAnswersInOrder(context: context)
            }
        }
    }

    private func writeAnswersInOrder(context: ChannelHandlerContext) {
        while !dribbling, let next = waiting.removeValue(forKey: answered) {
            answered += 1
            // After a response that closes the connection, nothing more is sent.
            guard !closing else { continue }
            closing = !next.keepAlive || next.response.fault?.closesConnection == true
            dribbling = next.response.fault == .dribble
            write(
                next.response, version: next.version, keepAlive: next.keepAlive, omitBody: next.omitBody,
                context: context)
        }
        if readingPaused, received - answered < Self.maximumPending, !closing {
            readingPaused = false
            try? context.channel.syncOptions?.setOption(.autoRead, value: true)
        }
        // Every answer of a client that half-closed is out: the connection is done.
        if inputClosed, received == answered, !dribbling, !closing {
            closing = true
            context.flush()
            context.close(mode: .all, promise: nil)
        }
    }

    /// The client's half-close, and the read timeout (``MockConfiguration/readTimeout``).
    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case ChannelEvent.inputClosed = event {
            inputClosed = true
            if received == answered { context.close(promise: nil) }
            return
        }
        guard let idle = event as? IdleStateHandler.IdleStateEvent, idle == .read else {
            return context.fireUserInboundEventTriggered(event)
        }
        // A request that waits for its answer is never cut; a request the client stopped sending gets 408.
        guard received == answered, waiting.isEmpty, !dribbling else { return }
        if let head {
            self.head = nil
            closing = true
            write(
                .text(408, "orchestrate: the request was not finished within the read timeout"), version: head.version,
                keepAlive: false,
                omitBody: false, context: context)
        } else {
            context.close(promise: nil)
        }
    }

    /// A protocol error (NIO's handler already answered 400) or a broken connection: close this one.
    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }

    private func write(
        _ response: MockResponse, version: HTTPVersion, keepAlive: Bool, omitBody: Bool, context: ChannelHandlerContext
    ) {
        if let fault = response.fault {
            return self.fault(fault, response, version: version, context: context)
        }
        var headers = HTTPHeaders()
        for header in response.headers where !HopByHop.contains(header.name) {
            headers.add(name: header.name, value: header.value)
        }
        headers.replaceOrAdd(name: "content-length", value: "\(response.body.count)")
        if !keepAlive { headers.replaceOrAdd(name: "connection", value: "close") }
        let head = HTTPResponseHead(
            version: version, status: HTTPResponseStatus(statusCode: response.status), headers: headers)
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        if !omitBody && !response.body.isEmpty {
            context.write(
                wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(bytes: response.body)))),
                promise: nil)
        }
        let done = context.writeAndFlushPromise()
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: done)
        if !keepAlive {
            let channel = context.channel
            done.futureResult.whenComplete { _ in channel.close(promise: nil) }
        }
    }
}

extension HTTPRequestHandler {
    /// Breaks the answer the way the stub asks, as a real client sees it on the wire.
    private func fault(_ fault: Fault, _ response: MockResponse, version: HTTPVersion, context: ChannelHandlerContext) {
        let channel = context.channel
        switch fault {
        case .reset:
            // SO_LINGER 0: close sends RST instead of FIN.
            guard let provider = channel as? any SocketOptionProvider else { return context.close(promise: nil) }
            provider.setSoLinger(linger(l_onoff: 1, l_linger: 0)).whenComplete { _ in channel.close(promise: nil) }
        case .closeBeforeBody:
            var headers = HTTPHeaders(response.headers.filter { !HopByHop.contains($0.name) })
            headers.replaceOrAdd(name: "content-length", value: "\(max(response.body.count, 1))")
            context.writeAndFlush(
                wrapOutboundOut(
                    .head(
                        HTTPResponseHead(version: version, status: .init(statusCode: response.status), headers: headers)
                    ))
            )
            .whenComplete { _ in channel.close(promise: nil) }
        case .malformed:
            // Past the HTTP encoder, straight to the socket.
            guard let encoder = try? context.pipeline.syncOperations.context(handlerType: HTTPResponseEncoder.self)
            else {
                context.close(promise: nil)
                return
            }
            let garbage = channel.allocator.buffer(string: "HTTP/1.1 ???\r\nthis is not: http\r\n\u{0}\u{1}\r\n\r\n")
            encoder.writeAndFlush(NIOAny(garbage)).whenComplete { _ in channel.close(promise: nil) }
        case .dribble:
            var headers = HTTPHeaders(response.headers.filter { !HopByHop.contains($0.name) })
            headers.replaceOrAdd(name: "content-length", value: "\(response.body.count)")
            context.writeAndFlush(
                wrapOutboundOut(
                    .head(
                        HTTPResponseHead(version: version, status: .init(statusCode: response.status), headers: headers)
                    )), promise: nil
            )
            let pieces = 10
            let size = max(1, (response.body.count + pieces - 1) / pieces)
            let chunks = stride(from: 0, to: response.body.count, by: size).map {
                Array(response.body[$0..<min($0 + size, response.body.count)])
            }
            let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
            @Sendable func send(_ index: Int) {
                let (handler, context) = bound.value
                guard index < chunks.count else {
                    context.writeAndFlush(handler.wrapOutboundOut(.end(nil)), promise: nil)
                    handler.dribbling = false
                    handler.writeAnswersInOrder(context: context)
                    return
                }
                context.writeAndFlush(
                    handler.wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(bytes: chunks[index])))),
                    promise: nil)
                context.eventLoop.scheduleTask(in: .milliseconds(100)) { send(index + 1) }
            }
            context.eventLoop.scheduleTask(in: .milliseconds(100)) { send(0) }
        }
    }
}

private extension ChannelHandlerContext {
    func writeAndFlushPromise() -> EventLoopPromise<Void> { eventLoop.makePromise() }
}
