import Foundation

/// Where the machine's PostgreSQL server programs are: `ORCHESTRATE_PG_BINDIR`, `pg_config --bindir`'s
/// usual answers, Debian's versioned folders (newest first), then PATH.
package struct PostgresBinaries: Sendable {
    package let directory: String

    package func path(_ tool: String) -> String { "\(directory)/\(tool)" }

    package static func locate(
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws(StoreError) -> PostgresBinaries {
        let fileManager = FileManager.default
        var candidates: [String] = []
        if let explicit = environment["ORCHESTRATE_PG_BINDIR"] { candidates.append(explicit) }
        for base in ["/usr/lib/postgresql", "/usr/local/lib/postgresql"] {
            let versions = (try? fileManager.contentsOfDirectory(atPath: base)) ?? []
            for version in versions.sorted(by: { (Int($0) ?? 0) > (Int($1) ?? 0) }) {
                candidates.append("\(base)/\(version)/bin")
            }
        }
        candidates += ["/opt/homebrew/bin", "/usr/local/bin", "/usr/lib/postgresql/bin"]
        candidates += (environment["PATH"] ?? "").split(separator: ":").map(String.init)
        for directory in candidates
        where fileManager.isExecutableFile(atPath: "\(directory)/initdb")
            && fileManager.isExecutableFile(atPath: "\(directory)/postgres")
        {
            return PostgresBinaries(directory: directory)
        }
        throw StoreError(
            .postgresNotInstalled,
            "PostgreSQL's server programs (initdb, postgres) are not on this machine: install them (apt-get install postgresql) or pass --database URL"
        )
    }
}
