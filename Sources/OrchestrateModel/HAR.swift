import Foundation

/// The HAR 1.2 subset orchestrate writes and reads (http://www.softwareishard.com/blog/har-12-spec/),
/// with its own extras under `_orchestrate` as the spec allows for custom fields.
package struct HAR: Codable, Sendable, Equatable {
    package var log: Log

    package init(log: Log) {
        self.log = log
    }

    package struct Log: Codable, Sendable, Equatable {
        package var version: String = "1.2"
        package var creator: Creator = Creator()
        package var entries: [Entry] = []
        package var orchestrate: CassetteExtras?

        package init(entries: [Entry] = [], orchestrate: CassetteExtras? = nil) {
            self.entries = entries
            self.orchestrate = orchestrate
        }

        enum CodingKeys: String, CodingKey {
            case version, creator, entries
            case orchestrate = "_orchestrate"
        }
    }

    package struct Creator: Codable, Sendable, Equatable {
        package var name = "orchestrate"
        package var version = CassetteExtras.currentFormat.description
    }

    package struct Entry: Codable, Sendable, Equatable {
        package var startedDateTime: String
        /// Total milliseconds.
        package var time: Double
        package var request: Request
        package var response: Response
        package var cache: Cache = Cache()
        package var timings: Timings
        package var orchestrate: EntryExtras?

        enum CodingKeys: String, CodingKey {
            case startedDateTime, time, request, response, cache, timings
            case orchestrate = "_orchestrate"
        }
    }

    package struct Request: Codable, Sendable, Equatable {
        package var method: String
        /// The original URL (`https://api.example.com/v1/x?y=1`), not the mock URL.
        package var url: String
        package var httpVersion: String = "HTTP/1.1"
        package var cookies: [NameValue] = []
        package var headers: [NameValue]
        package var queryString: [NameValue]
        package var postData: PostData?
        package var headersSize: Int = -1
        package var bodySize: Int
    }

    package struct Response: Codable, Sendable, Equatable {
        package var status: Int
        package var statusText: String
        package var httpVersion: String = "HTTP/1.1"
        package var cookies: [NameValue] = []
        package var headers: [NameValue]
        package var content: Content
        package var redirectURL: String = ""
        package var headersSize: Int = -1
        package var bodySize: Int
    }

    /// HAR's `{ name, value }` pairs (headers, query, cookies): the exchange log's header type.
    package typealias NameValue = Exchange.Header

    package struct PostData: Codable, Sendable, Equatable {
        package var mimeType: String
        package var text: String
        /// `base64` when the body is not UTF-8 text (an orchestrate extension HAR viewers tolerate).
        package var encoding: String?
    }

    package struct Content: Codable, Sendable, Equatable {
        package var size: Int
        package var mimeType: String
        package var text: String?
        /// `base64` when the body is not UTF-8 text (HAR 1.2).
        package var encoding: String?
    }

    package struct Cache: Codable, Sendable, Equatable {}

    package struct Timings: Codable, Sendable, Equatable {
        package var send: Double = 0
        package var wait: Double
        package var receive: Double = 0
    }
}

/// What a cassette carries besides the exchanges: everything needed to replay a scenario as recorded.
package struct CassetteExtras: Codable, Sendable, Equatable {
    package static let currentFormat = 1

    package var formatVersion: Int = CassetteExtras.currentFormat
    package var scenarioID: String?
    package var seed: UInt32?
    /// ISO 8601: the clock as the recording saw it, given back on replay.
    package var now: String?
    /// Values the scenario asked to be recorded (`recordedRandom(key:)`), given back on replay.
    package var randoms: [String: String] = [:]

    package init(scenarioID: String? = nil, seed: UInt32? = nil, now: String? = nil, randoms: [String: String] = [:]) {
        self.scenarioID = scenarioID
        self.seed = seed
        self.now = now
        self.randoms = randoms
    }
}

/// Per exchange: its place in the recording.
package struct EntryExtras: Codable, Sendable, Equatable {
    /// 1-based order of arrival in the recording.
    package var sequence: Int
    /// The host as the app addressed it (the first path component of the mock URL).
    package var host: String
    /// The step open when the request arrived (its position in the attempt); absent in cassettes before steps.
    package var step: Int?
    /// The attempt's mode and whether a recording or stub answered; in exported logs, not in cassettes.
    package var mode: Mode?
    package var matched: Bool?
    /// Why the exchange was unusual (a near miss, a refused host); in exported logs.
    package var note: String?

    package init(
        sequence: Int, host: String, step: Int? = nil, mode: Mode? = nil, matched: Bool? = nil, note: String? = nil
    ) {
        self.sequence = sequence
        self.host = host
        self.step = step
        self.mode = mode
        self.matched = matched
        self.note = note
    }
}

extension HAR {
    /// The exchanges of an attempt as a HAR document (`orchestrate logs --har`, report attachments).
    package init(exchanges: [Exchange]) {
        self.init(log: Log(entries: exchanges.map { Entry($0, annotated: true) }))
    }
}

extension HAR.Entry {
    /// The entry of an exchange (secrets are already redacted in exchanges). `annotated` adds the exchange's mode,
    /// match and note to `_orchestrate` (exported logs; cassettes leave them out). An exchange without a
    /// response (a fault) gets status 0, as HAR does for requests that got no answer.
    package init(
        _ exchange: Exchange, queryString: [HAR.NameValue]? = nil, statusText: String = "", annotated: Bool = false
    ) {
        let requestBody = Self.text(exchange.requestBody)
        let responseBody = Self.text(exchange.responseBody)
        let milliseconds = Double(exchange.durationMicroseconds) / 1000
        func header(_ name: String, in headers: [HAR.NameValue]) -> String? {
            headers.first { $0.name.lowercased() == name }?.value
        }
        let query =
            queryString
            ?? (URLComponents(string: exchange.url)?.queryItems ?? []).map {
                HAR.NameValue(name: $0.name, value: $0.value ?? "")
            }
        self.init(
            startedDateTime: exchange.startedAt.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true)),
            time: milliseconds,
            request: HAR.Request(
                method: exchange.method, url: exchange.url, headers: exchange.requestHeaders, queryString: query,
                postData: exchange.requestBody.isEmpty
                    ? nil
                    : HAR.PostData(
                        mimeType: header("content-type", in: exchange.requestHeaders) ?? "", text: requestBody.text,
                        encoding: requestBody.encoding
                    ),
                bodySize: exchange.requestBody.count
            ),
            response: HAR.Response(
                status: exchange.status ?? 0, statusText: statusText, headers: exchange.responseHeaders,
                content: HAR.Content(
                    size: exchange.responseBody.count,
                    mimeType: header("content-type", in: exchange.responseHeaders) ?? "",
                    text: responseBody.text, encoding: responseBody.encoding
                ),
                bodySize: exchange.status == nil ? -1 : exchange.responseBody.count
            ),
            timings: HAR.Timings(wait: milliseconds),
            orchestrate: EntryExtras(
                sequence: exchange.sequence, host: exchange.host, step: exchange.stepPosition,
                mode: annotated ? exchange.mode : nil, matched: annotated ? exchange.matched : nil,
                note: annotated ? exchange.note?.rawValue : nil
            )
        )
    }

    /// The recorded exchange back as an ``Exchange`` (the recording's side of a network diff).
    package func exchange(mode: Mode = .record) -> Exchange {
        let started =
            (try? Date(startedDateTime, strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: true)))
            ?? (try? Date(startedDateTime, strategy: .iso8601)) ?? Date(timeIntervalSince1970: 0)
        return Exchange(
            sequence: orchestrate?.sequence ?? 0, mode: mode, matched: true,
            host: orchestrate?.host ?? URLComponents(string: request.url)?.host ?? "",
            method: request.method, url: request.url, requestHeaders: request.headers, requestBody: requestBody,
            status: response.status, responseHeaders: response.headers, responseBody: responseBody, startedAt: started,
            durationMicroseconds: Int64((time * 1000).rounded()), stepPosition: orchestrate?.step
        )
    }

    /// The body bytes of a recorded request (empty when it had none).
    package var requestBody: [UInt8] {
        guard let postData = request.postData else { return [] }
        return Self.bytes(postData.text, encoding: postData.encoding)
    }

    /// The body bytes of a recorded response.
    package var responseBody: [UInt8] {
        guard let text = response.content.text else { return [] }
        return Self.bytes(text, encoding: response.content.encoding)
    }

    package static func bytes(_ text: String, encoding: String?) -> [UInt8] {
        if encoding == "base64" { return Data(base64Encoded: text).map { Array($0) } ?? [] }
        return Array(text.utf8)
    }

    /// Text as HAR keeps it: UTF-8 as is, anything else base64.
    package static func text(_ bytes: [UInt8]) -> (text: String, encoding: String?) {
        if let text = String(validating: bytes, as: UTF8.self) { return (text, nil) }
        return (Data(bytes).base64EncodedString(), "base64")
    }
}
