import Foundation
import Logging
import PostgresNIO

/// Numbered schema changes, applied in order, in one transaction, under an advisory lock.
enum Migrations {
    /// An arbitrary constant: the advisory lock key all orchestrate processes agree on.
    static let lockKey: Int64 = 0x6f72_6368_6573_7472

    static let all: [(version: Int, name: String, sql: String)] = [
        (1, "runs, scenarios, attempts, steps, exchanges", Schema.version1),
        (2, "recent passes read from the index alone", Schema.version2),
        (3, "why an exchange was unusual", Schema.version3),
        (4, "exchanges name their step by position", Schema.version4),
        (5, "bodies and header lists stored once, by digest", Schema.version5),
        (6, "exchanges fall in the step whose time span holds them", Schema.version6),
        (7, "lanes of compare runs, verdicts with evidence, quarantine", Schema.version7),
        (8, "one index for a scenario's finished attempts", Schema.version8),
        (9, "the attempts of a run that did not pass", Schema.version9),
        (10, "exchanges without a serial id", Schema.version10),
        (11, "an attempt given back is abandoned and followed by a new one", Schema.version11),
        (
            12, "runs many hosts join: join keys, members, node re-runs, lost hosts, fenced completions",
            Schema.version12
        ),
        (
            13, "projects: scenarios, their history and quarantine belong to a suite; runs record their branch",
            Schema.version13
        ),
        (14, "stable views for dashboards", Schema.version14),
        (15, "per-day rollups of attempts and exchanges, kept as runs settle and exchanges arrive", Schema.version15),
        (
            16, "tests of a suite that run several to a process: results formats, batches, attempts that run alone",
            Schema.version16
        ),
        (17, "how many files an attempt left past the cap on kept files", Schema.version17),
        (18, "the start-up of a batched test's process", Schema.version18),
        (19, "a run's scenario-days counted per project and day; each project's branches", Schema.version19),
        (20, "the queue round as a procedure that commits before it answers", Schema.version20),
        (21, "the queue round's claim in a transaction of its own, after its completions", Schema.version21),
        (22, "a quarantine's last day and owner", Schema.version22),
        (23, "the queue round told which failures may be retried, and their evidence", Schema.version23),
        (24, "which failures a run's retries are for", Schema.version24),
        (25, "infrastructure incidents, and the attempts they explain", Schema.version25),
        (26, "failure signatures", Schema.version26),
        (27, "the endpoints failures and verdicts are attributed to", Schema.version27),
        (28, "footprints, and the tests a selected run left out", Schema.version28),
        (29, "likely failures first: a rank the claim orders by", Schema.version29),
        (30, "fail fast on every host", Schema.version30),
        (31, "a settled run's scenario-days added to rather than counted again", Schema.version31),
        (32, "a compare run's claims find the other lane by the run's lane index", Schema.version32),
        (33, "no foreign keys checked row by row as a run is planned", Schema.version33),
        (34, "a run's scenarios settle in place", Schema.version34),
    ]

    /// Applies the migrations not applied yet, up to `version` (the newest by default; tests stop earlier to make rows
    /// as an older orchestrate left them).
    static func apply(on database: Database, through version: Int = latest) async throws {
        do {
            try await database.withTransaction { connection in
                try await connection.query("SELECT pg_advisory_xact_lock(\(lockKey))", logger: database.logger)
                try await connection.query(
                    """
                    CREATE TABLE IF NOT EXISTS schema_migrations (
                        version integer PRIMARY KEY,
                        name text NOT NULL,
                        applied_at timestamptz NOT NULL DEFAULT now()
                    )
                    """,
                    logger: database.logger
                )
                var applied = Set<Int>()
                for try await version in try await connection.query(
                    "SELECT version FROM schema_migrations", logger: database.logger
                ).decode(Int.self) {
                    applied.insert(version)
                }
                for migration in all where !applied.contains(migration.version) && migration.version <= version {
                    database.logger.info(
                        "applying migration",
                        metadata: ["migration.version": "\(migration.version)", "migration.name": "\(migration.name)"])
                    for statement in split[migration.version] ?? [] {
                        try await connection.query(PostgresQuery(unsafeSQL: statement), logger: database.logger)
                    }
                    try await connection.query(
                        "INSERT INTO schema_migrations (version, name) VALUES (\(migration.version), \(migration.name))",
                        logger: database.logger
                    )
                }
            }
        } catch let error as StoreError {
            throw error
        } catch {
            throw StoreError(
                .migrationFailed, "migrating the database failed, nothing was changed: \(Database.describe(error))")
        }
    }

    /// Every migration's statements, by version, split once per process.
    static let split: [Int: [String]] = Dictionary(uniqueKeysWithValues: all.map { ($0.version, statements($0.sql)) })

    /// The statements of a migration, one query each (the extended protocol takes one at a time): split at the
    /// semicolons that end a line outside quotes and dollar quotes (function bodies).
    static func statements(_ sql: String) -> [String] {
        var statements: [String] = []
        var current = ""
        var closing: String?  // the quote or dollar-quote tag that ends the quoted text we are in
        var rest = Substring(sql)
        while let character = rest.first {
            if let quote = closing {
                if rest.hasPrefix(quote) {
                    current += quote
                    rest = rest.dropFirst(quote.count)
                    closing = nil
                } else {
                    current.append(character)
                    rest = rest.dropFirst()
                }
            } else if character == "'" {
                closing = "'"
                current.append(character)
                rest = rest.dropFirst()
            } else if character == "$", let tag = dollarTag(at: rest) {
                closing = tag
                current += tag
                rest = rest.dropFirst(tag.count)
            } else if rest.hasPrefix(";\n") || rest == ";" {
                statements.append(current)
                current = ""
                rest = rest.dropFirst()
            } else {
                current.append(character)
                rest = rest.dropFirst()
            }
        }
        statements.append(current)
        return statements.filter { !$0.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty }
    }

    /// The dollar-quote tag (`$$`, `$f$`) that `text` starts with, if any.
    private static func dollarTag(at text: Substring) -> String? {
        let tag = "$" + text.dropFirst().prefix { $0 == "_" || $0.isLetter } + "$"
        return text.hasPrefix(tag) ? tag : nil
    }

    /// The newest schema version this build knows.
    static var latest: Int { all.map(\.version).max() ?? 0 }
}
