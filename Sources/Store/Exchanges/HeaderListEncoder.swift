import OrchestrateModel

/// A header list as stored: a JSON array of {"name", "value"} objects, as compact as `jsonb` reads it (`exchange_log`
/// casts it back). Written by hand: it runs for both header lists of every exchange.
package enum HeaderListEncoder {
    /// The JSON bytes of `headers`; none for an empty list (stored as no payload).
    package static func encode(_ headers: [Exchange.Header]) -> [UInt8] {
        guard !headers.isEmpty else { return [] }
        var json: [UInt8] = [UInt8(ascii: "[")]
        json.reserveCapacity(headers.reduce(2) { $0 + $1.name.utf8.count + $1.value.utf8.count + 24 })
        for (index, header) in headers.enumerated() {
            if index > 0 { json.append(UInt8(ascii: ",")) }
            json.append(contentsOf: #"{"name":"#.utf8)
            string(header.name, into: &json)
            json.append(contentsOf: #","value":"#.utf8)
            string(header.value, into: &json)
            json.append(UInt8(ascii: "}"))
        }
        json.append(UInt8(ascii: "]"))
        return json
    }

    private static func string(_ text: String, into json: inout [UInt8]) {
        json.append(UInt8(ascii: "\""))
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"):
                json.append(UInt8(ascii: "\\"))
                json.append(byte)
            case 0..<0x20:
                json.append(contentsOf: "\\u00".utf8)
                json.append(hexDigit(byte >> 4))
                json.append(hexDigit(byte & 0x0f))
            default:
                json.append(byte)
            }
        }
        json.append(UInt8(ascii: "\""))
    }
}
