import Foundation

/// A folder for one test, removed afterwards. Under /tmp so an unprivileged server user can reach it.
public struct TemporaryDirectory: Sendable {
    public let path: String

    public init() throws {
        path = "/tmp/orch-t-\(UUID().uuidString.prefix(8).lowercased())"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    public func file(_ name: String) -> String { "\(path)/\(name)" }

    public func write(_ name: String, _ text: String) throws {
        let url = URL(fileURLWithPath: file(name))
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(text.utf8).write(to: url)
    }

    public func read(_ name: String) -> String {
        (try? String(contentsOfFile: file(name), encoding: .utf8)) ?? ""
    }

    public func remove() {
        try? FileManager.default.removeItem(atPath: path)
    }

    /// Runs `body` with a new folder and removes it afterwards.
    public static func with<R>(_ body: (TemporaryDirectory) async throws -> R) async throws -> R {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        return try await body(directory)
    }
}
