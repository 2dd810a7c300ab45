public struct Cart {
    public var prices: [Int] = []
    public init() {}
    public mutating func add(_ price: Int) { prices.append(price) }
    public var total: Int { prices.reduce(0, +) }
}
