import Foundation
import OrchestrateKit
import Testing

@Suite struct OrchestrateEnvironmentTests {
    let contract = [
        "ORCHESTRATE_MOCK_URL": "http://127.0.0.1:41234", "ORCHESTRATE_MODE": "replay", "ORCHESTRATE_ATTEMPT": "2",
        "ORCHESTRATE_SEED": "12345", "ORCHESTRATE_NOW": "2026-03-01T08:30:00Z", "ORCHESTRATE_SCENARIO_ID": "login",
        "PATH": "/usr/bin",
    ]

    @Test("a real backend URL becomes the mock form, host first, query and port kept")
    func rewritesURLs() throws {
        let environment = OrchestrateEnvironment(contract)
        func mock(_ url: String) -> String { environment.url(for: URL(string: url)!).absoluteString }
        #expect(
            mock("https://api.clinic.test/v1/slots?from=2026-03-02&n=3")
                == "http://127.0.0.1:41234/api.clinic.test/v1/slots?from=2026-03-02&n=3")
        #expect(
            mock("https://API.Clinic.test:8443/a%20b#top") == "http://127.0.0.1:41234/api.clinic.test:8443/a%20b#top")
        #expect(mock("http://chat.test") == "http://127.0.0.1:41234/chat.test/")
        #expect(mock("file:///tmp/x") == "file:///tmp/x")
        // Outside a run the app talks to the real backend.
        let outside = OrchestrateEnvironment(["PATH": "/usr/bin"])
        #expect(
            outside.url(for: URL(string: "https://api.clinic.test/v1")!).absoluteString == "https://api.clinic.test/v1")
        #expect(!outside.isOrchestrated)
    }

    @Test(
        "the contract is read from ORCHESTRATE_ and TEST_RUNNER_ORCHESTRATE_ variables; the launch environment carries it"
    )
    func readsTheContract() throws {
        let environment = OrchestrateEnvironment(contract)
        #expect(environment.isOrchestrated)
        #expect(environment.mode == .replay)
        #expect(environment.attempt == 2)
        #expect(environment.seed == 12345)
        #expect(environment.controlURL?.absoluteString == "http://127.0.0.1:41234/__orchestrate")
        #expect(environment.frozenNow == Date(timeIntervalSince1970: 1_772_353_800))
        #expect(environment.now == environment.frozenNow)
        #expect(environment.launchEnvironment["PATH"] == nil)
        #expect(environment.launchEnvironment["ORCHESTRATE_SCENARIO_ID"] == "login")

        // What xcodebuild hands a UI test runner; the app gets the plain names back through launchEnvironment.
        let forwarded = OrchestrateEnvironment(
            Dictionary(uniqueKeysWithValues: contract.map { ("TEST_RUNNER_\($0.key)", $0.value) }))
        #expect(forwarded == environment)
        #expect(OrchestrateEnvironment(forwarded.launchEnvironment) == environment)
        let both = OrchestrateEnvironment(["TEST_RUNNER_ORCHESTRATE_MODE": "record", "ORCHESTRATE_MODE": "live"])
        #expect(both.mode == .live)
    }
}
