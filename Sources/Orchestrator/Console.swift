import Foundation

/// Where a command's text goes: standard output for results, standard error for progress and notes. Commands take
/// one instead of printing, so that tests and other front ends see what they say.
package struct Console: Sendable {
    private let write: @Sendable (Stream, String) -> Void

    package enum Stream: Sendable {
        case output
        case error
    }

    package init(_ write: @escaping @Sendable (Stream, String) -> Void) {
        self.write = write
    }

    /// The process's own standard output and error.
    package static let standard = Console { stream, text in
        (stream == .output ? FileHandle.standardOutput : FileHandle.standardError).write(Data(text.utf8))
    }

    /// A line of results (standard output).
    package func line(_ text: String) { write(.output, text + "\n") }

    /// A line for people beside the results (standard error).
    package func note(_ text: String) { write(.error, text + "\n") }

    /// Text as it is, on standard error (a live display's control sequences).
    package func raw(_ text: String) { write(.error, text) }
}
