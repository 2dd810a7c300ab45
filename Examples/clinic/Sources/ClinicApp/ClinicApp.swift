import Foundation
import OrchestrateKit

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The clinic's app as a UI test sees it: screens with text on them. It reaches its backend only through
/// OrchestrateKit's URLs (the mock server under orchestrate, the real backend otherwise), takes "now" from
/// the frozen clock and makes its random e-mail addresses recordable, so that a replay asks exactly what
/// the recording asked.
public actor ClinicApp {
    /// Where the real backend lives; under orchestrate `mock.hosts` maps this host to an upstream.
    public static let backend = "https://api.clinic.test"

    private let environment: OrchestrateEnvironment
    private let control: OrchestrateControl
    private let session: URLSession
    private let clientID = UUID().uuidString

    public private(set) var headlines: [String] = []
    public private(set) var botReply = ""
    public private(set) var answerOptions: [String] = []
    public private(set) var slots: [Date] = []
    /// The last banner the app showed (a confirmation or an error).
    public private(set) var banner = ""
    public private(set) var signedInAs: String?
    public private(set) var lastAddress: String?

    public init(environment: OrchestrateEnvironment = .current) {
        self.environment = environment
        self.control = OrchestrateControl(environment: environment)
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = 15
        self.session = URLSession(configuration: configuration)
    }

    /// The home screen: headlines, fetched again once when the backend has a hiccup (unless `retrying` is false: an
    /// app version that shows the error at once).
    public func open(retrying: Bool = true) async throws {
        var (status, reply) = try await send("GET", "/v1/news")
        if status >= 500, retrying {
            try await Task.sleep(for: .milliseconds(200))
            (status, reply) = try await send("GET", "/v1/news")
        }
        guard status == 200 else {
            throw ClinicError("the home screen shows an error (\(status)): \(reply["error"] ?? "")")
        }
        headlines = reply["headlines"] as? [String] ?? []
    }

    public func tell(_ text: String) async throws {
        let (status, reply) = try await send("POST", "/v1/chat/messages", ["text": text])
        guard status == 200 else { throw ClinicError("the chat shows an error (\(status))") }
        botReply = reply["reply"] as? String ?? ""
        answerOptions = (reply["options"] as? [[String: Any]] ?? []).compactMap { $0["label"] as? String }
    }

    public func showSlots() async throws {
        let (status, reply) = try await send("GET", "/v1/slots")
        guard status == 200 else { throw ClinicError("the slots screen shows an error (\(status))") }
        slots = (reply["slots"] as? [String] ?? []).compactMap { try? Date($0, strategy: .iso8601) }
    }

    public func bookFirstSlot() async throws {
        if slots.isEmpty { try await showSlots() }
        guard let slot = slots.first else { throw ClinicError("there is no free slot to book") }
        let (status, reply) = try await send("POST", "/v1/appointments", ["slot": slot.formatted(.iso8601)])
        banner = status == 201 ? "Booked for \(describe(slot))" : (reply["error"] as? String ?? "error \(status)")
    }

    /// Registers a fresh address (recorded, so that a replay registers the same one), or `address`.
    public func register(address: String? = nil) async throws {
        let email: String
        if let address {
            email = address
        } else {
            email = try await control.recordedRandom("email") {
                "patient-\(UUID().uuidString.prefix(8).lowercased())@example.test"
            }
        }
        lastAddress = email
        let (status, reply) = try await send(
            "POST", "/v1/users", ["email": email, "password": "correct horse battery staple"])
        if status == 201 {
            signedInAs = reply["email"] as? String
            banner = "Welcome!"
        } else {
            banner = reply["error"] as? String ?? "error \(status)"
        }
    }

    /// How the app shows a time: "tomorrow at 09:00", "today at …", else "on 2026-11-25 at 09:00" —
    /// relative to the (frozen) clock.
    public func describe(_ date: Date) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let days =
            calendar.dateComponents(
                [.day], from: calendar.startOfDay(for: environment.now), to: calendar.startOfDay(for: date)
            ).day ?? 0
        let time = String(
            format: "%02d:%02d", calendar.component(.hour, from: date), calendar.component(.minute, from: date))
        switch days {
        case 0: return "today at \(time)"
        case 1: return "tomorrow at \(time)"
        default:
            let day = calendar.dateComponents([.year, .month, .day], from: date)
            return String(format: "on %04d-%02d-%02d at %@", day.year!, day.month!, day.day!, time)
        }
    }

    private func send(
        _ method: String, _ path: String, _ body: [String: Any]? = nil
    ) async throws -> (Int, [String: Any]) {
        var request = URLRequest(url: environment.url(for: URL(string: Self.backend + path)!))
        request.httpMethod = method
        request.setValue(clientID, forHTTPHeaderField: "X-Client-Id")
        if let body {
            request.httpBody = try JSONSerialization.data(withJSONObject: body, options: [.sortedKeys])
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        let (data, response) = try await session.data(for: request)
        let reply = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] ?? [:]
        return ((response as? HTTPURLResponse)?.statusCode ?? 0, reply)
    }
}

public struct ClinicError: Error, CustomStringConvertible {
    public var description: String

    public init(_ description: String) {
        self.description = description
    }
}
