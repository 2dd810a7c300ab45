extension Duration {
    /// Whole milliseconds, the unit durations are stored and reported in.
    public var wholeMilliseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1000 + attoseconds / 1_000_000_000_000_000
    }
}
