import Foundation
import Logging
import OrchestrateModel

/// swift-log's lines on standard error through ``Console/detached``: a log line never waits on its terminal, never ends
/// the process when the terminal is gone, and what it carries from outside is escaped: a metadata value on one line
/// (``TerminalText/line(_:)``), so that a value with a line break cannot read as a line of its own.
package struct ConsoleLogHandler: LogHandler {
    package var logLevel: Logger.Level = .info
    package var metadata: Logger.Metadata = [:]
    private let label: String

    package init(label: String) {
        self.label = label
    }

    package subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    package func log(event: LogEvent) {
        let fields = metadata.merging(event.metadata ?? [:]) { $1 }.sorted { $0.key < $1.key }.map {
            "\($0.key)=\(TerminalText.line("\($0.value)"))"
        }
        let time = Date().formatted(.iso8601)
        Console.detached.note(
            "\(time) \(event.level) \(label) :\(fields.isEmpty ? "" : " " + fields.joined(separator: " ")) \(event.message)"
        )
    }
}
