import Foundation
import OrchestrateModel

/// The HAR 1.2 subset orchestrate writes and reads (http://www.softwareishard.com/blog/har-12-spec/),
/// with its own extras under `_orchestrate` as the spec allows for custom fields.
public struct HAR: Codable, Sendable, Equatable {
    public var log: Log

    public struct Log: Codable, Sendable, Equatable {
        public var version: String = "1.2"
        public var creator: Creator = Creator()
        public var entries: [Entry] = []
        public var orchestrate: CassetteExtras?

        enum CodingKeys: String, CodingKey {
            case version, creator, entries
            case orchestrate = "_orchestrate"
        }
    }

    public struct Creator: Codable, Sendable, Equatable {
        public var name = "orchestrate"
        public var version = CassetteExtras.currentFormat.description
    }

    public struct Entry: Codable, Sendable, Equatable {
        public var startedDateTime: String
        /// Total milliseconds.
        public var time: Double
        public var request: Request
        public var response: Response
        public var cache: Cache = Cache()
        public var timings: Timings
        public var orchestrate: EntryExtras?

        enum CodingKeys: String, CodingKey {
            case startedDateTime, time, request, response, cache, timings
            case orchestrate = "_orchestrate"
        }
    }

    public struct Request: Codable, Sendable, Equatable {
        public var method: String
        /// The original URL (`https://api.example.com/v1/x?y=1`), not the mock URL.
        public var url: String
        public var httpVersion: String = "HTTP/1.1"
        public var cookies: [NameValue] = []
        public var headers: [NameValue]
        public var queryString: [NameValue]
        public var postData: PostData?
        public var headersSize: Int = -1
        public var bodySize: Int
    }

    public struct Response: Codable, Sendable, Equatable {
        public var status: Int
        public var statusText: String
        public var httpVersion: String = "HTTP/1.1"
        public var cookies: [NameValue] = []
        public var headers: [NameValue]
        public var content: Content
        public var redirectURL: String = ""
        public var headersSize: Int = -1
        public var bodySize: Int
    }

    /// HAR's `{ name, value }` pairs (headers, query, cookies): the exchange log's header type.
    public typealias NameValue = Exchange.Header

    public struct PostData: Codable, Sendable, Equatable {
        public var mimeType: String
        public var text: String
        /// `base64` when the body is not UTF-8 text (an orchestrate extension HAR viewers tolerate).
        public var encoding: String?
    }

    public struct Content: Codable, Sendable, Equatable {
        public var size: Int
        public var mimeType: String
        public var text: String?
        /// `base64` when the body is not UTF-8 text (HAR 1.2).
        public var encoding: String?
    }

    public struct Cache: Codable, Sendable, Equatable {}

    public struct Timings: Codable, Sendable, Equatable {
        public var send: Double = 0
        public var wait: Double
        public var receive: Double = 0
    }
}

/// What a cassette carries besides the exchanges: everything needed to replay a scenario as recorded.
public struct CassetteExtras: Codable, Sendable, Equatable {
    public static let currentFormat = 1

    public var formatVersion: Int = CassetteExtras.currentFormat
    public var scenarioID: String?
    public var seed: UInt32?
    /// ISO 8601: the clock as the recording saw it, given back on replay.
    public var now: String?
    /// Values the scenario asked to be recorded (`recordedRandom(key:)`), given back on replay.
    public var randoms: [String: String] = [:]

    public init(scenarioID: String? = nil, seed: UInt32? = nil, now: String? = nil, randoms: [String: String] = [:]) {
        self.scenarioID = scenarioID
        self.seed = seed
        self.now = now
        self.randoms = randoms
    }
}

/// Per exchange: its place in the recording.
public struct EntryExtras: Codable, Sendable, Equatable {
    /// 1-based order of arrival in the recording.
    public var sequence: Int
    /// The host as the app addressed it (the first path component of the mock URL).
    public var host: String
}

extension HAR.Entry {
    /// The body bytes of a recorded request (empty when it had none).
    var requestBody: [UInt8] {
        guard let postData = request.postData else { return [] }
        return Self.bytes(postData.text, encoding: postData.encoding)
    }

    /// The body bytes of a recorded response.
    var responseBody: [UInt8] {
        guard let text = response.content.text else { return [] }
        return Self.bytes(text, encoding: response.content.encoding)
    }

    static func bytes(_ text: String, encoding: String?) -> [UInt8] {
        if encoding == "base64" { return Data(base64Encoded: text).map { Array($0) } ?? [] }
        return Array(text.utf8)
    }

    /// Text as HAR keeps it: UTF-8 as is, anything else base64.
    static func text(_ bytes: [UInt8]) -> (text: String, encoding: String?) {
        if let text = String(validating: bytes, as: UTF8.self) { return (text, nil) }
        return (Data(bytes).base64EncodedString(), "base64")
    }
}
