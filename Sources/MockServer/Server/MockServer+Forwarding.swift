import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import OrchestrateModel
import Synchronization

extension MockServer {
    /// Sends the request to `url` (record, live, hybrid); returns the upstream's response and how long it took to come
    /// (`nil` when it did not: the response is a 502 saying why).
    func forward(
        _ request: MockRequest, to url: String, exchange: inout Exchange
    ) async -> (MockResponse, upstreamMicroseconds: Int64?) {
        var outgoing = HTTPClientRequest(url: url)
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
        do {
            let upstreamResponse = try await client.execute(outgoing, timeout: .seconds(60))
            let body = try await upstreamResponse.body.collect(upTo: configuration.maximumBodyBytes)
            exchange.matched = true
            let response = MockResponse(
                status: Int(upstreamResponse.status.code),
                headers: upstreamResponse.headers.map { (name: $0.name, value: $0.value) },
                body: Array(buffer: body)
            )
            return (response, (ContinuousClock.now - clock).wholeMicroseconds)
        } catch {
            exchange.note = .upstreamError(Self.reason(error))
            return (.text(502, "orchestrate: \(url) could not be reached: \(error)"), nil)
        }
    }

    /// Why the upstream did not answer, in words that do not change from one attempt to the next and never name the
    /// upstream's own address: a system error by its name (`connection refused`, not NIO's description with the call
    /// and its errno), a connection that could not be made by its first cause; others as they describe themselves.
    static func reason(_ error: any Error) -> String {
        switch error {
        case let error as IOError:
            return String(cString: strerror(error.errnoCode)).lowercased()
        case let error as NIOConnectionError:
            // Happy eyeballs' error lists each address it tried, with the address.
            return error.connectionErrors.first.map { reason($0.error) } ?? "could not connect"
        case let error as ChannelError:
            guard case .connectTimeout = error else { return "\(error)" }
            return "connect timeout"
        case let error as HTTPClientError where error == .connectTimeout:
            return "connect timeout"
        default:
            return "\(error)"
        }
    }

    /// In record mode, adds a forwarded exchange (as it is stored, secrets redacted) to the recording, with the time
    /// the upstream took.
    func record(_ exchange: Exchange, query: String, upstreamMicroseconds: Int64) {
        var recorded = exchange
        recorded.requestHeaders = exchange.requestHeaders.filter { !HopByHop.contains($0.name) }
        recorded.durationMicroseconds = upstreamMicroseconds
        let entry = HAR.Entry(
            recorded,
            queryString: MockRequest.queryItems(query).map { HAR.NameValue(name: $0.name, value: $0.value) },
            statusText: HTTPResponseStatus(statusCode: recorded.status ?? 0).reasonPhrase
        )
        state.withLock { state in
            guard state.session.mode == .record, state.recording != nil else { return }
            var entry = entry
            entry.orchestrate?.sequence = state.recording!.har.log.entries.count + 1
            state.recording!.har.log.entries.append(entry)
        }
    }

    /// The codings of an Accept-Encoding header that the server decodes (gzip, deflate, identity).
    static func readableCodings(_ value: String) -> String {
        value.split(separator: ",").filter { part in
            let coding = part.split(separator: ";").first?.trimmingCharacters(in: .whitespaces).lowercased() ?? ""
            return ["gzip", "x-gzip", "deflate", "identity"].contains(coding)
        }.map { $0.trimmingCharacters(in: .whitespaces) }.joined(separator: ", ")
    }
}
