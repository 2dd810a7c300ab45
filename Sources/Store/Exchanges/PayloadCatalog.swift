import Crypto

/// The payloads a writer has already put on their way to the database (in a batch or a spool file),
/// so that each distinct body or header list is written once, however often it is served.
///
/// A payload is named by the first 16 bytes of the SHA-256 of its bytes: half the text of the whole digest in each of
/// the four digests of an exchange row, and parsing that text is most of PostgreSQL's work. Payloads stored before
/// under 32-byte digests stay as they are; a body seen again is stored once more under its shorter name. Hashing is
/// skipped for a small payload seen before (looked up by content) and for a larger array seen recently: the catalog
/// keeps such arrays alive, so the same storage address means the same bytes (a replayed response body is one array,
/// served over and over). What it keeps alive is bounded in bytes (``recentBytesLimit``), so that a burst of large
/// uploads is let go once it is logged.
package struct PayloadCatalog {
    /// Bytes as a key, hashed in one pass: an array of bytes hashes itself a byte at a time, too slow for a mock server
    /// logging tens of thousands of exchanges a second.
    private struct Bytes: Hashable {
        let bytes: [UInt8]

        func hash(into hasher: inout Hasher) {
            bytes.withUnsafeBytes { hasher.combine(bytes: $0) }
        }
    }

    private var sent: Set<Bytes> = []
    /// Arrays seen recently, by storage address, and their bytes in all.
    private var recent: [UnsafeRawPointer: (body: [UInt8], digest: [UInt8])] = [:]
    private var recentBytes = 0
    /// The most bytes of arrays kept alive for their address (a few large replayed bodies fit; a burst of uploads does
    /// not stay).
    package static let recentBytesLimit = 16 << 20
    /// Small payloads seen (header lists, short bodies), by content: a lookup instead of a hash.
    private var small: [Bytes: [UInt8]] = [:]
    private let limit: Int

    package init(limit: Int = 100_000) {
        self.limit = limit
    }

    /// The payload's digest, and whether the catalog saw it for the first time.
    package mutating func digest(of payload: [UInt8]) -> (digest: [UInt8], isNew: Bool) {
        let address = payload.withUnsafeBytes { $0.baseAddress }
        if let address, let known = recent[address], known.body.count == payload.count {
            return (known.digest, false)
        }
        let isSmall = payload.count <= 512
        if isSmall, let known = small[Bytes(bytes: payload)] { return (known, false) }
        let digest = Array(SHA256.hash(data: payload).prefix(16))
        if isSmall {
            if small.count >= 4096 { small.removeAll(keepingCapacity: true) }
            small[Bytes(bytes: payload)] = digest
        } else if let address, payload.count <= Self.recentBytesLimit {
            if recent.count >= 1024 || recentBytes + payload.count > Self.recentBytesLimit {
                recent.removeAll(keepingCapacity: true)
                recentBytes = 0
            }
            recent[address] = (payload, digest)
            recentBytes += payload.count
        }
        // Forgetting only costs a payload written again (the insert skips those already there).
        if sent.count >= limit { sent.removeAll(keepingCapacity: true) }
        return (digest, sent.insert(Bytes(bytes: digest)).inserted)
    }
}
