import Foundation
import Store

/// Which database a command uses: `--database`, else ORCHESTRATE_DATABASE_URL, else orchestrate.yml's
/// `database`, else the PG* variables, else the embedded cluster under `<project>/.orchestrate`.
package struct DatabaseSelection: Sendable {
    package enum Source: String, Sendable {
        case flag = "--database"
        case environment = "ORCHESTRATE_DATABASE_URL"
        case config = "orchestrate.yml"
        case libpq = "PG* variables"
        case embedded = "embedded cluster"
    }

    package var endpoint: DatabaseEndpoint
    package var source: Source
    /// Set when the embedded cluster is used: it must be started first.
    package var cluster: EmbeddedCluster?
    /// The project's folder, where orchestrate keeps its files (`.orchestrate`: the spool, kept results).
    package var projectFolder = ""

    package static func resolve(
        flag: String?, configured: String?, projectDirectory: String,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws(StoreError) -> DatabaseSelection {
        var selection = try select(
            flag: flag, configured: configured, projectDirectory: projectDirectory, environment: environment)
        selection.projectFolder = projectDirectory
        return selection
    }

    private static func select(
        flag: String?, configured: String?, projectDirectory: String, environment: [String: String]
    ) throws(StoreError) -> DatabaseSelection {
        if let flag { return DatabaseSelection(endpoint: try DatabaseEndpoint(url: flag), source: .flag) }
        if let url = environment["ORCHESTRATE_DATABASE_URL"], !url.isEmpty {
            return DatabaseSelection(endpoint: try DatabaseEndpoint(url: url), source: .environment)
        }
        if let configured { return DatabaseSelection(endpoint: try DatabaseEndpoint(url: configured), source: .config) }
        if let endpoint = DatabaseEndpoint.fromEnvironment(environment) {
            return DatabaseSelection(endpoint: endpoint, source: .libpq)
        }
        let cluster = EmbeddedCluster(root: "\(projectDirectory)/.orchestrate")
        return DatabaseSelection(endpoint: cluster.endpoint, source: .embedded, cluster: cluster)
    }
}
