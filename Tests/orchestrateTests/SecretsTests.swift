import Foundation
import OrchestrateTesting
import Synchronization
import Testing

@Suite("Secrets are scrubbed by value", .timeLimit(.minutes(2)))
struct SecretsTests {
    /// Each secret, and how it reaches the run: a `suite.env` value whose name looks secret, one named in `redact.env`,
    /// one orchestrate inherits from its own environment, an Authorization header that the upstream echoes back, and a
    /// password in a JSON body that does not parse (echoed back too).
    static let secrets = [
        "tok-ENV-SECRET-1", "pin-SECRET-42", "deploykey-SECRET-9", "hdr-SECRET-7", "SECRETBAD",
    ]

    static let scenario = #"""
        [ "$API_TOKEN" = tok-ENV-SECRET-1 ] && [ "$SHOP_PIN" = pin-SECRET-42 ] && [ "$CI_DEPLOY_KEY" = deploykey-SECRET-9 ] && touch env-ok
        curl -sf -H "Authorization: Bearer hdr-SECRET-7" "$ORCHESTRATE_MOCK_URL/api.test/headers"
        curl -sf -H 'content-type: application/json' --data-binary '{"password":"SECRETBAD",' "$ORCHESTRATE_MOCK_URL/api.test/v1/echo"
        curl -sf "$ORCHESTRATE_MOCK_URL/api.test/v1/items?key=$API_TOKEN&pin=$SHOP_PIN"
        curl -sf -X POST --data-binary "{\"note\": \"$CI_DEPLOY_KEY\"}" "$ORCHESTRATE_MOCK_URL/api.test/v1/notes"
        curl -sf -X POST --data-binary "{\"name\": \"log in\", \"status\": \"failed\", \"error\": \"refused $API_TOKEN\"}" \
            "$ORCHESTRATE_CONTROL_URL/steps" > /dev/null
        echo "plain=$PLAIN token=$API_TOKEN pin=$SHOP_PIN deploy=$CI_DEPLOY_KEY"
        echo "token=$API_TOKEN header=hdr-SECRET-7 bad=SECRETBAD" >&2
        exit 1
        """#

    @Test(
        "a recorded, failing run with secrets in its environment, headers, bodies and output stores none of them: not in the database, the cassette, the reports, the kept output or the console"
    )
    func nowhere() async throws {
        try await TestUpstream.with { upstream in
            try await TemporaryDirectory.with { directory in
                try directory.write("scenario.sh", Self.scenario)
                try directory.write(
                    "orchestrate.yml",
                    """
                    workers: 1
                    redact:
                      env: [SHOP_PIN]
                    suite:
                      env: { API_TOKEN: tok-ENV-SECRET-1, SHOP_PIN: pin-SECRET-42, PLAIN: visible-value }
                      scenarios:
                        - { id: checkout, command: "sh ./scenario.sh" }
                    mock:
                      mode: record
                      hosts: { api.test: "\(upstream.url)" }
                      redact: { json: ["$.password"] }
                    """)
                let database = try await TestPostgres.shared.makeDatabaseURL()
                var cli = OrchestrateCLI(directory: directory.path, database: database)
                cli.environment["CI_DEPLOY_KEY"] = "deploykey-SECRET-9"
                let run = try await cli.run(["run", "--progress", "lines", "--junit", "junit.xml"])
                #expect(run.exitCode == 1, "\(run.stdout)\(run.stderr)")
                #expect(
                    FileManager.default.fileExists(atPath: directory.file("env-ok")), "the scenario got the real values"
                )
                #expect(upstream.hits.withLock { $0 } == 4, "every request reached the upstream with its secrets")

                // Everything orchestrate wrote in the project: cassette, reports (JUnit, HTML, HAR), kept output,
                // spool.
                var files: [String: String] = [:]
                let enumerator = try #require(FileManager.default.enumerator(atPath: directory.path))
                while let name = enumerator.nextObject() as? String {
                    guard !["orchestrate.yml", "scenario.sh"].contains(name),
                        let data = FileManager.default.contents(atPath: directory.file(name))
                    else { continue }
                    files[name] = String(decoding: data, as: UTF8.self)
                }
                let stored = try await Self.everyRow(database)
                let stdoutLog = files.first { $0.key.hasSuffix("stdout.log") }?.value ?? ""
                #expect(
                    stdoutLog.contains("plain=visible-value token=[REDACTED] pin=[REDACTED] deploy=[REDACTED]"),
                    "\(stdoutLog)")
                #expect(
                    files.contains { $0.key.hasSuffix(".har") && $0.value.contains(#"{\"password\":\"[REDACTED]\","#) },
                    "the cassette holds the unparseable body with its password replaced: \(files.filter { $0.key.hasSuffix(".har") })"
                )
                #expect(stored.contains("refused [REDACTED]"), "the step's error is stored, scrubbed")
                for secret in Self.secrets {
                    let hex = secret.utf8.map { String(format: "%02x", $0) }.joined()
                    #expect(!stored.contains(secret) && !stored.contains(hex), "the database holds \(secret)")
                    for (name, text) in files { #expect(!text.contains(secret), "\(name) holds \(secret)") }
                    #expect(!run.stdout.contains(secret) && !run.stderr.contains(secret), "the console shows \(secret)")
                }
            }
        }
    }

    /// Every row of every table of the database, as text (bytea as hex).
    static func everyRow(_ url: String) async throws -> String {
        let tables = try await queryRows(
            url, "SELECT tablename::text FROM pg_tables WHERE schemaname = current_schema()", as: String.self)
        #expect(tables.count > 5)
        var text = ""
        for table in tables {
            let rows = try await queryRows(
                url, #"SELECT coalesce(string_agg(t::text, E'\n'), '') FROM "\#(table)" t"#, as: String.self)
            text += rows.joined(separator: "\n")
        }
        return text
    }
}
