import Foundation

/// The scenario process environment an orchestrate worker sets for every attempt (the env contract), read from
/// the `ORCHESTRATE_` variables or their `TEST_RUNNER_ORCHESTRATE_` forms (xcodebuild forwards those to the
/// test runner). Outside a run every value is `nil` and URLs are left as they are, so the same test code
/// also runs against the real backend.
///
/// ```swift
/// let environment = OrchestrateEnvironment.current
/// let url = environment.url(for: URL(string: "https://api.clinic.test/v1/slots")!)
/// // under orchestrate: http://127.0.0.1:PORT/api.clinic.test/v1/slots
/// app.launchEnvironment = environment.launchEnvironment   // XCUIApplication, on iOS
/// ```
public struct OrchestrateEnvironment: Sendable, Equatable {
    /// The contract's variables that are set, by their `ORCHESTRATE_` name.
    public let variables: [String: String]

    /// Reads the contract from `environment` (the process's own by default).
    public init(_ environment: [String: String] = ProcessInfo.processInfo.environment) {
        var variables: [String: String] = [:]
        for (key, value) in environment where key.hasPrefix(Variable.testRunnerPrefix + Self.prefix) {
            variables[String(key.dropFirst(Variable.testRunnerPrefix.count))] = value
        }
        // The plain names win: they are what the worker set for this very process.
        for (key, value) in environment where key.hasPrefix(Self.prefix) { variables[key] = value }
        self.variables = variables
    }

    /// What every contract variable's name starts with.
    static let prefix = "ORCHESTRATE_"

    /// The value of a contract variable, when it is set.
    public subscript(_ variable: Variable) -> String? { variables[variable.rawValue] }

    /// The environment of this process.
    public static var current: OrchestrateEnvironment { OrchestrateEnvironment() }

    /// Whether the process runs under orchestrate (a mock server is there to talk to).
    public var isOrchestrated: Bool { mockURL != nil }

    /// The worker's mock server, `http://127.0.0.1:PORT`.
    public var mockURL: URL? { self[.mockURL].flatMap(URL.init(string:)) }
    /// The mock server's control API, `…/__orchestrate`.
    public var controlURL: URL? {
        self[.controlURL].flatMap(URL.init(string:)) ?? mockURL?.appendingPathComponent("__orchestrate")
    }
    /// How the mock server answers this attempt.
    public var mode: Mode? { self[.mode].flatMap(Mode.init(rawValue:)) }
    public var runID: String? { self[.runID] }
    public var scenarioID: String? { self[.scenarioID] }
    /// 1 for the first attempt, 2 for its first retry…
    public var attempt: Int? { self[.attempt].flatMap { Int($0) } }
    public var worker: Int? { self[.worker].flatMap { Int($0) } }
    /// The scenario's random seed: the same in every run, and in replay the one its recording was made with.
    public var seed: UInt64? { self[.seed].flatMap { UInt64($0) } }
    /// The frozen clock: when the run started, and in replay when the recording was made.
    public var frozenNow: Date? {
        guard let text = self[.now] else { return nil }
        return (try? Date(text, strategy: .iso8601))
            ?? (try? Date(text, strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: true)))
    }
    /// The attempt's private folder; Cucumber reports written here become the attempt's steps.
    public var artifactsDirectory: URL? { self[.artifactsDirectory].map { URL(fileURLWithPath: $0) } }
    /// The Cucumber Messages pickle of a `suite.gherkin` scenario, as JSON.
    public var pickleJSON: String? { self[.pickle] }

    /// The frozen clock when there is one, else the real time: what "today" and "tomorrow" of a test
    /// should be computed from, so that a replay asks for the dates its recording asked for.
    public var now: Date { frozenNow ?? Date() }

    /// The mock form of a real backend URL: `https://api.example.com/v1/x?y=1` becomes
    /// `http://127.0.0.1:PORT/api.example.com/v1/x?y=1` (the original host is the first path component;
    /// an explicit port stays with it, as `api.example.com:8443`). Outside a run the URL comes back as it is.
    /// Only http and https URLs with a host are rewritten.
    public func url(for url: URL) -> URL {
        guard let mockURL, let components = URLComponents(url: url, resolvingAgainstBaseURL: false),
            ["http", "https"].contains(components.scheme?.lowercased() ?? ""), let host = components.host,
            !host.isEmpty,
            var mock = URLComponents(url: mockURL, resolvingAgainstBaseURL: false)
        else { return url }
        let authority = host.lowercased() + (components.port.map { ":\($0)" } ?? "")
        let path = components.percentEncodedPath
        mock.percentEncodedPath = "/" + authority + (path.isEmpty ? "/" : (path.hasPrefix("/") ? path : "/" + path))
        mock.percentEncodedQuery = components.percentEncodedQuery
        mock.percentEncodedFragment = components.percentEncodedFragment
        return mock.url ?? url
    }

    /// What to hand to the app under test (`XCUIApplication.launchEnvironment`, or a child process's
    /// environment) so that it finds the mock server, clock and seed the same way: every contract variable,
    /// by its plain `ORCHESTRATE_` name.
    public var launchEnvironment: [String: String] { variables }

    /// The mock server's modes.
    public enum Mode: String, Sendable, CaseIterable {
        case replay, record, live, mock, hybrid
    }
}
