import Foundation
import Logging
import OrchestrateTesting
import PostgresNIO
import Store
import Testing

/// Dashboards/grafana without Grafana (it cannot run here): every panel's and every variable's query, with the
/// variables filled and Grafana's PostgreSQL macros expanded as Grafana expands them, runs read-only on a history that
/// real runs made, and returns what its panel's format needs.
@Suite("Grafana dashboards", .timeLimit(.minutes(3)))
struct DashboardTests {
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Dashboards/grafana").path

    /// Every dashboard, as JSON, by file name.
    static func dashboards() throws -> [(String, [String: Any])] {
        try FileManager.default.contentsOfDirectory(atPath: "\(folder)/dashboards").filter { $0.hasSuffix(".json") }
            .sorted().map { name in
                let data = try Data(contentsOf: URL(fileURLWithPath: "\(folder)/dashboards/\(name)"))
                return (name, try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any]))
            }
    }

    @Test(
        "each dashboard has the structure Grafana needs: uid, the data source by uid, project and branch variables, panels on the grid"
    )
    func structure() throws {
        let dashboards = try Self.dashboards()
        #expect(dashboards.map(\.0) == ["flakiness.json", "network.json", "suite-health.json", "time.json"])
        var uids = Set<String>()
        for (name, dashboard) in dashboards {
            let uid = try #require(dashboard["uid"] as? String, "\(name)")
            #expect(uids.insert(uid).inserted && uid.count <= 40, "\(name): uid \(uid)")
            #expect(dashboard["title"] is String && dashboard["schemaVersion"] is Int, "\(name)")
            let variables = try #require(
                (dashboard["templating"] as? [String: Any])?["list"] as? [[String: Any]], "\(name)")
            #expect(variables.compactMap { $0["name"] as? String } == ["project", "branch"], "\(name)")
            let panels = try #require(dashboard["panels"] as? [[String: Any]], "\(name)")
            #expect(Set(panels.compactMap { $0["id"] as? Int }).count == panels.count, "\(name): panel ids are unique")
            for panel in panels {
                let grid = try #require(panel["gridPos"] as? [String: Int], "\(name): \(panel["title"] ?? "")")
                #expect(
                    grid["w"].map { 1...24 ~= $0 } == true && grid["h"] != nil && grid["x"] != nil && grid["y"] != nil)
                #expect(
                    (panel["datasource"] as? [String: String])?["uid"] == "orchestrate",
                    "\(name): \(panel["title"] ?? "")")
                let targets = try #require(panel["targets"] as? [[String: Any]])
                #expect(
                    !targets.isEmpty
                        && targets.allSatisfy {
                            ["time_series", "table"].contains($0["format"] as? String) && $0["refId"] != nil
                        })
            }
        }
        let datasource = try String(
            contentsOfFile: "\(Self.folder)/provisioning/datasources/orchestrate.yaml", encoding: .utf8)
        #expect(datasource.contains("uid: orchestrate") && datasource.contains("type: grafana-postgresql-datasource"))
    }

    /// Loads each dashboard into grafana-foundation-sdk's `Dashboard` model (PyPI: the types Grafana's schema
    /// generates) with its panel plugins registered, writes it back, and prints every key that did not survive (one the
    /// model does not know: a misspelt field, or options the panel type does not have) and every panel type without a
    /// plugin.
    static let foundationCheck = """
        import json, sys
        from grafana_foundation_sdk.models.dashboard import Dashboard
        from grafana_foundation_sdk.cog.encoder import JSONEncoder
        from grafana_foundation_sdk.cog import plugins, runtime
        plugins.register_default_plugins()
        def lost(original, back, path):
            if isinstance(original, dict):
                if not isinstance(back, dict):
                    return [path]
                return [p for key in original for p in ([f"{path}.{key}"] if key not in back else lost(original[key], back[key], f"{path}.{key}"))]
            if isinstance(original, list):
                if not isinstance(back, list) or len(back) != len(original):
                    return [path]
                return [p for i, (a, b) in enumerate(zip(original, back)) for p in lost(a, b, f"{path}[{i}]")]
            return [] if original == back else [f"{path}: {original!r} became {back!r}"]
        original = json.load(open(sys.argv[1]))
        back = json.loads(json.dumps(Dashboard.from_json(original), cls=JSONEncoder))
        for problem in lost(original, back, ""):
            print("lost", problem)
        for panel in original["panels"]:
            if runtime.panelcfg_config(panel["type"]) is None:
                print("no plugin for panel type", panel["type"])
        """

    @Test("each dashboard is what grafana-foundation-sdk's Dashboard model (PyPI) reads and writes back, key for key")
    func foundationModel() async throws {
        for (name, _) in try Self.dashboards() {
            let problems = try await Python.lines(
                script: Self.foundationCheck, arguments: ["\(Self.folder)/dashboards/\(name)"],
                hint: "grafana-foundation-sdk (make test installs it)")
            #expect(problems.isEmpty, "\(name): \(problems)")
        }
    }

    /// A branch whose name has a quote in it.
    static let otherBranch = "feature/o'neil"

    @Test(
        "every panel and variable query, its variables filled as Grafana fills them (All, one value, two), runs read-only on real history and returns what its format needs"
    )
    func queriesRun() async throws {
        let upstream = try await TestUpstream.start()
        try await TemporaryDirectory.with { directory in
            // A scenario that passes only on the body it was recorded with, added once the suite has a history: the
            // upstream's hit number changes it live, so a compare run judges it drift (a single change: recorded, then
            // failing live), with the changed field as evidence.
            let news = """
                    - id: news
                      command: >-
                        body=$(curl -sf $ORCHESTRATE_MOCK_URL/api.test/v1/news) &&
                        if [ "$ORCHESTRATE_MODE" = record ]; then echo "$body" > \(directory.file("news.expected")); fi &&
                        [ "$body" = "$(cat \(directory.file("news.expected")))" ]
                """
            func config(_ extra: String = "") -> String {
                """
                workers: 2
                retries: 1
                suite:
                  scenarios:
                    - { id: browse, command: "curl -sf $ORCHESTRATE_MOCK_URL/api.test/v1/items?page=1 > /dev/null" }
                    - { id: pay, command: "curl -sf $ORCHESTRATE_MOCK_URL/api.test/v1/pay > /dev/null; sleep 0.2" }
                    - { id: flaky, command: "test \\"$ORCHESTRATE_ATTEMPT\\" = 2" }
                    - { id: broken, command: "exit 1" }
                \(extra)
                mock:
                  mode: live
                  hosts: { api.test: "\(upstream.url)" }
                """
            }
            try directory.write("shop/orchestrate.yml", config())
            let url = try await TestPostgres.shared.makeDatabaseURL()
            var cli = OrchestrateCLI(directory: directory.file("shop"), database: url)
            cli.environment["GITHUB_REF_NAME"] = "main"
            for _ in 0..<2 { #expect(try await cli.run(["run", "--progress", "none"]).exitCode == 1) }
            #expect(try await cli.run(["quarantine", "add", "broken"]).exitCode == 0)
            try directory.write("shop/orchestrate.yml", config(news))
            #expect(try await cli.run(["run", "--mode", "record", "--progress", "none"]).exitCode == 0)
            let compare = try await cli.run(["run", "--mode", "compare", "--progress", "none"])
            #expect(compare.stdout.contains("1 drift") && compare.stdout.contains("$.hit"), "\(compare.stdout)")
            // A second branch (its name with a quote, which Grafana doubles) and a second project.
            cli.environment["GITHUB_REF_NAME"] = Self.otherBranch
            #expect([0, 1].contains(try await cli.run(["run", "--progress", "none"]).exitCode))
            try directory.write("cafe/orchestrate.yml", "suite:\n  scenarios:\n    - { id: menu, command: \"true\" }\n")
            let cafe = OrchestrateCLI(directory: directory.file("cafe"), database: url)
            #expect(try await cafe.run(["run", "--progress", "none"]).exitCode == 0)

            let differences = try await Database.with(
                try DatabaseEndpoint(url: url), logger: Logger(label: "test"), maximumConnections: 1
            ) {
                try await rollupDifferences(in: $0)
            }
            #expect(
                differences.scenarioDays == 0 && differences.endpointDays == 0,
                "the rollups agree with a full recount: \(differences)")

            let now = Date()
            let range = (from: now.addingTimeInterval(-90 * 86_400), to: now.addingTimeInterval(60))
            let ran = try await Database.with(
                try DatabaseEndpoint(url: url), logger: Logger(label: "test"), maximumConnections: 1
            ) { database in
                var ran = 0
                for (name, dashboard) in try Self.dashboards() {
                    // The variables as a user sets them: the project picked from what its query offers, then the
                    // branch from what its query offers for that project.
                    var variables = GrafanaVariable.variables(of: dashboard)
                    let definitions = (dashboard["templating"] as? [String: Any])?["list"] as? [[String: Any]] ?? []
                    for (index, definition) in definitions.enumerated() {
                        let sql = GrafanaSQL.expand(
                            definition["query"] as? String ?? "", variables: variables, range: range)
                        let (columns, rows) = try await Self.run(sql, on: database)
                        #expect(columns.count == 1, "\(name): variable \(variables[index].name): \(sql)")
                        variables[index].options = rows.map { $0.first ?? "" }
                        variables[index].pick = .values([variables[index].name == "project" ? "shop" : "main"])
                        ran += 1
                    }
                    #expect(variables.map(\.options) == [["cafe", "shop"], [Self.otherBranch, "main"]], "\(name)")
                    for panel in dashboard["panels"] as? [[String: Any]] ?? [] {
                        for target in panel["targets"] as? [[String: Any]] ?? [] {
                            // "All", one branch, the other (no drift there: rows not required), both.
                            let picks: [(GrafanaVariable.Pick, rowsRequired: Bool)] = [
                                (.all, true), (.values(["main"]), true), (.values([Self.otherBranch]), false),
                                (.values(["main", Self.otherBranch]), true),
                            ]
                            for (pick, rowsRequired) in picks {
                                variables[1].pick = pick
                                let sql = GrafanaSQL.expand(
                                    target["rawSql"] as? String ?? "", variables: variables, range: range)
                                let (columns, rows) = try await Self.run(sql, on: database)
                                let title = "\(name): \(panel["title"] ?? "") (branch \(pick))"
                                #expect(!columns.isEmpty, "\(title)")
                                if target["format"] as? String == "time_series" {
                                    #expect(columns.first?.name == "time", "\(title): the first column is time")
                                    #expect(
                                        [.timestamptz, .timestamp, .float8, .numeric, .int8].contains(
                                            columns.first?.type),
                                        "\(title): time is a timestamp or epoch seconds")
                                    // Values, and in Grafana's long format a text column named metric: the series.
                                    #expect(
                                        columns.dropFirst().allSatisfy {
                                            [.float8, .numeric, .int8, .int4].contains($0.type)
                                                || ($0.name == "metric" && $0.type == .text)
                                        }, "\(title)")
                                    #expect(
                                        rows.map { $0.first ?? "" } == rows.map { $0.first ?? "" }.sorted(),
                                        "\(title): ordered by time")
                                }
                                #expect(!rowsRequired || !rows.isEmpty, "\(title): the seeded history has rows")
                                ran += 1
                            }
                        }
                    }
                }
                return ran
            }
            #expect(ran >= 64, "\(ran) queries")
        }
        await upstream.stop()
    }

    /// Runs `sql` in a read-only transaction: its columns (name, type) and its rows as text, in order.
    static func run(
        _ sql: String, on database: Database
    ) async throws -> ([(name: String, type: PostgresDataType)], [[String]]) {
        try await database.client.withConnection { connection in
            _ = try await connection.query("START TRANSACTION READ ONLY", logger: database.logger)
            defer { Task { _ = try? await connection.query("ROLLBACK", logger: database.logger) } }
            // Text rows keep the order checkable for any type: a sortable rendering of the first column.
            let rows: PostgresRowSequence
            do {
                rows = try await connection.query(PostgresQuery(unsafeSQL: sql), logger: database.logger)
            } catch let error as PSQLError {
                throw QueryFailed(message: error.serverInfo?[.message] ?? "\(error)", sql: sql)
            }
            let columns = rows.columns.map { (name: $0.name, type: $0.dataType) }
            var values: [[String]] = []
            for try await row in rows {
                values.append(
                    row.map { cell in
                        if cell.dataType == .timestamptz, let date = try? cell.decode(Date.self) {
                            return String(format: "%020.3f", date.timeIntervalSince1970)
                        }
                        if cell.dataType == .float8, let number = try? cell.decode(Double.self) {
                            return String(format: "%020.3f", number)
                        }
                        return cell.bytes.map { String(buffer: $0) } ?? ""
                    })
            }
            _ = try await connection.query("ROLLBACK", logger: database.logger)
            return (columns, values)
        }
    }
}

/// A query PostgreSQL refused: its message and the query, to read in the test's failure.
struct QueryFailed: Error, CustomStringConvertible {
    var message: String
    var sql: String
    var description: String { "\(message): \(sql)" }
}
