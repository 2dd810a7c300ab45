import NIOCore

/// Answers a connection whose first request line is HTTP/0.9 (`GET /path`, no version) with a 400 and closes it: NIO's
/// HTTP/1 decoder would wait for a version that never comes. Looks at the first line only, then leaves the pipeline.
final class HTTP09Refusal: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    private var seen: ByteBuffer?
    /// A first line longer than this is left to the HTTP decoder (which refuses what is too long).
    private static let longestFirstLine = 8192

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var bytes = unwrapInboundIn(data)
        if var earlier = seen {
            earlier.writeBuffer(&bytes)
            bytes = earlier
        }
        guard let end = bytes.readableBytesView.firstIndex(of: UInt8(ascii: "\n")) else {
            guard bytes.readableBytes < Self.longestFirstLine else { return pass(bytes, context: context) }
            seen = bytes
            return
        }
        let line = bytes.readableBytesView[bytes.readerIndex..<end]
        let http1 =
            line.split(separator: UInt8(ascii: " ")).last.map { Array($0.prefix(5)) == Array("HTTP/".utf8) } ?? false
        guard !http1 else { return pass(bytes, context: context) }
        let message = "orchestrate: HTTP/0.9 requests are not served; send HTTP/1.1\n"
        let answer =
            "HTTP/1.1 400 Bad Request\r\ncontent-type: text/plain; charset=utf-8\r\ncontent-length: \(message.utf8.count)\r\nconnection: close\r\n\r\n\(message)"
        let channel = context.channel
        context.writeAndFlush(NIOAny(channel.allocator.buffer(string: answer))).whenComplete { _ in
            channel.close(promise: nil)
        }
        seen = nil
    }

    /// What came so far goes to the HTTP decoder, and this handler leaves.
    private func pass(_ bytes: ByteBuffer, context: ChannelHandlerContext) {
        seen = nil
        context.fireChannelRead(wrapInboundOut(bytes))
        context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        seen = nil
        context.fireChannelInactive()
    }
}
