import Foundation
import OrchestrateModel
import Synchronization

#if canImport(Glibc)
import Glibc

private let systemWrite = Glibc.write
#elseif canImport(Darwin)
import Darwin

private let systemWrite = Darwin.write
#endif

/// Where a command's text goes: standard output for results, standard error for progress and notes. Commands take
/// one instead of printing, so that tests and other front ends see what they say.
///
/// What came from outside is printed with its control characters escaped (``TerminalText``), and writing never ends the
/// command: a closed pipe (`| head`, a CI that stopped reading) or a full disk is given up on in silence, the work goes
/// on, and the command still exits with its own code.
package struct Console: Sendable {
    private let write: @Sendable (Stream, String) -> Void

    package enum Stream: Sendable {
        case output
        case error

        var descriptor: Int32 { self == .output ? STDOUT_FILENO : STDERR_FILENO }
    }

    package init(_ write: @escaping @Sendable (Stream, String) -> Void) {
        self.write = write
    }

    /// The process's own standard output and error, written as the command speaks (a reader that does not read holds
    /// the command up, as it would any program's).
    package static let standard = Console { stream, text in StandardStreams.write(text, to: stream.descriptor) }

    /// The process's own standard output and error, written by a thread of their own: a run never waits on its
    /// terminal. What a reader that stalled has not taken past a bound is dropped (and said to be);
    /// ``StandardStreams/flush(within:)`` waits for the rest before the process exits.
    package static let detached = Console { stream, text in
        StandardStreams.detached.enqueue(text, to: stream.descriptor)
    }

    /// A line of results (standard output).
    package func line(_ text: String) { write(.output, TerminalText.escaped(text) + "\n") }

    /// A line for people beside the results (standard error).
    package func note(_ text: String) { write(.error, TerminalText.escaped(text) + "\n") }

    /// Text as it is, on standard error (a live display's control sequences); what it holds from outside is escaped by
    /// its caller.
    package func raw(_ text: String) { write(.error, text) }
}

/// Writes to the process's standard output and error with `write(2)`, never through a handle that traps on an error.
package enum StandardStreams {
    /// The streams that failed (a closed pipe, a full disk): nothing more is written to them.
    private static let broken = Mutex<Set<Int32>>([])

    /// Writes all of `text` to `descriptor`, or gives the stream up when it fails.
    package static func write(_ text: String, to descriptor: Int32) {
        write(Array(text.utf8), to: descriptor)
    }

    static func write(_ bytes: [UInt8], to descriptor: Int32) {
        guard !broken.withLock({ $0.contains(descriptor) }) else { return }
        if !writeAll(bytes, to: descriptor) { _ = broken.withLock { $0.insert(descriptor) } }
    }

    /// Whether every byte was written.
    private static func writeAll(_ bytes: [UInt8], to descriptor: Int32) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let count = bytes.withUnsafeBufferPointer {
                systemWrite(descriptor, $0.baseAddress! + offset, $0.count - offset)
            }
            if count > 0 {
                offset += count
            } else if count < 0, errno == EINTR {
                continue
            } else if count < 0, errno == EAGAIN {
                // A descriptor someone made non-blocking: wait until it takes more.
                var ready = pollfd(fd: descriptor, events: Int16(POLLOUT), revents: 0)
                if poll(&ready, 1, -1) < 0, errno != EINTR { return false }
            } else {
                return false
            }
        }
        return true
    }

    /// The writer behind ``Console/detached``.
    static let detached = DetachedWriter()

    /// Waits until what ``Console/detached`` holds is written, for at most `timeout` (a reader that stalled does not
    /// keep the process from exiting).
    package static func flush(within timeout: Duration) {
        detached.flush(within: timeout)
    }

    /// A thread that writes what it is given, in order, to the descriptors named; at most ``limit`` bytes wait.
    /// `@unchecked Sendable`: its state is read and changed only while `condition` is locked.
    final class DetachedWriter: @unchecked Sendable {
        /// Bytes that may wait for a slow reader; more are dropped.
        static let limit = 4 << 20
        private let condition = NSCondition()
        private var chunks: [(descriptor: Int32, bytes: [UInt8])] = []
        private var waiting = 0
        private var dropped = 0
        /// Chunks are being written.
        private var busy = false
        private var started = false

        func enqueue(_ text: String, to descriptor: Int32) {
            let bytes = Array(text.utf8)
            condition.lock()
            defer { condition.unlock() }
            if waiting + bytes.count > Self.limit {
                dropped += bytes.count
            } else {
                chunks.append((descriptor, bytes))
                waiting += bytes.count
            }
            if !started {
                started = true
                Thread.detachNewThread { self.drain() }
            }
            condition.broadcast()
        }

        private func drain() {
            while true {
                condition.lock()
                while chunks.isEmpty && dropped == 0 {
                    busy = false
                    condition.broadcast()
                    condition.wait()
                }
                var taken = chunks
                if dropped > 0 {
                    taken.append(
                        (
                            STDERR_FILENO,
                            Array(
                                "[orchestrate: \(dropped) bytes of output dropped: its reader did not keep up]\n".utf8)
                        ))
                }
                chunks = []
                waiting = 0
                dropped = 0
                busy = true
                condition.unlock()
                for (descriptor, bytes) in taken { StandardStreams.write(bytes, to: descriptor) }
            }
        }

        func flush(within timeout: Duration) {
            let deadline = Date().addingTimeInterval(
                Double(timeout.components.seconds) + Double(timeout.components.attoseconds) / 1e18)
            condition.lock()
            defer { condition.unlock() }
            while busy || !chunks.isEmpty || dropped > 0 {
                if !condition.wait(until: deadline) { return }
            }
        }
    }
}
