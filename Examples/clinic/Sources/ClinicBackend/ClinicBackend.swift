import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix

/// The clinic's backend, in the spirit of the apps UI-test teams struggle with: content that changes
/// (the chat bot's answer is "OK" or, with CLINIC_CHAT_ANSWER=SURE, "SURE"), slots relative to the real
/// clock, registration that needs a fresh e-mail address, a news feed that fails now and then with a 500,
/// and a chat bot that takes its time.
///
///     clinic-backend [--port 8642]    prints "listening on PORT", logs one line per request
@main
struct ClinicBackend {
    static func main() async throws {
        let arguments = CommandLine.arguments
        let port =
            arguments.firstIndex(of: "--port").flatMap {
                arguments.indices.contains($0 + 1) ? Int(arguments[$0 + 1]) : nil
            } ?? 8642
        let state = BackendState(chatAnswer: ProcessInfo.processInfo.environment["CLINIC_CHAT_ANSWER"] ?? "OK")
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.backlog, value: 64)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline()
                    try channel.pipeline.syncOperations.addHandler(RequestHandler(state: state))
                }
            }
            .bind(host: "127.0.0.1", port: port).get()
        say("clinic-backend listening on \(channel.localAddress?.port ?? port)")
        try await channel.closeFuture.get()
    }
}

/// One line on stdout, unbuffered (a test or `make demo` reads it while the backend runs).
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

/// What the backend remembers: registered addresses, which clients already saw the news fail.
final class BackendState: Sendable {
    let chatAnswer: String
    private let memory = NIOLockedValueBox(Memory())

    struct Memory {
        var users: [String: Int] = [:]
        var newsRequests: [String: Int] = [:]
        var appointments = 0
    }

    init(chatAnswer: String) {
        self.chatAnswer = chatAnswer
    }

    func answer(
        _ method: HTTPMethod, _ path: String, query: [String: String], headers: HTTPHeaders, body: [String: Any]
    ) -> (HTTPResponseStatus, Any, delay: Int64) {
        switch (method, path) {
        case (.GET, "/health"):
            return (.ok, ["status": "ok"], 0)
        case (.GET, "/v1/news"):
            // Every other new client's first request fails: the app has to retry.
            let client = headers.first(name: "x-client-id") ?? "anonymous"
            let fails = memory.withLockedValue { memory -> Bool in
                memory.newsRequests[client, default: 0] += 1
                guard memory.newsRequests[client] == 1 else { return false }
                return memory.newsRequests.count % 2 == 0
            }
            if fails { return (.internalServerError, ["error": "the news service is temporarily unavailable"], 0) }
            return (
                .ok,
                [
                    "headlines": [
                        "Flu vaccinations have started", "New opening hours on Saturdays", "Dr. Okafor joins the team",
                    ]
                ], 0
            )
        case (.POST, "/v1/chat/messages"):
            let text = (body["text"] as? String ?? "").lowercased()
            if text.contains("appointment") {
                return (
                    .ok, ["reply": "Shall I book you in?", "options": [["label": chatAnswer], ["label": "Not now"]]],
                    800
                )
            }
            return (
                .ok,
                [
                    "reply": "Hello! How can I help?",
                    "options": [["label": "Book an appointment"], ["label": "Opening hours"]],
                ], 800
            )
        case (.GET, "/v1/slots"):
            // Tomorrow and the day after, at fixed hours, from the real clock.
            var calendar = Calendar(identifier: .gregorian)
            calendar.timeZone = TimeZone(identifier: "UTC")!
            let today = calendar.startOfDay(for: Date())
            var slots: [String] = []
            for day in 1...2 {
                for (hour, minute) in [(9, 0), (10, 30), (14, 0)] {
                    let date = calendar.date(byAdding: DateComponents(day: day, hour: hour, minute: minute), to: today)!
                    slots.append(date.formatted(.iso8601))
                }
            }
            return (.ok, ["slots": slots], 0)
        case (.POST, "/v1/appointments"):
            guard let slot = body["slot"] as? String, let date = try? Date(slot, strategy: .iso8601) else {
                return (.badRequest, ["error": "slot must be an ISO 8601 time"], 0)
            }
            guard date > Date() else { return (.unprocessableEntity, ["error": "that slot is in the past"], 0) }
            let number = memory.withLockedValue { memory -> Int in
                memory.appointments += 1
                return memory.appointments
            }
            return (.created, ["id": number, "slot": slot], 0)
        case (.POST, "/v1/users"):
            guard let email = body["email"] as? String, email.contains("@"), body["password"] is String else {
                return (.badRequest, ["error": "email and password are required"], 0)
            }
            let id = memory.withLockedValue { memory -> Int? in
                guard memory.users[email] == nil else { return nil }
                memory.users[email] = memory.users.count + 1
                return memory.users[email]
            }
            guard let id else { return (.conflict, ["error": "This address is already registered"], 0) }
            return (.created, ["id": id, "email": email, "token": "tok-\(UUID().uuidString)"], 0)
        default:
            return (.notFound, ["error": "no such endpoint: \(method.rawValue) \(path)"], 0)
        }
    }
}

final class RequestHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    let state: BackendState
    private var head: HTTPRequestHead?
    private var body = ByteBuffer()

    init(state: BackendState) {
        self.state = state
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            self.head = head
            body.clear()
        case .body(var buffer):
            body.writeBuffer(&buffer)
        case .end:
            guard let head else { return }
            let components = URLComponents(string: head.uri)
            let query = Dictionary(
                (components?.queryItems ?? []).map { ($0.name, $0.value ?? "") }, uniquingKeysWith: { $1 })
            let json = (try? JSONSerialization.jsonObject(with: Data(body.readableBytesView))) as? [String: Any] ?? [:]
            let (status, reply, delay) = state.answer(
                head.method, components?.path ?? head.uri, query: query, headers: head.headers, body: json)
            let data =
                (try? JSONSerialization.data(withJSONObject: reply, options: [.sortedKeys, .withoutEscapingSlashes]))
                ?? Data()
            say("\(head.method.rawValue) \(head.uri) \(status.code)")
            var headers = HTTPHeaders()
            headers.add(name: "content-type", value: "application/json")
            headers.add(name: "content-length", value: "\(data.count)")
            let keepAlive = head.isKeepAlive
            if !keepAlive { headers.add(name: "connection", value: "close") }
            let response = HTTPResponseHead(version: head.version, status: status, headers: headers)
            let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
            context.eventLoop.scheduleTask(in: .milliseconds(delay)) {
                let (handler, context) = loopBound.value
                context.write(handler.wrapOutboundOut(.head(response)), promise: nil)
                context.write(
                    handler.wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(bytes: data)))),
                    promise: nil)
                context.writeAndFlush(handler.wrapOutboundOut(.end(nil)), promise: nil)
                if !keepAlive { context.close(promise: nil) }
            }
        }
    }
}
