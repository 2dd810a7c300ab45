import Foundation
import Logging
import NIOCore
import OrchestrateModel
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Takes exchanges and steps without ever waiting for the database, and writes them (COPY) from a background
/// loop: every `interval`, or as soon as `batchRows` rows wait. A busy server's exchanges stream: one COPY stays
/// open for up to `interval` and takes them `chunkRows` at a time as they come, so PostgreSQL's work comes in
/// small pieces without a transaction for each — its processing of a whole batch at once would take a
/// processor away from the server for milliseconds at a time.
///
/// Memory is bounded: past `memoryLimit` bytes of rows waiting, and whenever a write fails, rows go to spool
/// files (COPY text, `<spool>/<table>-v5-PID.copy` for payloads, steps and exchanges) that later writes send
/// first. Each distinct body or header list is written once per writer (``PayloadCatalog``).
/// A slow or briefly unavailable database therefore slows no request and loses no row; spool files left
/// by a process that ended before its database came back are taken over by the next writer.
package final class NetworkLogWriter: Sendable {
    private let store: ExchangeStore
    private let spoolDirectory: String
    private let memoryLimit: Int
    private let batchRows: Int
    private let chunkRows: Int
    private let logger: Logger
    private let state = Mutex(State())
    private let loop = Mutex<Task<Void, Never>?>(nil)
    /// Held while spool files are written or moved.
    private let spoolLock = Mutex(())

    private struct State {
        var rows = CopyRows()
        var catalog = PayloadCatalog()
        var spooled = 0
        var written = 0
        var writing = false
        var stopping = false
        /// The loop's pause between batches, or an open COPY's wait for its next chunk: closing cuts it short, and so
        /// do rows that are due unless the loop backs off from a failing database.
        var pause: Task<Void, Never>?
        var backingOff = false
        /// Writes fail (the database is down): said once, and again when they succeed.
        var failing = false
        /// The loop's pause, and how long a streaming COPY stays open.
        var interval = Duration.milliseconds(100)
    }

    /// How long an open COPY waits for a chunk to fill before it takes what came (or ends, when nothing did).
    private static let chunkPatience = Duration.milliseconds(20)

    package init(
        store: ExchangeStore, spoolDirectory: String, memoryLimit: Int = 64 << 20, batchRows: Int = 256, chunkRows: Int = 64,
        logger: Logger
    ) {
        self.store = store
        self.spoolDirectory = spoolDirectory
        self.memoryLimit = memoryLimit
        self.batchRows = batchRows
        self.chunkRows = min(chunkRows, batchRows)
        self.logger = logger
    }

    /// Spool files carry the layout of their rows (the schema version that defined it): a spool written
    /// by an older orchestrate is never sent into tables whose columns changed since.
    private static let layout = "v5"

    private func spoolPath(_ table: LogTable) -> String {
        "\(spoolDirectory)/\(table.rawValue)-\(Self.layout)-\(getpid()).copy"
    }

    /// Rows written to the database so far.
    package var written: Int { state.withLock { $0.written } }
    /// Rows in the spool files, including those a write under way is sending.
    package var spooled: Int { state.withLock { $0.spooled } }

    package func append(_ exchange: Exchange, attemptID: Int64) {
        append { $0.rows.append(exchange, attemptID: attemptID, catalog: &$0.catalog) }
    }

    package func append(_ step: Step, attemptID: Int64) {
        append { $0.rows.append(step, attemptID: attemptID) }
    }

    /// The rows that, once waiting, go without waiting out the pause: a chunk of exchanges alone, a batch of others.
    private func due(_ rows: CopyRows) -> Bool {
        rows.count >= (rows.exchangesOnly ? chunkRows : batchRows)
    }

    /// Adds rows; a full batch or chunk ends the loop's pause; past the memory bound, what waits in memory goes to the
    /// spool.
    private func append(_ add: (inout State) -> Void) {
        let (full, pause) = state.withLock { state -> (CopyRows?, Task<Void, Never>?) in
            add(&state)
            if state.rows.bytes >= memoryLimit {
                defer { state.rows = CopyRows() }
                return (state.rows, nil)
            }
            guard due(state.rows), !state.backingOff else { return (nil, nil) }
            defer { state.pause = nil }
            return (nil, state.pause)
        }
        pause?.cancel()
        if let full { spool(full) }
    }

    /// Starts the background loop (a batch every `interval`, or once `batchRows` rows or `chunkRows` exchanges
    /// wait); takes over spool files of processes that are gone.
    package func start(interval: Duration = .milliseconds(100)) {
        adoptOrphanedSpools()
        state.withLock { $0.interval = interval }
        let task = Task(executorPreference: Database.executor) { [self] in
            var pause = interval
            while true {
                let sleeping = Task { [pause] in _ = try? await Task.sleep(for: pause) }
                // Stopping, or rows due already (left by the last write): no pause.
                let atOnce = state.withLock { [pause] state -> Bool in
                    if !state.stopping { state.pause = sleeping }
                    state.backingOff = pause > interval
                    return state.stopping || (!state.backingOff && due(state.rows))
                }
                if atOnce { sleeping.cancel() }
                await sleeping.value
                if state.withLock({ $0.stopping }) { break }
                // Back off while the database refuses, up to 5 s.
                pause = await boundedFlush() ? interval : min(pause * 2, .seconds(5))
            }
        }
        loop.withLock { $0 = task }
    }

    /// Ends the loop and writes what is left; rows the database does not take stay spooled.
    /// Returns the rows left in the spool.
    @discardableResult
    package func close() async -> Int {
        let task = loop.withLock { task -> Task<Void, Never>? in
            defer { task = nil }
            return task
        }
        // The loop is not cancelled — a write under way finishes rather than failing — but its pause is: a run would
        // otherwise wait for the rest of it before writing what is left.
        let pause = state.withLock { state -> Task<Void, Never>? in
            state.stopping = true
            return state.pause
        }
        pause?.cancel()
        await task?.value
        for _ in 0..<3 {
            if await boundedFlush() { return 0 }
            try? await Task.sleep(for: .milliseconds(500))
        }
        let left = spooled
        logger.error(
            "the database did not take the network log; it waits in the spool for the next run",
            metadata: ["spool.rows": "\(left)", "spool.directory": "\(spoolDirectory)"])
        return left
    }

    /// ``flush()`` for at most ORCHESTRATE_CONNECT_TIMEOUT: a request for a pooled connection waits without an error while
    /// the server is down, and a write cut short leaves its rows in the spool.
    private func boundedFlush() async -> Bool {
        (try? await within(Database.defaultConnectTimeout) { await self.flush() }) ?? false
    }

    /// Writes the spool and what waits in memory now. Returns whether nothing is left to write.
    @discardableResult
    package func flush() async -> Bool {
        let taken = state.withLock { state -> (rows: CopyRows, spooled: Int)? in
            guard !state.writing, state.rows.count > 0 || state.spooled > 0 else { return nil }
            state.writing = true
            defer { state.rows = CopyRows() }
            return (state.rows, state.spooled)
        }
        guard let taken else { return state.withLock { !$0.writing && $0.rows.count == 0 && $0.spooled == 0 } }
        if taken.spooled == 0, taken.rows.exchangesOnly { return await stream(taken.rows) }
        // The spool being sent moves aside, so that rows spilled meanwhile land in a new one.
        let sending = spoolLock.withLock { _ in
            LogTable.allCases.map { table -> String in
                let path = spoolPath(table)
                let aside = "\(path).sending"
                if FileManager.default.fileExists(atPath: path) { rename(path, aside) }
                return aside
            }
        }
        do {
            // A spool may hold rows the database has: a write whose end was not heard (the server died) may have committed.
            try await store.write(
                try zip(LogTable.allCases, sending).map { table, aside in
                    (table, try chunks(of: aside) + [taken.rows[table]])
                }, deduplicate: taken.spooled > 0)
            for path in sending { try? FileManager.default.removeItem(atPath: path) }
            noteWritten()
            state.withLock { state in
                state.written += taken.spooled + taken.rows.count
                // Rows spilled while this write was under way stay counted: they are in the new spool file.
                state.spooled -= taken.spooled
                state.writing = false
            }
            return true
        } catch {
            warnWriteFailed(error)
            // Back in front of whatever was spilled meanwhile, then the rows taken from memory.
            spoolLock.withLock { _ in
                for (aside, path) in zip(sending, LogTable.allCases.map(spoolPath)) where FileManager.default.fileExists(atPath: aside) {
                    if let newer = FileManager.default.contents(atPath: path) { try? Self.append(ByteBuffer(bytes: newer), to: aside) }
                    rename(aside, path)
                }
            }
            spool(taken.rows)
            state.withLock { $0.writing = false }
            return false
        }
    }

    /// Sends exchanges into one COPY that stays open while more come, for up to `interval`; returns whether it
    /// committed. Rows of a COPY that fails go to the spool, all of them: PostgreSQL kept none.
    private func stream(_ first: CopyRows) async -> Bool {
        var sent = first
        var pending: ByteBuffer? = first[.exchanges]
        let deadline = ContinuousClock.now + state.withLock { $0.interval }
        do {
            try await store.stream(.exchanges) {
                if let chunk = pending {
                    pending = nil
                    return chunk
                }
                guard let rows = await nextChunk(deadline: deadline) else { return nil }
                sent.append(contentsOf: rows)
                return rows[.exchanges]
            }
            noteWritten()
            state.withLock { state in
                state.written += sent.count
                state.writing = false
            }
            return true
        } catch {
            warnWriteFailed(error)
            spool(sent)
            state.withLock { $0.writing = false }
            return false
        }
    }

    /// The open COPY's next exchanges: a chunk once it fills, or what waits when it does not fill within
    /// `chunkPatience`. Nil ends the COPY: its time is up, the writer stops, nothing came, or other rows wait (they go
    /// in a transaction with the exchanges that name them).
    private func nextChunk(deadline: ContinuousClock.Instant) async -> CopyRows? {
        enum Chunk { case rows(CopyRows), wait(Task<Void, Never>), end }
        let patience = ContinuousClock.now + Self.chunkPatience
        while true {
            let now = ContinuousClock.now
            let next = state.withLock { state -> Chunk in
                guard !state.stopping, now < deadline, state.rows.exchangesOnly else { return .end }
                if state.rows.count >= chunkRows || (now >= patience && state.rows.count > 0) {
                    defer { state.rows = CopyRows() }
                    return .rows(state.rows)
                }
                guard now < patience else { return .end }
                let sleeping = Task { _ = try? await Task.sleep(until: min(deadline, patience)) }
                state.pause = sleeping
                return .wait(sleeping)
            }
            switch next {
            case .rows(let rows): return rows
            case .wait(let sleeping): await sleeping.value
            case .end: return nil
            }
        }
    }

    /// Says once that writes fail (the rows are spooled meanwhile).
    private func warnWriteFailed(_ error: any Error) {
        let first = state.withLock { state -> Bool in
            defer { state.failing = true }
            return !state.failing
        }
        if first {
            logger.warning(
                "writing the network log failed; it is spooled until the database takes it", metadata: ["error": "\(Database.describe(error))"])
        }
    }

    /// Says that writes succeed again, after they failed.
    private func noteWritten() {
        let recovered = state.withLock { state -> Bool in
            defer { state.failing = false }
            return state.failing
        }
        if recovered { logger.warning("the network log is written again") }
    }

    /// Appends rows to the spool files (the counter follows only once they are on disk).
    private func spool(_ rows: CopyRows) {
        guard rows.count > 0 else { return }
        do {
            try spoolLock.withLock { _ in
                try FileManager.default.createDirectory(atPath: spoolDirectory, withIntermediateDirectories: true)
                for table in LogTable.allCases { try Self.append(rows[table], to: spoolPath(table)) }
            }
            state.withLock { $0.spooled += rows.count }
        } catch {
            logger.error("cannot spool the network log; keeping it in memory", metadata: ["error": "\(error)"])
            state.withLock { state in
                var merged = rows
                merged.append(contentsOf: state.rows)
                state.rows = merged
            }
        }
    }

    private static func append(_ buffer: ByteBuffer, to path: String) throws {
        guard buffer.readableBytes > 0 else { return }
        if !FileManager.default.fileExists(atPath: path) {
            _ = FileManager.default.createFile(atPath: path, contents: nil, attributes: [.posixPermissions: 0o600])
        }
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        defer { try? handle.close() }
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(buffer.readableBytesView))
    }

    /// A spool file in 1 MiB pieces (COPY takes rows split across pieces).
    private func chunks(of path: String) throws -> [ByteBuffer] {
        guard let handle = FileHandle(forReadingAtPath: path) else { return [] }
        defer { try? handle.close() }
        var chunks: [ByteBuffer] = []
        while let data = try handle.read(upToCount: 1 << 20), !data.isEmpty { chunks.append(ByteBuffer(bytes: data)) }
        return chunks
    }

    /// Spool files of ended processes become this one's (their rows are counted from the newlines).
    private func adoptOrphanedSpools() {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: spoolDirectory)) ?? []
        for entry in entries where entry.hasSuffix(".copy") || entry.hasSuffix(".copy.sending") {
            let parts = entry.prefix { $0 != "." }.split(separator: "-")
            guard let pid = parts.last.flatMap({ Int32($0) }), pid != getpid(), kill(pid, 0) != 0, errno == ESRCH else { continue }
            guard parts.count == 3, parts[1] == Self.layout, let table = LogTable(rawValue: String(parts[0])) else {
                logger.warning(
                    "a spooled network log from another orchestrate version is left as it is",
                    metadata: ["spool.file": "\(spoolDirectory)/\(entry)"])
                continue
            }
            guard let data = FileManager.default.contents(atPath: "\(spoolDirectory)/\(entry)") else { continue }
            do {
                try Self.append(ByteBuffer(bytes: data), to: spoolPath(table))
                try FileManager.default.removeItem(atPath: "\(spoolDirectory)/\(entry)")
                let rows = table == .payloads ? 0 : data.reduce(0) { $0 + ($1 == UInt8(ascii: "\n") ? 1 : 0) }
                state.withLock { $0.spooled += rows }
                logger.info("taking over a spooled network log", metadata: ["spool.file": "\(entry)", "spool.rows": "\(rows)"])
            } catch {
                logger.warning("cannot take over a spooled network log", metadata: ["spool.file": "\(entry)", "error": "\(error)"])
            }
        }
    }
}
