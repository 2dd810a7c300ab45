import Synchronization

extension MockServer {
    /// A replayed response with its URLs rewritten for `mockBase`, kept in the session for the next request that gets
    /// it.
    func rewrittenReply(_ index: Int, _ reply: MockResponse, mockBase: String) -> MockResponse {
        var rewritten = reply
        rewriteURLs(&rewritten, mockBase: mockBase)
        state.withLock { $0.rewrittenReplies[SessionState.ReplyKey(index: index, base: mockBase)] = rewritten }
        return rewritten
    }

    /// This server's URL as the app addresses it (its Host header).
    func mockBase(_ requestHeaders: [(name: String, value: String)]) -> String {
        "http://" + (requestHeaders.value(named: "host") ?? "127.0.0.1:\(port ?? 0)")
    }

    /// Absolute URLs of configured hosts in the body and the link headers point back at this server.
    func rewriteURLs(_ response: inout MockResponse, mockBase: String) {
        guard !rewriter.isEmpty else { return }
        response.headers = rewriter.rewrite(headers: response.headers, mockBase: mockBase)
        let coding = ContentCoding.coding(of: response.headers)
        if let body = ContentCoding.transform(
            response.body, coding: coding, maximumBytes: configuration.maximumBodyBytes,
            {
                rewriter.rewrite($0, mockBase: mockBase)
            })
        {
            response.body = body
        }
    }
}
