import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Secret values, replaced by ``placeholder`` wherever they appear in what is stored: bodies, URLs, header values,
/// captured output. A value is searched as it is and in the forms it takes inside a JSON string and in a
/// percent-encoded URL. Values shorter than ``minimumLength`` bytes are not searched for (they would match ordinary
/// text); where they are named (a redacted header, JSON field or environment variable) they are replaced all the same.
package struct Secrets: Sendable, Equatable {
    /// What stands in for a secret.
    package static let placeholder = "[REDACTED]"
    /// The shortest value searched for, in bytes.
    package static let minimumLength = 6

    /// The values as given.
    package private(set) var values: Set<String> = []
    /// Every searched form of every value, longest first (a longer form wins where two start at one place).
    private var forms: [[UInt8]] = []

    package init() {}

    package init(_ values: some Sequence<String>) {
        for value in values { insert(value) }
    }

    package var isEmpty: Bool { forms.isEmpty }

    /// Adds a value (and its forms inside a JSON string, `/` escaped or not, and in a URL); one too short, or known
    /// already, changes nothing. Returns whether it was added.
    @discardableResult
    package mutating func insert(_ value: String) -> Bool {
        guard value.utf8.count >= Self.minimumLength, value != Self.placeholder, values.insert(value).inserted else {
            return false
        }
        for form in [
            value, JSONValue.escaped(value), JSONValue.escaped(value, slashes: true), Self.percentEncoded(value),
        ] {
            let bytes = Array(form.utf8)
            if !forms.contains(bytes) { forms.append(bytes) }
        }
        forms.sort { $0.count > $1.count }
        return true
    }

    package mutating func formUnion(_ other: Secrets) {
        for value in other.values { insert(value) }
    }

    /// `bytes` with every secret replaced; `nil` when none appears in them.
    package func scrubbed(_ bytes: [UInt8]) -> [UInt8]? {
        guard !forms.isEmpty, !bytes.isEmpty else { return nil }
        return bytes.withUnsafeBufferPointer { haystack -> [UInt8]? in
            // The next place of each form at or after `position`; forms that do not appear again drop out.
            var next: [(form: Int, at: Int)] = forms.indices.compactMap { index in
                Self.find(forms[index], in: haystack, from: 0).map { (index, $0) }
            }
            guard !next.isEmpty else { return nil }
            var result: [UInt8] = []
            result.reserveCapacity(bytes.count)
            var position = 0
            let placeholder = Array(Self.placeholder.utf8)
            while !next.isEmpty {
                // The earliest match; of those starting together, the longest (forms are sorted longest first).
                var best = 0
                for candidate in next.indices.dropFirst()
                where next[candidate].at < next[best].at
                    || (next[candidate].at == next[best].at && next[candidate].form < next[best].form)
                {
                    best = candidate
                }
                let (form, at) = next[best]
                result.append(contentsOf: haystack[position..<at])
                result.append(contentsOf: placeholder)
                position = at + forms[form].count
                next = next.compactMap { entry in
                    if entry.at >= position { return entry }
                    return Self.find(forms[entry.form], in: haystack, from: position).map { (entry.form, $0) }
                }
            }
            result.append(contentsOf: haystack[position...])
            return result
        }
    }

    /// `text` with every secret replaced.
    package func scrubbed(_ text: String) -> String {
        guard !forms.isEmpty, let changed = scrubbed(Array(text.utf8)) else { return text }
        return String(decoding: changed, as: UTF8.self)
    }

    /// Where `needle` next starts in `haystack` at or after `start`: memchr to each place its first byte is, then
    /// memcmp.
    private static func find(_ needle: [UInt8], in haystack: UnsafeBufferPointer<UInt8>, from start: Int) -> Int? {
        guard let base = haystack.baseAddress, let first = needle.first else { return nil }
        let last = haystack.count - needle.count
        var position = start
        return needle.withUnsafeBytes { needleBytes -> Int? in
            while position <= last {
                guard let hit = memchr(base + position, Int32(first), last - position + 1) else { return nil }
                let at = UnsafeRawPointer(hit) - UnsafeRawPointer(base)
                if memcmp(base + at, needleBytes.baseAddress!, needle.count) == 0 { return at }
                position = at + 1
            }
            return nil
        }
    }

    /// The value percent-encoded as in a URL's query (every byte but the unreserved ones).
    static func percentEncoded(_ value: String) -> String {
        value.addingPercentEncoding(withAllowedCharacters: unreserved) ?? value
    }

    private static let unreserved = CharacterSet(
        charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
}

extension Secrets {
    /// Whether an environment variable's name looks like it holds a secret: it contains TOKEN, SECRET, PASSWORD or KEY
    /// (in any case).
    package static func looksSecret(_ name: String) -> Bool {
        let upper = name.uppercased()
        return ["TOKEN", "SECRET", "PASSWORD", "KEY"].contains { upper.contains($0) }
    }
}

/// The secret environment values of a run's scenarios (named in `redact.env`, or ``Secrets/looksSecret(_:)``): never
/// stored (the plan holds ``Secrets/placeholder`` in their place), given to each attempt from here, and replaced
/// wherever they appear in its exchanges and output.
package struct SecretEnvironment: Sendable {
    /// The values every scenario gets (`suite.env`).
    package var common: [String: String] = [:]
    /// The values a scenario sets itself, on top of the common ones, by scenario id.
    package var byScenario: [String: [String: String]] = [:]
    /// Every value to scrub: the scenarios' and the secret ones the run inherits from its own environment.
    package var secrets = Secrets()

    package init() {}

    /// The value of `name` for scenario `id`; `nil` when it is not a secret known here.
    package func value(_ name: String, scenario id: String) -> String? {
        byScenario[id]?[name] ?? common[name]
    }
}

extension Scenario {
    /// The scenario as it is stored: the values of its secret variables replaced by ``Secrets/placeholder``.
    package func withSecretsRedacted(_ isSecret: (String) -> Bool) -> Scenario {
        var copy = self
        for name in environment.keys where isSecret(name) { copy.environment[name] = Secrets.placeholder }
        return copy
    }
}
