import Foundation
import MockServer
import OrchestrateModel
import Suites
import Yams

/// Reads orchestrate.yml strictly: unknown keys, wrong types and duplicate ids are errors that name
/// file:line:column.
package enum ConfigLoader {
    /// The name of the config file a command looks for.
    package static let fileName = "orchestrate.yml"

    /// The config a command reads: `--config` as given; else the first orchestrate.yml in `directory` (the current
    /// folder) or a folder above it, as git finds its repository; else orchestrate.yml in `directory`, which is not
    /// there. A config found, not named, runs commands: one that belongs to another user (not root) is refused, as git
    /// refuses another user's repository, and no folder at or above one anybody may write to (`/tmp`) is looked in.
    package static func locate(
        _ explicit: String?, from directory: String = FileManager.default.currentDirectoryPath
    ) throws(ConfigError) -> String {
        if let explicit { return explicit }
        let start = URL(fileURLWithPath: directory).standardizedFileURL
        var folder = start
        while true {
            var status = stat()
            if folder.path != start.path, stat(folder.path, &status) == 0, status.st_mode & S_IWOTH != 0 {
                return fileName
            }
            let candidate = folder.appendingPathComponent(fileName).path
            if lstat(candidate, &status) == 0 {
                guard status.st_uid == geteuid() || status.st_uid == 0 else {
                    throw ConfigError(
                        .unreadable, file: candidate,
                        "belongs to another user (uid \(status.st_uid)): orchestrate runs the commands of a config it "
                            + "finds only when it is yours; name it with --config to use it")
                }
                // Said as given when it is here, in full when it is above.
                return folder.path == start.path ? fileName : candidate
            }
            let parent = folder.deletingLastPathComponent()
            guard parent.path != folder.path else { return fileName }
            folder = parent
        }
    }

    /// Loads the file at `path` (relative paths start at the current directory).
    package static func load(path: String) throws(ConfigError) -> OrchestrateConfig {
        let url = URL(fileURLWithPath: path)
        guard let data = FileManager.default.contents(atPath: url.path) else {
            let exists = FileManager.default.fileExists(atPath: url.path)
            throw ConfigError(
                .unreadable, file: path,
                exists
                    ? "cannot read the file"
                    : path == fileName
                        ? "no such file here or in a folder above (orchestrate init writes a first one, or pass --config PATH)"
                        : "no such file")
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw ConfigError(.unreadable, file: path, "the file is not UTF-8 text")
        }
        return try parse(text, path: path, directory: url.deletingLastPathComponent().standardizedFileURL.path)
    }

    /// The file at `path`; when it is not `required` and there is none, the defaults, in the current folder (commands
    /// that only read history work without a config).
    package static func load(path: String, required: Bool) throws(ConfigError) -> OrchestrateConfig {
        if !required && !FileManager.default.fileExists(atPath: path) {
            var config = OrchestrateConfig(directory: FileManager.default.currentDirectoryPath, path: path)
            config.fromFile = false
            return config
        }
        return try load(path: path)
    }

    /// Parses YAML text; `path` is used in messages, `directory` is where commands will run.
    package static func parse(_ text: String, path: String, directory: String) throws(ConfigError) -> OrchestrateConfig
    {
        var config = OrchestrateConfig(directory: directory, path: path)
        let reader = NodeReader(file: path)
        let root: Node
        do {
            guard let node = try Yams.compose(yaml: text) else { return config }
            root = node
        } catch let error as YamlError {
            throw reader.error(from: error)
        } catch {
            throw ConfigError(.invalid, file: path, line: 1, column: 1, "invalid YAML: \(error)")
        }
        let top = try reader.mapping(
            root, what: "the top level",
            keys: [
                "project", "workers", "retries", "database", "reports", "lease", "artifacts", "suite", "mock",
                "quarantine", "redact", "selection",
            ])
        for (key, value) in top {
            config.lines[key] = value.mark?.line
            switch key {
            case "project": config.explicitProject = try reader.string(value, key: key)
            case "workers": config.workers = try reader.integer(value, key: key, in: Limits.workers)
            case "retries": (config.retries, config.retryWhen) = try retries(value, reader: reader)
            case "database": config.database = try reader.string(value, key: key)
            case "reports": config.reports = try reader.string(value, key: key)
            case "lease": config.lease = try reader.duration(value, key: key)
            case "artifacts":
                for (key, value) in try reader.mapping(value, what: "artifacts", keys: ["max-bytes"]) {
                    config.artifactBytes = Int64(try reader.integer(value, key: "artifacts.\(key)", in: 0...(1 << 30)))
                }
            case "suite": config.suite = try suite(value, reader: reader)
            case "mock":
                config.mock = try mock(value, reader: reader, directory: directory)
                if case .mapping(let mapping) = value, let mode = mapping.first(where: { $0.key.string == "mode" }) {
                    config.lines["mock.mode"] = mode.value.mark?.line
                }
            case "quarantine": config.quarantine = try quarantine(value, reader: reader)
            case "selection": config.selection = try selection(value, reader: reader)
            case "redact":
                for (_, names) in try reader.mapping(value, what: "redact", keys: ["env"]) {
                    guard case .sequence(let sequence) = names else {
                        throw reader.error(at: names, "redact.env must be a list of variable names")
                    }
                    for name in sequence {
                        config.redact.environment.insert(try reader.variableName(name, key: "redact.env"))
                    }
                }
            default: break
            }
        }
        return config
    }

    private static func suite(_ node: Node, reader: NodeReader) throws(ConfigError) -> SuiteDefinition {
        var suite = SuiteDefinition()
        var scenariosNode: Node?
        let keys = [
            "command", "timeout", "env", "scenarios", "gherkin", "list", "results", "batch", "swiftpm", "xcodebuild",
        ]
        for (key, value) in try reader.mapping(node, what: "suite", keys: keys) {
            switch key {
            case "results":
                let text = try reader.string(value, key: "suite.results")
                guard let format = ResultsFormat(rawValue: text), ResultsFormat.configurable.contains(format) else {
                    let names = ResultsFormat.configurable.map(\.rawValue).joined(separator: ", ")
                    throw reader.error(at: value, "suite.results must be one of \(names) (got \"\(text)\")")
                }
                suite.results = format
            case "batch":
                if case .scalar(let scalar) = value {
                    guard scalar.string == "auto" else {
                        throw reader.error(
                            at: value, "suite.batch must be auto or { size, seconds, auto } (got \"\(scalar.string)\")")
                    }
                    break
                }
                for (bound, limit) in try reader.mapping(
                    value, what: "suite.batch", keys: ["size", "seconds", "auto"])
                {
                    switch bound {
                    case "size": suite.batch.size = try reader.integer(limit, key: "suite.batch.size", in: 1...10_000)
                    case "seconds":
                        suite.batch.seconds = try reader.integer(limit, key: "suite.batch.seconds", in: 1...86_400)
                    default: suite.batch.auto = try reader.bool(limit, key: "suite.batch.auto")
                    }
                }
            case "swiftpm":
                var swiftpm = SuiteDefinition.SwiftPM(line: value.mark?.line ?? 0)
                for (option, setting) in try reader.mapping(
                    value, what: "suite.swiftpm", keys: ["package", "filter", "build"])
                {
                    if option == "package" {
                        swiftpm.package = try reader.string(setting, key: "suite.swiftpm.package")
                    } else if option == "build" {
                        swiftpm.build = try reader.bool(setting, key: "suite.swiftpm.build")
                    } else {
                        let pattern = try reader.string(setting, key: "suite.swiftpm.filter")
                        do {
                            swiftpm.filter = try Regex(pattern)
                        } catch {
                            throw reader.error(
                                at: setting, "suite.swiftpm.filter is not a regular expression: \(error)")
                        }
                    }
                }
                suite.swiftpm = swiftpm
            case "xcodebuild":
                var xcode = SuiteDefinition.Xcode(line: value.mark?.line ?? 0)
                let options = ["project", "workspace", "scheme", "test-plan", "device", "erase", "filter", "build"]
                for (option, setting) in try reader.mapping(value, what: "suite.xcodebuild", keys: options) {
                    let key = "suite.xcodebuild.\(option)"
                    switch option {
                    case "project": xcode.project = try reader.string(setting, key: key)
                    case "workspace": xcode.workspace = try reader.string(setting, key: key)
                    case "scheme": xcode.scheme = try reader.string(setting, key: key)
                    case "test-plan": xcode.testPlan = try reader.string(setting, key: key)
                    case "device": xcode.device = try reader.string(setting, key: key)
                    case "erase": xcode.erase = try reader.bool(setting, key: key)
                    case "build": xcode.build = try reader.bool(setting, key: key)
                    default:
                        do {
                            xcode.filter = try Regex(try reader.string(setting, key: key))
                        } catch {
                            throw reader.error(
                                at: setting, "suite.xcodebuild.filter is not a regular expression: \(error)")
                        }
                    }
                }
                guard (xcode.project == nil) != (xcode.workspace == nil) else {
                    throw reader.error(
                        at: value,
                        "suite.xcodebuild needs a project (App.xcodeproj) or a workspace (App.xcworkspace), not both")
                }
                guard !xcode.scheme.isEmpty, !xcode.device.isEmpty else {
                    throw reader.error(
                        at: value,
                        "suite.xcodebuild needs a scheme and a device (the simulator every slot's is cloned from, e.g. \"iPhone 16\")"
                    )
                }
                suite.xcodebuild = xcode
            case "command": suite.command = try reader.string(value, key: "suite.command")
            case "timeout": suite.timeout = try reader.duration(value, key: "suite.timeout")
            case "env": suite.environment = try reader.environment(value, key: "suite.env")
            case "scenarios": scenariosNode = value
            case "list":
                suite.list = try reader.string(value, key: "suite.list")
                suite.listLine = value.mark?.line ?? 0
                if suite.list?.trimmingCharacters(in: .whitespaces).isEmpty == true {
                    throw reader.error(at: value, "suite.list must be a command that prints test ids, one per line")
                }
            case "gherkin":
                suite.gherkin = try reader.strings(value, key: "suite.gherkin")
                suite.gherkinLine = value.mark?.line ?? 0
                if suite.gherkin.isEmpty {
                    throw reader.error(
                        at: value, "suite.gherkin must name at least one pattern, e.g. [\"Features/**/*.feature\"]")
                }
            default: break
            }
        }
        if suite.swiftpm != nil && suite.list != nil {
            throw reader.error(
                at: node, "suite.swiftpm lists the package's tests itself: drop suite.list (or suite.swiftpm)")
        }
        if let command = suite.command, Batch.takesIDs(command) {
            guard suite.list != nil else {
                throw reader.error(
                    at: node, "suite.command takes a batch of tests ({ids}), which needs suite.list to list them")
            }
            guard suite.results != nil else {
                throw reader.error(
                    at: node,
                    "suite.command runs a batch of tests ({ids}): set suite.results (junit, cucumber-json or cucumber-messages) to the report its runner writes into $ORCHESTRATE_ARTIFACTS_DIR, so that each test gets its own result"
                )
            }
        }
        if suite.list != nil && suite.command == nil {
            throw reader.error(
                at: node, "suite.list needs suite.command, the template every listed test runs with ({id})")
        }
        if !suite.gherkin.isEmpty && suite.command == nil {
            throw reader.error(
                at: node,
                "suite.gherkin needs suite.command, the template every pickle runs with ({uri} {line} {name} {id})")
        }
        guard let scenariosNode else { return suite }
        guard case .sequence(let sequence) = scenariosNode else {
            throw reader.error(at: scenariosNode, "suite.scenarios must be a list of scenarios")
        }
        var seen: [String: Int] = [:]
        for item in sequence {
            var entry = SuiteDefinition.Entry(id: "", line: item.mark?.line ?? 0)
            var hasID = false
            for (key, value) in try reader.mapping(
                item, what: "a scenario", keys: ["id", "name", "command", "tags", "timeout", "env"])
            {
                switch key {
                case "id":
                    entry.id = try reader.name(value, key: "id")
                    hasID = true
                    if entry.id.trimmingCharacters(in: .whitespaces).isEmpty {
                        throw reader.error(at: value, "a scenario id must not be empty")
                    }
                    if let first = seen[entry.id] {
                        throw reader.error(
                            at: value,
                            "duplicate scenario id \"\(entry.id)\" (first defined on line \(first)); ids must be unique"
                        )
                    }
                    seen[entry.id] = value.mark?.line ?? 0
                case "name": entry.name = try reader.string(value, key: "name")
                case "command": entry.command = try reader.string(value, key: "command")
                case "tags":
                    entry.tags = try reader.strings(value, key: "tags").map {
                        $0.hasPrefix("@") ? String($0.dropFirst()) : $0
                    }
                case "timeout": entry.timeout = try reader.duration(value, key: "timeout")
                case "env": entry.environment = try reader.environment(value, key: "env")
                default: break
                }
            }
            if !hasID { throw reader.error(at: item, "a scenario needs an id (a stable name its history hangs on)") }
            if entry.command == nil && suite.command == nil {
                throw reader.error(
                    at: item, "scenario \"\(entry.id)\" has no command and suite.command (the template) is not set")
            }
            suite.scenarios.append(entry)
        }
        return suite
    }

    /// `retries: N`, or `retries: { count: N, when: any | evidence }` (a bare number retries any failure).
    private static func retries(_ node: Node, reader: NodeReader) throws(ConfigError) -> (Int, RetryWhen) {
        guard case .mapping = node else { return (try reader.integer(node, key: "retries", in: Limits.retries), .any) }
        var count: Int?
        var when = RetryWhen.any
        for (key, value) in try reader.mapping(node, what: "retries", keys: ["count", "when"]) {
            switch key {
            case "count": count = try reader.integer(value, key: "retries.count", in: Limits.retries)
            default:
                guard let chosen = RetryWhen(rawValue: try reader.string(value, key: "retries.when")) else {
                    throw reader.error(
                        at: value,
                        "retries.when must be any (every failure) or evidence (a crash, a timeout, an upstream's failure)"
                    )
                }
                when = chosen
            }
        }
        guard let count else {
            throw reader.error(at: node, "retries needs count (re-runs of a failed attempt, 0 to 100) beside when")
        }
        return (count, when)
    }

    private static func quarantine(_ node: Node, reader: NodeReader) throws(ConfigError) -> OrchestrateConfig.Quarantine
    {
        var quarantine = OrchestrateConfig.Quarantine()
        for (key, value) in try reader.mapping(node, what: "quarantine", keys: ["threshold", "window"]) {
            switch key {
            case "threshold":
                if case .scalar(let scalar) = value, scalar.string == "off" {
                    quarantine.threshold = nil
                } else {
                    guard case .scalar(let scalar) = value, scalar.style == .plain, let number = Double(scalar.string),
                        number > 0, number <= 1
                    else {
                        throw reader.error(
                            at: value,
                            "quarantine.threshold must be a flakiness score above 0 and at most 1 (e.g. 0.3), or off")
                    }
                    quarantine.threshold = number
                }
            default: quarantine.window = try reader.duration(value, key: "quarantine.window")
            }
        }
        return quarantine
    }

    private static func selection(
        _ node: Node, reader: NodeReader
    ) throws(ConfigError) -> OrchestrateConfig.Selection {
        var selection = OrchestrateConfig.Selection()
        for (key, value) in try reader.mapping(node, what: "selection", keys: ["everything", "ignore", "endpoints"]) {
            switch key {
            case "everything": selection.everything = try globs(value, key: "selection.everything", reader: reader)
            case "ignore": selection.ignore = try globs(value, key: "selection.ignore", reader: reader)
            default:
                guard case .sequence(let sources) = value else {
                    throw reader.error(
                        at: value,
                        "selection.endpoints must be a list of { files: [globs], endpoints: [METHOD host/path] }")
                }
                for source in sources {
                    var files: [String] = []
                    var endpoints: [EndpointPattern] = []
                    for (key, value) in try reader.mapping(
                        source, what: "an entry of selection.endpoints", keys: ["files", "endpoints"])
                    {
                        guard key == "endpoints" else {
                            files = try globs(value, key: "selection.endpoints.files", reader: reader)
                            continue
                        }
                        guard case .sequence(let patterns) = value else {
                            throw reader.error(at: value, "selection.endpoints.endpoints must be a list of strings")
                        }
                        for pattern in patterns {
                            let text = try reader.name(pattern, key: "selection.endpoints.endpoints")
                            guard let endpoint = EndpointPattern(text) else {
                                throw reader.error(
                                    at: pattern,
                                    "selection.endpoints.endpoints: \"\(text)\" is not an endpoint (METHOD host/path, "
                                        + "e.g. GET api.shop.test/v1/carts/*, or host/path for every method)")
                            }
                            endpoints.append(endpoint)
                        }
                    }
                    guard !files.isEmpty, !endpoints.isEmpty else {
                        throw reader.error(at: source, "an entry of selection.endpoints needs files and endpoints")
                    }
                    selection.endpoints.append((files, endpoints))
                }
            }
        }
        return selection
    }

    /// A list of path globs (``PathGlob``): each names something (not empty, not only `.`, `/` or a folder and `..`).
    private static func globs(_ node: Node, key: String, reader: NodeReader) throws(ConfigError) -> [String] {
        guard case .sequence(let items) = node else { throw reader.error(at: node, "\(key) must be a list of globs") }
        var globs: [String] = []
        for item in items {
            let glob = try reader.name(item, key: key)
            guard !PathGlob(glob).namesNothing else {
                throw reader.error(at: item, "\(key): \"\(glob)\" names no file (a glob like src/**/*.py or docs/)")
            }
            globs.append(glob)
        }
        return globs
    }

    private static func mock(
        _ node: Node, reader: NodeReader, directory: String
    ) throws(ConfigError) -> OrchestrateConfig.Mock {
        var mock = OrchestrateConfig.Mock()
        let keys = [
            "mode", "recordings", "hosts", "match", "ignore", "redact", "rewrite", "repeat", "stubs", "timeouts",
        ]
        for (key, value) in try reader.mapping(node, what: "mock", keys: keys) {
            switch key {
            case "mode":
                let text = try reader.string(value, key: "mock.mode")
                guard let mode = Mode(rawValue: text), mode != .compare else {
                    throw reader.error(
                        at: value, "mock.mode must be one of replay, record, live, mock, hybrid (got \"\(text)\")")
                }
                mock.mode = mode
            case "recordings": mock.recordings = try reader.string(value, key: "mock.recordings")
            case "hosts":
                guard case .mapping(let mapping) = value else {
                    throw reader.error(
                        at: value,
                        "mock.hosts must be a mapping of host: upstream URL (api.example.test: https://api.example.com)"
                    )
                }
                for (hostNode, upstreamNode) in mapping {
                    let host = try reader.string(hostNode, key: "a host in mock.hosts")
                    guard !host.isEmpty, !host.contains("/"),
                        !host.contains(":") || host.split(separator: ":").count == 2
                    else {
                        throw reader.error(
                            at: hostNode,
                            "\"\(host)\" in mock.hosts is not a host name (write it as the app addresses it, like api.example.test)"
                        )
                    }
                    let upstream = try reader.string(upstreamNode, key: "mock.hosts.\(host)")
                    guard let url = URLComponents(string: upstream), ["http", "https"].contains(url.scheme ?? ""),
                        url.host?.isEmpty == false
                    else {
                        throw reader.error(
                            at: upstreamNode,
                            "mock.hosts.\(host) must be an http:// or https:// URL (got \"\(upstream)\")")
                    }
                    guard mock.server.hosts.updateValue(upstream, forKey: host.lowercased()) == nil else {
                        throw reader.error(at: hostNode, "duplicate host \"\(host)\" in mock.hosts")
                    }
                }
            case "match":
                mock.server.match = []
                guard case .sequence(let items) = value else {
                    throw reader.error(
                        at: value,
                        "mock.match must be a list such as [method, path, query, body, header:accept-language]")
                }
                for item in items {
                    let text = try reader.string(item, key: "mock.match")
                    if let attribute = MockConfiguration.MatchAttribute(rawValue: text) {
                        mock.server.match.insert(attribute)
                    } else if text.hasPrefix("header:"), text.count > 7 {
                        mock.server.matchHeaders.append(String(text.dropFirst(7)).lowercased())
                    } else {
                        throw reader.error(
                            at: item,
                            "mock.match entries are method, path, query, body or header:NAME (got \"\(text)\")")
                    }
                }
            case "ignore":
                for (ignoreKey, ignoreValue) in try reader.mapping(value, what: "mock.ignore", keys: ["json", "query"])
                {
                    if ignoreKey == "query" {
                        mock.server.ignoredQuery = Set(try reader.strings(ignoreValue, key: "mock.ignore.query"))
                    } else {
                        mock.server.ignoredJSON = try jsonPaths(ignoreValue, key: "mock.ignore.json", reader: reader)
                    }
                }
            case "redact":
                for (redactKey, redactValue) in try reader.mapping(
                    value, what: "mock.redact", keys: ["headers", "json"])
                {
                    if redactKey == "headers" {
                        mock.server.redactedHeaders.formUnion(
                            try reader.strings(redactValue, key: "mock.redact.headers").map { $0.lowercased() })
                    } else {
                        mock.server.redactedJSON = try jsonPaths(redactValue, key: "mock.redact.json", reader: reader)
                    }
                }
            case "rewrite":
                mock.server.rewriteURLs = try reader.bool(value, key: "mock.rewrite")
            case "timeouts":
                for (_, timeout) in try reader.mapping(value, what: "mock.timeouts", keys: ["read"]) {
                    mock.server.readTimeout = try reader.duration(timeout, key: "mock.timeouts.read")
                }
            case "repeat":
                let text = try reader.string(value, key: "mock.repeat")
                guard ["last", "fail"].contains(text) else {
                    throw reader.error(at: value, "mock.repeat must be last or fail (got \"\(text)\")")
                }
                mock.server.repeatLast = text == "last"
            case "stubs":
                guard case .sequence(let items) = value else {
                    throw reader.error(at: value, "mock.stubs must be a list of stubs")
                }
                for (index, item) in items.enumerated() {
                    let value = try reader.json(item)
                    do throws(StubError) {
                        mock.server.stubs.append(try Stub(value, directory: directory))
                    } catch {
                        throw reader.error(
                            at: item,
                            "mock.stubs[\(index)]\(error.path.isEmpty ? "" : ".\(error.path)"): \(error.message)")
                    }
                }
            default: break
            }
        }
        return mock
    }

    private static func jsonPaths(_ node: Node, key: String, reader: NodeReader) throws(ConfigError) -> [JSONPath] {
        guard case .sequence(let items) = node else {
            throw reader.error(at: node, "\(key) must be a list of JSON paths such as $.token")
        }
        var paths: [JSONPath] = []
        for item in items {
            let text = try reader.string(item, key: key)
            do throws(StubError) {
                paths.append(try JSONPath(text))
            } catch {
                throw reader.error(at: item, "\(key): \(error)")
            }
        }
        return paths
    }
}

/// Typed reads of YAML nodes, each failure naming the node's file:line:column.
struct NodeReader {
    let file: String

    func error(at node: Node, _ message: String) -> ConfigError {
        ConfigError(.invalid, file: file, line: node.mark?.line, column: node.mark?.column, message)
    }

    func error(from yaml: YamlError) -> ConfigError {
        switch yaml {
        case .scanner(_, let problem, let mark, _), .parser(_, let problem, let mark, _),
            .composer(_, let problem, let mark, _):
            return ConfigError(.invalid, file: file, line: mark.line, column: mark.column, "invalid YAML: \(problem)")
        case .duplicatedKeysInMapping(let duplicates, let context):
            let mark = context.mark
            return ConfigError(
                .invalid,
                file: file, line: mark.line, column: mark.column,
                "duplicate key \(duplicates.map { "\"\($0)\"" }.joined(separator: ", ")) in a mapping")
        default:
            return ConfigError(.invalid, file: file, line: 1, column: 1, "invalid YAML: \(yaml)")
        }
    }

    /// The pairs of a mapping whose keys must all be in `keys`.
    func mapping(_ node: Node, what: String, keys: [String]) throws(ConfigError) -> [(String, Node)] {
        guard case .mapping(let mapping) = node else {
            throw error(at: node, "\(what) must be a mapping of keys to values")
        }
        var pairs: [(String, Node)] = []
        var seen = Set<String>()
        for (keyNode, value) in mapping {
            guard case .scalar(let scalar) = keyNode else {
                throw error(at: keyNode, "keys in \(what) must be plain words")
            }
            let key = scalar.string
            guard keys.contains(key) else {
                throw error(
                    at: keyNode, "unknown key \"\(key)\" in \(what) (expected one of: \(keys.joined(separator: ", ")))")
            }
            guard seen.insert(key).inserted else { throw error(at: keyNode, "duplicate key \"\(key)\" in \(what)") }
            pairs.append((key, value))
        }
        return pairs
    }

    /// A string, without NUL (no command, path or database value can hold one).
    func string(_ node: Node, key: String) throws(ConfigError) -> String {
        guard case .scalar(let scalar) = node else { throw error(at: node, "\(key) must be a string") }
        if scalar.style == .plain && ["", "~", "null", "Null", "NULL"].contains(scalar.string) {
            throw error(at: node, "\(key) must be a string (got nothing)")
        }
        if scalar.string.utf8.contains(0) { throw error(at: node, "\(key) must not contain a NUL character") }
        return scalar.string
    }

    /// A name people and files carry (a scenario id, a host): one line of printable characters.
    func name(_ node: Node, key: String) throws(ConfigError) -> String {
        let text = try string(node, key: key)
        if let control = TerminalText.firstControl(in: text) {
            throw error(at: node, "\(key) must not contain control characters (found \(TerminalText.name(control)))")
        }
        return text
    }

    func integer(_ node: Node, key: String, in range: ClosedRange<Int>) throws(ConfigError) -> Int {
        guard case .scalar(let scalar) = node, scalar.style == .plain, let value = Int(scalar.string) else {
            throw error(at: node, "\(key) must be a whole number from \(range.lowerBound) to \(range.upperBound)")
        }
        guard range.contains(value) else {
            throw error(at: node, "\(key) must be from \(range.lowerBound) to \(range.upperBound) (got \(value))")
        }
        return value
    }

    func strings(_ node: Node, key: String) throws(ConfigError) -> [String] {
        guard case .sequence(let sequence) = node else { throw error(at: node, "\(key) must be a list of strings") }
        var values: [String] = []
        for item in sequence { values.append(try string(item, key: key)) }
        return values
    }

    func environment(_ node: Node, key: String) throws(ConfigError) -> [String: String] {
        guard case .mapping(let mapping) = node else {
            throw error(at: node, "\(key) must be a mapping of NAME: value")
        }
        var result: [String: String] = [:]
        for (name, value) in mapping {
            let variable = try variableName(name, key: key)
            guard case .scalar(let scalar) = value else {
                throw error(at: value, "\(key).\(variable) must be a string")
            }
            guard !scalar.string.utf8.contains(0) else {
                throw error(at: value, "\(key).\(variable) must not contain a NUL character")
            }
            result[variable] = scalar.string
        }
        return result
    }

    /// An environment variable's name: not empty, no `=`, not starting with a digit.
    func variableName(_ node: Node, key: String) throws(ConfigError) -> String {
        let variable = try string(node, key: "a variable name in \(key)")
        guard !variable.isEmpty, !variable.contains("="), variable.first.map({ !$0.isNumber }) ?? false else {
            throw error(at: node, "\"\(variable)\" is not a valid environment variable name")
        }
        return variable
    }

    func bool(_ node: Node, key: String) throws(ConfigError) -> Bool {
        guard case .scalar(let scalar) = node, scalar.style == .plain, let value = node.bool else {
            throw error(at: node, "\(key) must be true or false")
        }
        return value
    }

    /// At most this many YAML nodes make one value: aliases nested in aliases (`&a [*b, *b, …]`) grow a few hundred
    /// bytes of YAML into billions of nodes.
    static let largestValue = 100_000

    /// A YAML value as JSON (plain scalars typed as YAML reads them, quoted ones as strings), of at most
    /// ``largestValue`` nodes.
    func json(_ node: Node) throws(ConfigError) -> JSONValue {
        var budget = Self.largestValue
        return try json(node, budget: &budget, root: node)
    }

    private func json(_ node: Node, budget: inout Int, root: Node) throws(ConfigError) -> JSONValue {
        budget -= 1
        guard budget >= 0 else {
            throw error(
                at: root,
                "this value has more than \(Self.largestValue) parts (YAML aliases nested in aliases?); write it out plainly"
            )
        }
        switch node {
        case .scalar(let scalar):
            guard scalar.style == .plain else { return .string(scalar.string) }
            if node.null != nil { return .null }
            if let value = node.bool { return .bool(value) }
            if let value = node.int { return .integer(Int64(value)) }
            if let value = node.float { return .number(value) }
            return .string(scalar.string)
        case .mapping(let mapping):
            var members: [String: JSONValue] = [:]
            for (key, value) in mapping { members[key.string ?? ""] = try json(value, budget: &budget, root: root) }
            return .object(members)
        case .sequence(let sequence):
            var items: [JSONValue] = []
            for item in sequence { items.append(try json(item, budget: &budget, root: root)) }
            return .array(items)
        case .alias:
            return .null
        }
    }

    func duration(_ node: Node, key: String) throws(ConfigError) -> Duration {
        guard case .scalar(let scalar) = node, let duration = DurationText.parse(scalar.string), duration > .zero else {
            throw error(at: node, "\(key) must be a positive duration like 90s, 2m, 500ms or 1h, at most 3650d")
        }
        return duration
    }
}

/// Durations as people write them: `500ms`, `90s`, `1.5s`, `2m`, `1h`, `14d`; a bare number is seconds. At most
/// ``maximum`` (3,650 days): anything longer is not a duration orchestrate waits for.
package enum DurationText {
    package static let maximum = Duration.seconds(3650 * 86400)

    package static func parse(_ text: String) -> Duration? {
        let text = text.trimmingCharacters(in: .whitespaces).lowercased()
        let units: [(String, Double)] = [("ms", 0.001), ("s", 1), ("m", 60), ("h", 3600), ("d", 86400)]
        var number = Double(text)
        var seconds = 1.0
        if number == nil, let (suffix, unit) = units.first(where: { text.hasSuffix($0.0) }) {
            number = Double(text.dropLast(suffix.count))
            seconds = unit
        }
        guard let number, number >= 0, number.isFinite, number * seconds <= Double(maximum.components.seconds) else {
            return nil
        }
        return .milliseconds(Int64((number * seconds * 1000).rounded()))
    }
}
