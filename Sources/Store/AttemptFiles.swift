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
/// `orchestrate artifacts RUN SCENARIO` writes it out. Capped per attempt: at most ``KeptFiles/maximumFiles`` files are
/// recorded (how many more there were is recorded too), and files past ``maximumBytes`` are recorded by name and size
/// only. The attempt's own output (`stderr.log`, `stdout.log`) comes first, so a large artifacts folder never crowds it
/// out.
package struct AttemptFiles: Sendable {
    let database: Database
    /// Bytes of files (before compression) stored per attempt.
    package var maximumBytes: Int64

    package init(database: Database, maximumBytes: Int64) {
        self.database = database
        self.maximumBytes = maximumBytes
    }

    /// Stores the regular files under `folder` (links are not followed, the folder's own files only) as attempt
    /// `attemptID`'s, replacing what it had.
    package func store(attemptID: Int64, folder path: String) async throws {
        // Walking, reading and compressing happen off the cooperative pool, which serves every slot's mock server.
        let (paths, sizes, contents, stored, leftOut) = try await blockingOffPool { [maximumBytes] in
            try Self.read(path, maximumBytes: maximumBytes)
        }
        guard !paths.isEmpty else { return }
        try await database.client.query(
            """
            WITH gone AS (DELETE FROM attempt_files WHERE attempt_id = \(attemptID)),
                 counted AS (UPDATE attempts SET files_left_out = \(leftOut) WHERE id = \(attemptID))
            INSERT INTO attempt_files (attempt_id, path, bytes, content)
            SELECT \(attemptID), u.path, u.bytes, CASE WHEN u.stored THEN u.content END
            FROM unnest(\(paths)::text[], \(sizes)::bigint[], \(contents)::bytea[], \(stored)::boolean[]) AS u(path, bytes, content, stored)
            """,
            logger: database.logger)
    }

    /// The files under `path` as the store statement takes them: parallel arrays of paths, sizes, gzip contents (an
    /// empty buffer, stored as NULL, for a file past the byte cap: arrays carry no NULLs) and whether each is stored;
    /// and how many files were past the cap on files.
    private static func read(
        _ path: String, maximumBytes: Int64
    ) throws -> (paths: [String], sizes: [Int64], contents: [ByteBuffer], stored: [Bool], leftOut: Int) {
        guard let folder = try? FolderHandle(opening: path) else { return ([], [], [], [], 0) }
        var paths: [String] = [], sizes: [Int64] = [], contents: [ByteBuffer] = [], stored: [Bool] = []
        var budget = maximumBytes
        let found = files(under: folder)
        for (path, size) in found.files {
            paths.append(path)
            sizes.append(size)
            let (directory, name) = split(path)
            if size <= budget,
                let data = try? folder.folder(path: directory).contents(of: name, maximumBytes: Int(size)),
                Int64(data.count) == size
            {
                budget -= size
                var buffer = ByteBuffer(bytes: data)
                contents.append(try buffer.compress(with: .gzip()))
                stored.append(true)
            } else {
                contents.append(ByteBuffer())
                stored.append(false)
            }
        }
        return (paths, sizes, contents, stored, found.leftOut)
    }

    /// What the given attempts kept, by attempt id (files in path order).
    package func list(_ attemptIDs: [Int64]) async throws -> [Int64: KeptFiles] {
        guard !attemptIDs.isEmpty else { return [:] }
        let rows = try await database.client.query(
            """
            SELECT f.attempt_id, f.path, f.bytes, f.content IS NOT NULL, a.files_left_out FROM attempt_files f JOIN attempts a ON a.id = f.attempt_id
            WHERE f.attempt_id = ANY(\(attemptIDs)) ORDER BY f.attempt_id, f.path
            """,
            logger: database.logger)
        var kept: [Int64: KeptFiles] = [:]
        for try await (id, path, bytes, stored, leftOut) in rows.decode((Int64, String, Int64, Bool, Int32).self) {
            kept[id, default: KeptFiles(leftOut: Int(leftOut))].files.append(
                KeptFile(path: path, bytes: bytes, stored: stored))
        }
        return kept
    }

    /// Writes attempt `attemptID`'s stored files under `subfolder` of `folder` (the user's, made when missing, taken as
    /// it is); returns what it wrote. A stored path that would leave the folder (absolute, or with `..`) is refused,
    /// and so is a link found inside the folder (at `subfolder`, at a file's name or at a folder on its way): nothing
    /// is written through a link orchestrate did not make.
    package func write(attemptID: Int64, to folder: String, subfolder: String) async throws -> [KeptFile] {
        let rows = try await database.client.query(
            "SELECT path, bytes, content FROM attempt_files WHERE attempt_id = \(attemptID) AND content IS NOT NULL ORDER BY path",
            logger: database.logger)
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let root: FolderHandle
        do {
            root = try FolderHandle(opening: folder, followingLink: true).folder(subfolder, creating: true)
        } catch {
            throw StoreError(.badConfiguration, error.description)
        }
        var written: [KeptFile] = []
        for try await (path, bytes, content) in rows.decode((String, Int64, ByteBuffer).self) {
            guard Self.isSafe(path) else {
                throw StoreError(.badConfiguration, "a kept file's stored name leaves its folder: \(path)")
            }
            var compressed = content
            let data = try compressed.decompress(with: .gzip(), maxSize: Int(clamping: bytes) + 1)
            let (directory, name) = Self.split(path)
            do {
                try root.folder(path: directory, creating: true).writeFile(Data(data.readableBytesView), named: name)
            } catch {
                // A link or special file in the way is the folder given; a failed write (a full disk) is the host's.
                throw StoreError(
                    error.code == .notOwnFile ? .badConfiguration : .cannotWrite,
                    "\(error.description) (writing \(path) under \(folder))")
            }
            written.append(KeptFile(path: path, bytes: bytes, stored: true))
        }
        return written
    }

    /// A relative path that stays inside its folder.
    static func isSafe(_ path: String) -> Bool {
        !path.isEmpty && !path.hasPrefix("/") && !path.split(separator: "/").contains { $0 == ".." || $0 == "." }
            && !path.utf8.contains(0)
    }

    /// `a/b/c` → (`a/b`, `c`).
    private static func split(_ path: String) -> (String, String) {
        guard let slash = path.lastIndex(of: "/") else { return ("", path) }
        return (String(path[..<slash]), String(path[path.index(after: slash)...]))
    }

    /// The regular files under `folder` with their sizes, paths relative to it: `stderr.log` and `stdout.log` of its
    /// top level first, then the rest in path order, at most ``KeptFiles/maximumFiles``; links, special files and
    /// folders more than ``deepest`` levels down are skipped. `leftOut` counts the files past the cap (the walk stops
    /// after a hundred times the cap entries).
    static func files(under folder: FolderHandle) -> (files: [(String, Int64)], leftOut: Int) {
        var found: [(String, Int64)] = []
        // Folders to walk, each opened from its parent's descriptor when its turn comes (never by a path from the top;
        // a folder of ten thousand folders holds one descriptor, its own).
        var pending: [(parent: FolderHandle?, name: String, relative: String, depth: Int)] = [(nil, "", "", 0)]
        var seen = 0
        while let (parent, entry, relative, depth) = pending.popLast(), seen < KeptFiles.maximumFiles * 100 {
            let directory = parent == nil ? folder : try? parent?.folder(entry)
            guard let directory, let names = try? directory.names() else { continue }
            for name in names.sorted() {
                seen += 1
                let path = relative.isEmpty ? name : "\(relative)/\(name)"
                switch directory.kind(of: name) {
                case .file(let bytes): found.append((path, bytes))
                case .folder: if depth < deepest { pending.append((directory, name, path, depth + 1)) }
                case .other, nil: break
                }
            }
        }
        func rank(_ path: String) -> Int { path == "stderr.log" ? 0 : path == "stdout.log" ? 1 : 2 }
        found.sort { (rank($0.0), $0.0) < (rank($1.0), $1.0) }
        return (Array(found.prefix(KeptFiles.maximumFiles)), max(found.count - KeptFiles.maximumFiles, 0))
    }

    /// Folders deeper than this in an attempt's folder are not kept.
    static let deepest = 32
}

extension RunStore {
    /// What the given attempts kept, by attempt id (``AttemptFiles/list(_:)``).
    package func keptFiles(_ attemptIDs: [Int64]) async throws -> [Int64: KeptFiles] {
        try await AttemptFiles(database: database, maximumBytes: 0).list(attemptIDs)
    }

    /// Writes what attempt `attemptID` kept under `subfolder` of `folder`
    /// (``AttemptFiles/write(attemptID:to:subfolder:)``).
    package func writeKeptFiles(of attemptID: Int64, to folder: String, subfolder: String) async throws -> [KeptFile] {
        try await AttemptFiles(database: database, maximumBytes: 0).write(
            attemptID: attemptID, to: folder, subfolder: subfolder)
    }
}
