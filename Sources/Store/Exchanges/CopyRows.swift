import NIOCore
import OrchestrateModel

/// Rows in PostgreSQL's COPY text format, ready to send or to spool to a file, one buffer per table.
/// Encoded straight into the buffers (no Foundation formatting, no intermediate strings): this runs for
/// every exchange a mock server answers.
struct CopyRows {
    private var payloads = ByteBuffer()
    private var steps = ByteBuffer()
    private var exchanges = ByteBuffer()
    /// Steps and exchanges (the rows callers count; payloads go with their exchanges).
    private(set) var count = 0

    /// Whether the rows held are exchanges alone (or none).
    var exchangesOnly: Bool { payloads.readableBytes == 0 && steps.readableBytes == 0 }

    /// The COPY text held, in bytes.
    var bytes: Int { payloads.readableBytes + steps.readableBytes + exchanges.readableBytes }

    subscript(table: LogTable) -> ByteBuffer {
        switch table {
        case .payloads: payloads
        case .steps: steps
        case .exchanges: exchanges
        }
    }

    /// The exchange, and the payloads (bodies, header lists) it names that `catalog` has not seen yet.
    mutating func append(_ exchange: Exchange, attemptID: Int64, catalog: inout PayloadCatalog) {
        let requestHeaders = payload(HeaderListEncoder.encode(exchange.requestHeaders), catalog: &catalog)
        let requestBody = payload(exchange.requestBody, catalog: &catalog)
        let responseHeaders = payload(HeaderListEncoder.encode(exchange.responseHeaders), catalog: &catalog)
        let responseBody = payload(exchange.responseBody, catalog: &catalog)
        CopyTextEncoder.append(to: &exchanges) { row in
            row.integer(attemptID)
            row.integer(Int64(exchange.sequence))
            row.text(exchange.mode.rawValue)
            row.text(exchange.matched ? "t" : "f")
            row.text(exchange.host)
            row.text(exchange.method)
            row.text(exchange.url)
            row.bytea(requestHeaders)
            row.bytea(requestBody)
            row.integer(exchange.status.map(Int64.init))
            row.bytea(responseHeaders)
            row.bytea(responseBody)
            row.timestamp(exchange.startedAt)
            row.integer(exchange.durationMicroseconds)
            row.text(exchange.note?.rawValue)
            row.integer(exchange.stepPosition.map(Int64.init))
        }
        count += 1
    }

    /// The payload's digest (nil when empty); a payload new to the catalog gets its row.
    private mutating func payload(_ content: [UInt8], catalog: inout PayloadCatalog) -> [UInt8]? {
        guard !content.isEmpty else { return nil }
        let (digest, isNew) = catalog.digest(of: content)
        if isNew {
            CopyTextEncoder.append(to: &payloads) { row in
                row.bytea(digest)
                row.bytea(content)
            }
        }
        return digest
    }

    mutating func append(_ step: Step, attemptID: Int64) {
        CopyTextEncoder.append(to: &steps) { row in
            row.integer(attemptID)
            row.integer(Int64(step.position))
            row.text(step.keyword)
            row.text(step.name)
            row.text(step.status.rawValue)
            row.timestamp(step.startedAt)
            row.timestamp(step.finishedAt)
            row.text(step.error)
        }
        count += 1
    }

    /// `other`'s rows after these.
    mutating func append(contentsOf other: CopyRows) {
        var (morePayloads, moreSteps, moreExchanges) = (other.payloads, other.steps, other.exchanges)
        payloads.writeBuffer(&morePayloads)
        steps.writeBuffer(&moreSteps)
        exchanges.writeBuffer(&moreExchanges)
        count += other.count
    }
}
