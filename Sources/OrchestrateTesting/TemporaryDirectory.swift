import Foundation

/// A folder for one test, removed afterwards. Under /tmp so an unprivileged server user can reach it.
package struct TemporaryDirectory: Sendable {
    package let path: String

    package init() throws {
        path = "/tmp/orch-t-\(UUID().uuidString.prefix(8).lowercased())"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    package func file(_ name: String) -> String { "\(path)/\(name)" }

    package func write(_ name: String, _ text: String) throws {
        let url = URL(fileURLWithPath: file(name))
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(text.utf8).write(to: url)
    }

    package func read(_ name: String) -> String {
        (try? String(contentsOfFile: file(name), encoding: .utf8)) ?? ""
    }

    package func remove() {
        try? FileManager.default.removeItem(atPath: path)
    }

    /// Runs `body` with a new folder and removes it afterwards.
    package static func with<R>(_ body: (TemporaryDirectory) async throws -> R) async throws -> R {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        return try await body(directory)
    }
}
