import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import OrchestrateModel
import Synchronization

extension MockServer {
    /// Sends the request to the upstream (record, live, hybrid); in record mode the exchange joins the recording.
    func forward(_ request: MockRequest, to upstream: String, loggedBody: [UInt8], exchange: inout Exchange) async -> MockResponse {
        var outgoing = HTTPClientRequest(url: exchange.url)
        outgoing.method = HTTPMethod(rawValue: request.method)
        for header in request.headers where !HopByHop.contains(header.name) {
            // Only codings the server can read back for rewriting and redaction.
            if header.name.equalsIgnoringASCIICase("accept-encoding") {
                let readable = Self.readableCodings(header.value)
                if !readable.isEmpty { outgoing.headers.add(name: header.name, value: readable) }
                continue
            }
            outgoing.headers.add(name: header.name, value: header.value)
        }
        if !request.body.isEmpty { outgoing.body = .bytes(ByteBuffer(bytes: request.body)) }
        let clock = ContinuousClock.now
        let response: MockResponse
        do {
            let upstreamResponse = try await client.execute(outgoing, timeout: .seconds(60))
            let body = try await upstreamResponse.body.collect(upTo: configuration.maximumBodyBytes)
            response = MockResponse(
                status: Int(upstreamResponse.status.code),
                headers: upstreamResponse.headers.map { (name: $0.name, value: $0.value) },
                body: Array(buffer: body)
            )
        } catch {
            exchange.note = "upstream error: \(error)"
            return .text(502, "orchestrate: \(exchange.url) could not be reached: \(error)")
        }
        exchange.matched = true
        let elapsed = Double((ContinuousClock.now - clock).wholeMicroseconds) / 1000
        var logged = request
        logged.body = loggedBody
        let entry = recordedEntry(logged, exchange: exchange, response: response, milliseconds: elapsed)
        state.withLock { state in
            guard state.session.mode == .record, state.recording != nil else { return }
            var entry = entry
            entry.orchestrate?.sequence = state.recording!.har.log.entries.count + 1
            state.recording!.har.log.entries.append(entry)
        }
        return response
    }

    /// The codings of an Accept-Encoding header that the server decodes (gzip, deflate, identity).
    static func readableCodings(_ value: String) -> String {
        value.split(separator: ",").filter { part in
            let coding = part.split(separator: ";").first?.trimmingCharacters(in: .whitespaces).lowercased() ?? ""
            return ["gzip", "x-gzip", "deflate", "identity"].contains(coding)
        }.map { $0.trimmingCharacters(in: .whitespaces) }.joined(separator: ", ")
    }

    /// A HAR entry for a forwarded exchange, secrets redacted (the request's body already is).
    private func recordedEntry(_ request: MockRequest, exchange: Exchange, response: MockResponse, milliseconds: Double) -> HAR.Entry {
        var recorded = exchange
        recorded.requestHeaders = redactor.headers(request.headers.filter { !HopByHop.contains($0.name) })
        recorded.requestBody = request.body
        recorded.status = response.status
        recorded.responseHeaders = redactor.headers(response.headers)
        recorded.responseBody = redactor.body(response.body, headers: response.headers)
        recorded.durationMicroseconds = Int64((milliseconds * 1000).rounded())
        return HAR.Entry(
            recorded,
            queryString: MockRequest.queryItems(request.rawQuery).map { HAR.NameValue(name: $0.name, value: $0.value) },
            statusText: HTTPResponseStatus(statusCode: response.status).reasonPhrase
        )
    }
}
