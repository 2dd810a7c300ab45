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

/// Takes exchanges and steps without ever waiting for the database, and writes them from a background
/// loop: every `interval`, or as soon as `batchRows` rows wait. A busy server's exchanges stream: one transaction stays
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
        /// Rows neither the database nor the spool took (the disk is full), and so dropped.
        var lost = 0
        var writing = false
        /// The rows a write under way carries: spooled if the write is abandoned (``close(within:)``), so that a write
        /// that never answers loses nothing (a spooled row the database did take is not written twice).
        var inFlight = CopyRows()
        var stopping = false
        /// The loop's pause between batches, or a streaming write's wait for its next chunk: closing cuts it short, and so
        /// do rows that are due unless the loop backs off from a failing database.
        var pause: Task<Void, Never>?
        var backingOff = false
        /// Writes fail (the database is down): said once, and again when they succeed.
        var failing = false
        /// The loop's pause, and how long a streaming write stays open.
        var interval = Duration.milliseconds(100)
        /// The write ``flush(within:)`` started, while it goes on.
        var flushing: (id: UUID, task: Task<Bool, Never>)?
        /// Counts writes given up on: a write that ends after it was given up on changes nothing.
        var generation = 0
    }

    /// How long a streaming write waits for a chunk to fill before it takes what came (or ends, when nothing did).
    private static let chunkPatience = Duration.milliseconds(20)

    package init(
        store: ExchangeStore, spoolDirectory: String, memoryLimit: Int = 64 << 20, batchRows: Int = 256,
        chunkRows: Int = 64,
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
    /// Rows dropped because neither the database nor the spool took them (a full disk).
    package var lost: Int { state.withLock { $0.lost } }

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
                pause = await flush(within: Database.defaultConnectTimeout) ? interval : min(pause * 2, .seconds(5))
            }
        }
        loop.withLock { $0 = task }
    }

    /// Ends the loop and writes what is left: the write under way, then up to three tries, each given
    /// ORCHESTRATE_CONNECT_TIMEOUT — or all within `limit`, when the caller knows the database does not answer. Rows
    /// the database does not take by then — those of a write that did not answer too — go to the spool for the next
    /// run. Returns the rows left in the spool.
    @discardableResult
    package func close(within limit: Duration? = nil) async -> Int {
        let clock = ContinuousClock()
        let deadline = limit.map { clock.now + $0 }
        let patience = Database.defaultConnectTimeout
        func left() -> Duration { deadline.map { $0 - clock.now } ?? patience }
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
        // The loop ends with its write; a write that never answers is not waited for past the patience.
        if let task { _ = try? await abandoning(after: max(left(), .milliseconds(1))) { await task.value } }
        for _ in 0..<3 where left() > .zero {
            if await flush(within: left()) { return 0 }
            if left() > .milliseconds(500) { try? await Task.sleep(for: .milliseconds(500)) }
        }
        // A write that never answered: what it carried, and what waits in memory, to the spool (a local file: quick).
        abandonWrite()
        spool(
            state.withLock { state in
                defer { state.rows = CopyRows() }
                return state.rows
            })
        let (left, lost) = state.withLock { ($0.spooled, $0.lost) }
        logger.error(
            "the database did not take the network log; it waits in the spool for the next run",
            metadata: ["spool.rows": "\(left)", "spool.directory": "\(spoolDirectory)", "lost.rows": "\(lost)"])
        return left
    }

    /// ``flush()`` for at most `limit` (ORCHESTRATE_CONNECT_TIMEOUT): a request for a pooled connection waits without
    /// an error while the server is down, and a write whose answer is lost may never end; its rows are spooled on
    /// close. A write still under way when the wait ends goes on; the next call waits for it rather than starting
    /// another.
    package func flush(within limit: Duration) async -> Bool {
        let write = state.withLock { state -> Task<Bool, Never> in
            if let running = state.flushing { return running.task }
            let id = UUID()
            let task = Task {
                let done = await self.flush()
                self.state.withLock { state in if state.flushing?.id == id { state.flushing = nil } }
                return done
            }
            state.flushing = (id, task)
            return task
        }
        if let done = try? await abandoning(after: limit, { await write.value }) { return done }
        // No answer in all that time: the write is given up on (a write whose answer was lost never ends), and its rows
        // go back to the spool for the next write, which takes the database afresh.
        abandonWrite()
        return false
    }

    /// Gives up on the write under way: its rows to the spool (the database may have some of them: spooled rows are
    /// written without duplicates), the files it was sending left for the next write, and whatever it does when it ends
    /// (if it ever does) ignored.
    private func abandonWrite() {
        let carried = state.withLock { state -> CopyRows? in
            guard state.writing else { return nil }
            defer {
                state.generation += 1
                state.writing = false
                state.flushing = nil
                state.inFlight = CopyRows()
            }
            return state.inFlight
        }
        if let carried { spool(carried) }
    }

    /// Ends a write that took its rows in `generation`: its effects on the counters count only if it was not given up
    /// on meanwhile. Returns whether they counted.
    private func endWrite(_ generation: Int, _ change: (inout State) -> Void) -> Bool {
        state.withLock { state in
            guard state.generation == generation else { return false }
            change(&state)
            state.writing = false
            state.inFlight = CopyRows()
            return true
        }
    }

    /// Writes the spool and what waits in memory now. Returns whether nothing is left to write.
    @discardableResult
    package func flush() async -> Bool {
        let taken = state.withLock { state -> (rows: CopyRows, spooled: Int, generation: Int)? in
            guard !state.writing, state.rows.count > 0 || state.spooled > 0 else { return nil }
            state.writing = true
            state.inFlight = state.rows
            defer { state.rows = CopyRows() }
            return (state.rows, state.spooled, state.generation)
        }
        guard let taken else { return state.withLock { !$0.writing && $0.rows.count == 0 && $0.spooled == 0 } }
        if taken.spooled == 0, taken.rows.exchangesOnly {
            return await stream(taken.rows, generation: taken.generation)
        }
        // The spool being sent moves aside (after what earlier writes that failed left aside, in order), so that rows
        // spilled meanwhile land in a new one.
        let sending = spoolLock.withLock { _ in LogTable.allCases.map { moveAside(spoolPath($0)) } }
        do {
            // A spool may hold rows the database has: a write whose end was not heard (the server died) may have
            // committed.
            try await store.write(
                try zip(LogTable.allCases, sending).map { table, files in
                    (table, try files.flatMap { try chunks(of: $0) } + [taken.rows[table]])
                }, deduplicate: taken.spooled > 0)
            // Only a write not given up on removes what it sent: a later write may be sending files of the same names.
            if state.withLock({ $0.generation == taken.generation }) {
                for path in sending.joined() { try? FileManager.default.removeItem(atPath: path) }
            }
            noteWritten()
            return endWrite(taken.generation) { state in
                state.written += taken.spooled + taken.rows.count
                // Rows spilled while this write was under way stay counted: they are in the new spool file.
                state.spooled -= taken.spooled
            }
        } catch {
            warnWriteFailed(error)
            // The files aside stay where they are, in front of whatever was spilled meanwhile (sent first next time);
            // then the rows taken from memory (unless the write was given up on: they were spooled then).
            if endWrite(taken.generation, { _ in }) { spool(taken.rows) }
            return false
        }
    }

    /// Sends exchanges in one transaction that stays open while more come, for up to `interval`; returns whether it
    /// committed. Rows of a write that fails go to the spool, all of them: PostgreSQL kept none.
    private func stream(_ first: CopyRows, generation: Int) async -> Bool {
        var sent = first
        state.withLock { $0.inFlight = first }
        var pending: ByteBuffer? = first[.exchanges]
        let deadline = ContinuousClock.now + state.withLock { $0.interval }
        do {
            try await store.stream(.exchanges) {
                if let chunk = pending {
                    pending = nil
                    return chunk
                }
                guard let rows = await nextChunk(deadline: deadline, generation: generation) else { return nil }
                sent.append(contentsOf: rows)
                state.withLock { state in if state.generation == generation { state.inFlight = sent } }
                return rows[.exchanges]
            }
            noteWritten()
            return endWrite(generation) { $0.written += sent.count }
        } catch {
            warnWriteFailed(error)
            if endWrite(generation, { _ in }) { spool(sent) }
            return false
        }
    }

    /// The streaming write's next exchanges: a chunk once it fills, or what waits when it does not fill within
    /// `chunkPatience`. Nil ends the write: its time is up, the writer stops, nothing came, other rows wait (they go in
    /// a transaction with the exchanges that name them), or the stream was given up on.
    private func nextChunk(deadline: ContinuousClock.Instant, generation: Int) async -> CopyRows? {
        enum Chunk { case rows(CopyRows), wait(Task<Void, Never>), end }
        let patience = ContinuousClock.now + Self.chunkPatience
        while true {
            let now = ContinuousClock.now
            let next = state.withLock { state -> Chunk in
                // A stream given up on takes nothing more.
                guard !state.stopping, now < deadline, state.rows.exchangesOnly, state.generation == generation else {
                    return .end
                }
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
                "writing the network log failed; it is spooled until the database takes it",
                metadata: ["error": "\(Database.describe(error))"])
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

    /// Appends rows to the spool files, all tables or none (the counter follows only once they are on disk). When the
    /// spool cannot take them either (a full disk), they wait in memory up to the memory bound, and past it are dropped
    /// and counted (``lost``): said once, never a process that grows without bound.
    private func spool(_ rows: CopyRows) {
        guard rows.count > 0 else { return }
        do {
            try spoolLock.withLock { _ in
                try FileManager.default.createDirectory(atPath: spoolDirectory, withIntermediateDirectories: true)
                let paths = LogTable.allCases.map(spoolPath)
                let sizes = paths.map { Self.size(of: $0) }
                do {
                    for (table, path) in zip(LogTable.allCases, paths) { try Self.append(rows[table], to: path) }
                } catch {
                    // A row cut in half would spoil every later write of the file: back to where each file was.
                    for (path, size) in zip(paths, sizes) { truncate(path, off_t(size)) }
                    throw error
                }
            }
            state.withLock { $0.spooled += rows.count }
        } catch {
            let dropped = state.withLock { state -> Int? in
                guard state.rows.bytes + rows.bytes > memoryLimit else {
                    var merged = rows
                    merged.append(contentsOf: state.rows)
                    state.rows = merged
                    return nil
                }
                defer { state.lost += rows.count }
                return state.lost
            }
            switch dropped {
            case nil:
                logger.error("cannot spool the network log; keeping it in memory", metadata: ["error": "\(error)"])
            case 0?:
                logger.error(
                    "cannot spool the network log, and memory holds all it may: rows are dropped (is the disk full?)",
                    metadata: ["error": "\(error)", "spool.directory": "\(spoolDirectory)"])
            default: break
            }
        }
    }

    private static func size(of path: String) -> Int64 {
        var status = stat()
        return stat(path, &status) == 0 ? Int64(status.st_size) : 0
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

    /// The spool files of `path` to send, in order: those failed writes left aside (`.sending`, `.sending.1`, …, in the
    /// order of their numbers, gaps or not), then `path` itself moved aside after them.
    private func moveAside(_ path: String) -> [String] {
        let base = (path as NSString).lastPathComponent + ".sending"
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: spoolDirectory)) ?? []
        var numbered: [(number: Int, path: String)] = entries.compactMap { entry in
            guard entry.hasPrefix(base) else { return nil }
            let suffix = entry.dropFirst(base.count)
            guard let number = suffix.isEmpty ? 0 : suffix.hasPrefix(".") ? Int(suffix.dropFirst()) : nil else {
                return nil
            }
            return (number, "\(spoolDirectory)/\(entry)")
        }
        numbered.sort { $0.number < $1.number }
        let next = (numbered.last?.number ?? -1) + 1
        let name = next == 0 ? "\(path).sending" : "\(path).sending.\(next)"
        if FileManager.default.fileExists(atPath: path), rename(path, name) == 0 { numbered.append((next, name)) }
        return numbered.map(\.path)
    }

    /// A spool file in 1 MiB pieces (rows may be split across pieces).
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
        // Oldest first: what a failed write left aside (`.sending`, `.sending.1`, …), then the spool itself.
        func age(_ entry: String) -> Int {
            guard let range = entry.range(of: ".copy.sending") else { return .max }
            return Int(entry[range.upperBound...].dropFirst()) ?? 0
        }
        let ordered = entries.sorted { (age($0), $0) < (age($1), $1) }
        for entry in ordered where entry.hasSuffix(".copy") || entry.contains(".copy.sending") {
            let parts = entry.prefix { $0 != "." }.split(separator: "-")
            guard let pid = parts.last.flatMap({ Int32($0) }), pid != getpid(), kill(pid, 0) != 0, errno == ESRCH else {
                continue
            }
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
                logger.info(
                    "taking over a spooled network log", metadata: ["spool.file": "\(entry)", "spool.rows": "\(rows)"])
            } catch {
                logger.warning(
                    "cannot take over a spooled network log", metadata: ["spool.file": "\(entry)", "error": "\(error)"])
            }
        }
    }
}
