import Foundation
import OrchestrateModel

/// A libpq password file: `hostname:port:database:username:password` per line, `*` matching anything, `\:` and `\\`
/// escaped. The embedded cluster keeps its generated passwords in such files (mode 0600), so that psql reads them too
/// (`passfile=` in the database URL) and no password is ever printed.
package enum PasswordFile {
    /// The password of the first line that matches `username` and `database`; `nil` when there is none (or no file).
    package static func password(in path: String, username: String, database: String) -> String? {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return nil }
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            let fields = split(line)
            guard fields.count == 5 else { continue }
            if (fields[2] == "*" || fields[2] == database) && (fields[3] == "*" || fields[3] == username) {
                return fields[4]
            }
        }
        return nil
    }

    /// Writes a file that gives `password` to `username` on every host, port and database: mode 0600, whole
    /// (``AtomicFile``).
    static func store(_ path: String, username: String, password: String) throws(StoreError) {
        let text =
            "# orchestrate's embedded PostgreSQL: generated, keep it private\n*:*:*:\(escape(username)):\(escape(password))\n"
        do {
            try AtomicFile.write(text, to: path, permissions: 0o600)
        } catch {
            throw StoreError(.clusterFailed, "cannot write \(path): \(error.localizedDescription)")
        }
    }

    /// A fresh password: 24 random bytes as hex.
    static func generate() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<24).map { _ in String(format: "%02x", UInt8.random(in: 0...255, using: &generator)) }.joined()
    }

    private static func escape(_ field: String) -> String {
        field.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: ":", with: "\\:")
    }

    /// The fields of a line, `\` escapes undone.
    private static func split(_ line: Substring) -> [String] {
        var fields: [String] = []
        var current = ""
        var escaped = false
        for character in line {
            if escaped {
                current.append(character)
                escaped = false
            } else if character == "\\" {
                escaped = true
            } else if character == ":" && fields.count < 4 {
                fields.append(current)
                current = ""
            } else {
                current.append(character)
            }
        }
        fields.append(current)
        return fields
    }
}
