import Testing

@testable import Store

/// A released migration is never edited (databases that applied it never apply it again): each one's SQL, as the
/// code makes it, keeps the digest it was released with. A new migration gets its digest here when it is added.
@Suite("Released migrations")
struct ReleasedMigrationTests {
    /// FNV-1a (64 bits) of each migration's SQL, by version.
    static let released: [Int: UInt64] = [
        1: 0x296d678ec4a48892,
        2: 0x572f0a776dd2db9b,
        3: 0x7458506908dbee7,
        4: 0x920524681068cc91,
        5: 0xf24d42e4f97fada6,
        6: 0x51c31546dbd4d291,
        7: 0x8dda1b02850ad334,
        8: 0x84d3c7228c81a046,
        9: 0x26f5f0fb81a6f21e,
        10: 0xc4343340d7e5a487,
        11: 0x65b62832180dc633,
        12: 0xeb9cf7415bb95e4e,
        13: 0x5a0decc4a7de4f2,
        14: 0x3df0047a334dfa7c,
        15: 0x38caf7f36192fa98,
        16: 0x7154298b2e573da7,
        17: 0x313ab2284da2ee91,
        18: 0x9ece9f49bf1b9195,
        19: 0x7e549c748847519d,
        20: 0x7a7f3983befbb147,
        21: 0x974bcd8ad7fceb2c,
        22: 0x665843ff5301d220,
        23: 0x7c6f9e3fea67559c,
        24: 0xff34e0f6729426a3,
        25: 0xa06eb50eaca455c0,
        26: 0x18e79bf1bfffc7a5,
        27: 0x6bbbaf7e19b619ab,
        28: 0xd0479ac23189145f,
        29: 0x7a721c82fb71265d,
        30: 0x9cb37e359a06b7e4,
        31: 0x52ae884b3c1cc4d4,
        32: 0x1b96b0c82ea33c94,
        33: 0x37f32b3219799e2a,
        34: 0x22d38f09f04a6580,
    ]

    static func digest(_ text: String) -> UInt64 {
        text.utf8.reduce(0xcbf2_9ce4_8422_2325) { ($0 ^ UInt64($1)) &* 0x100_0000_01b3 }
    }

    @Test("every released migration's SQL is as it was released, and every migration has a digest here")
    func unchanged() {
        let current = Dictionary(uniqueKeysWithValues: Migrations.all.map { ($0.version, Self.digest($0.sql)) })
        let missing = current.keys.filter { Self.released[$0] == nil }.sorted()
        #expect(
            missing.isEmpty,
            "a new migration's digest goes in released: \(missing.map { "\($0): 0x\(String(current[$0]!, radix: 16))" })"
        )
        #expect(Set(Self.released.keys).isSubset(of: current.keys), "a released migration is never removed")
        for (version, digest) in Self.released {
            #expect(current[version] == digest, "migration \(version) was edited after its release: add a new one")
        }
    }
}
