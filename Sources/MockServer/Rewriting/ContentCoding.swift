import CompressNIO
import Foundation
import NIOCore

/// Bodies in their `Content-Encoding`: gzip and deflate are decoded to be read and changed (rewriting,
/// redaction) and encoded again; anything else (br, zstd) is left as it is.
enum ContentCoding {
    /// The one coding of a body, lower-cased; `nil` for identity.
    static func coding(of headers: [(name: String, value: String)]) -> String? {
        guard let value = headers.value(named: "content-encoding") else { return nil }
        let coding = value.trimmingCharacters(in: .whitespaces).lowercased()
        return coding.isEmpty || coding == "identity" ? nil : coding
    }

    /// The decoded body; `nil` when the coding is one we do not read or the bytes are not valid.
    static func decode(_ body: [UInt8], coding: String, maximumBytes: Int) -> [UInt8]? {
        let algorithms: [CompressionAlgorithm]
        switch coding {
        case "gzip", "x-gzip": algorithms = [.gzip()]
        case "deflate": algorithms = [.zlib(), .deflate()]
        default: return nil
        }
        for algorithm in algorithms {
            var buffer = ByteBuffer(bytes: body)
            if let decoded = try? buffer.decompress(with: algorithm, maxSize: maximumBytes) {
                return Array(buffer: decoded)
            }
        }
        return nil
    }

    static func encode(_ body: [UInt8], coding: String) -> [UInt8]? {
        let algorithm: CompressionAlgorithm
        switch coding {
        case "gzip", "x-gzip": algorithm = .gzip()
        case "deflate": algorithm = .zlib()
        default: return nil
        }
        var buffer = ByteBuffer(bytes: body)
        return (try? buffer.compress(with: algorithm)).map { Array(buffer: $0) }
    }

    /// Changes a body through its coding: decodes, applies `change`, encodes again. Returns `nil` when
    /// nothing changed or the coding cannot be read (the body then goes out as it came).
    static func transform(
        _ body: [UInt8], coding: String?, maximumBytes: Int, _ change: ([UInt8]) -> [UInt8]?
    ) -> [UInt8]? {
        guard let coding else { return change(body) }
        guard let decoded = decode(body, coding: coding, maximumBytes: maximumBytes), let changed = change(decoded)
        else { return nil }
        return encode(changed, coding: coding)
    }
}
