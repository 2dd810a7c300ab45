import Foundation
import Gherkin
import Suites

/// `orchestrate gherkin pickles FILE...`: Cucumber Messages NDJSON of feature files.
package enum GherkinCommands {
    /// Writes one envelope per line to `output`: each file's pickles, or its parse errors (each also as one
    /// `file:line:column: message` line on `errors`). Returns the exit status: 0, or 2 when a file does not parse
    /// or cannot be read.
    package static func pickles(files: [String], output: (String) -> Void, errors: (String) -> Void) -> Int32 {
        var status: Int32 = 0
        for file in files {
            guard let data = FileManager.default.contents(atPath: file),
                let source = String(data: data, encoding: .utf8)
            else {
                let exists = FileManager.default.fileExists(atPath: file)
                errors("error: \(file): \(exists ? "not a readable UTF-8 file" : "no such file")")
                status = ExitStatus.badInput
                continue
            }
            for envelope in Envelope.of(source: source, uri: file) {
                if case .parseError(let error, _) = envelope {
                    errors("\(file):\(error.location.line):\(error.location.column ?? 0): \(error.message)")
                    status = ExitStatus.badInput
                }
                // Encoding plain strings and numbers cannot fail.
                output(
                    String(decoding: (try? FeatureDiscovery.messagesEncoder.encode(envelope)) ?? Data(), as: UTF8.self))
            }
        }
        return status
    }
}
