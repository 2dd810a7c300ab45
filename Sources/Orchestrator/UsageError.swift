/// A bad flag or argument: exit 2 with one line.
package struct UsageError: Error, CustomStringConvertible, Sendable {
    package let description: String
    package init(_ description: String) { self.description = description }
}
