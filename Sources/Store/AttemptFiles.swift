import CompressNIO
import Foundation
import NIOCore
import OrchestrateModel
import PostgresNIO

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What attempts kept, stored in PostgreSQL (gzip), so that any host can read it back: the HTML report lists it and
/// `orchestrate artifacts RUN SCENARIO` writes it out. Capped per attempt: files past ``maximumBytes`` (in the order of
/// their paths) are recorded by name and size only.
package struct AttemptFiles: Sendable {
    let database: Database
    /// Bytes of files (before compression) stored per attempt.
    package var maximumBytes: Int64
    /// Files recorded per attempt at most, stored or not (a scenario that leaves a million files is cut there).
    package static let maximumFiles = 1000

    package init(database: Database, maximumBytes: Int64) {
        self.database = database
        self.maximumBytes = maximumBytes
    }

    /// Stores the regular files under `folder` (links are not followed) as attempt `attemptID`'s, replacing what it had.
    package func store(attemptID: Int64, folder: String) async throws {
        // Parallel arrays; a file past the cap travels as an empty buffer and is stored as NULL (arrays carry no NULLs).
        var paths: [String] = [], sizes: [Int64] = [], contents: [ByteBuffer] = [], stored: [Bool] = []
        var budget = maximumBytes
        for (path, size) in Self.files(under: folder).prefix(Self.maximumFiles) {
            paths.append(path)
            sizes.append(size)
            if size <= budget, let data = FileManager.default.contents(atPath: "\(folder)/\(path)"), Int64(data.count) == size {
                budget -= size
                var buffer = ByteBuffer(bytes: data)
                contents.append(try buffer.compress(with: .gzip()))
                stored.append(true)
            } else {
                contents.append(ByteBuffer())
                stored.append(false)
            }
        }
        guard !paths.isEmpty else { return }
        try await database.client.query(
            """
            WITH gone AS (DELETE FROM attempt_files WHERE attempt_id = \(attemptID))
            INSERT INTO attempt_files (attempt_id, path, bytes, content)
            SELECT \(attemptID), u.path, u.bytes, CASE WHEN u.stored THEN u.content END
            FROM unnest(\(paths)::text[], \(sizes)::bigint[], \(contents)::bytea[], \(stored)::boolean[]) AS u(path, bytes, content, stored)
            """,
            logger: database.logger)
    }

    /// The files of the given attempts, by attempt id, in path order.
    package func list(_ attemptIDs: [Int64]) async throws -> [Int64: [KeptFile]] {
        guard !attemptIDs.isEmpty else { return [:] }
        let rows = try await database.client.query(
            """
            SELECT attempt_id, path, bytes, content IS NOT NULL FROM attempt_files
            WHERE attempt_id = ANY(\(attemptIDs)) ORDER BY attempt_id, path
            """,
            logger: database.logger)
        var files: [Int64: [KeptFile]] = [:]
        for try await (id, path, bytes, stored) in rows.decode((Int64, String, Int64, Bool).self) {
            files[id, default: []].append(KeptFile(path: path, bytes: bytes, stored: stored))
        }
        return files
    }

    /// Writes attempt `attemptID`'s stored files under `folder`; returns what it wrote. A stored path that would leave
    /// the folder (absolute, or with `..`) is refused.
    package func write(attemptID: Int64, to folder: String) async throws -> [KeptFile] {
        let rows = try await database.client.query(
            "SELECT path, bytes, content FROM attempt_files WHERE attempt_id = \(attemptID) AND content IS NOT NULL ORDER BY path",
            logger: database.logger)
        var written: [KeptFile] = []
        for try await (path, bytes, content) in rows.decode((String, Int64, ByteBuffer).self) {
            guard Self.isSafe(path) else { throw StoreError(.badConfiguration, "a kept file's stored name leaves its folder: \(path)") }
            var compressed = content
            let data = try compressed.decompress(with: .gzip(), maxSize: Int(clamping: bytes) + 1)
            try AtomicFile.write(Data(data.readableBytesView), to: "\(folder)/\(path)")
            written.append(KeptFile(path: path, bytes: bytes, stored: true))
        }
        return written
    }

    /// A relative path that stays inside its folder.
    static func isSafe(_ path: String) -> Bool {
        !path.isEmpty && !path.hasPrefix("/") && !path.split(separator: "/").contains { $0 == ".." || $0 == "." }
            && !path.utf8.contains(0)
    }

    /// The regular files under `folder` with their sizes, paths relative to it, sorted; links and special files are
    /// skipped, and so is anything past ``maximumFiles`` entries seen.
    static func files(under folder: String) -> [(String, Int64)] {
        var found: [(String, Int64)] = []
        var pending = [""]
        var seen = 0
        while let relative = pending.popLast(), seen < maximumFiles * 4 {
            let directory = relative.isEmpty ? folder : "\(folder)/\(relative)"
            guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else { continue }
            for name in names.sorted() {
                seen += 1
                let path = relative.isEmpty ? name : "\(relative)/\(name)"
                var status = stat()
                guard lstat("\(folder)/\(path)", &status) == 0 else { continue }
                switch status.st_mode & S_IFMT {
                case S_IFREG: found.append((path, Int64(status.st_size)))
                case S_IFDIR: pending.append(path)
                default: break
                }
            }
        }
        return found.sorted { $0.0 < $1.0 }
    }
}

extension RunStore {
    /// What the given attempts kept, by attempt id (``AttemptFiles/list(_:)``).
    package func keptFiles(_ attemptIDs: [Int64]) async throws -> [Int64: [KeptFile]] {
        try await AttemptFiles(database: database, maximumBytes: 0).list(attemptIDs)
    }

    /// Writes what attempt `attemptID` kept under `folder` (``AttemptFiles/write(attemptID:to:)``).
    package func writeKeptFiles(of attemptID: Int64, to folder: String) async throws -> [KeptFile] {
        try await AttemptFiles(database: database, maximumBytes: 0).write(attemptID: attemptID, to: folder)
    }
}
