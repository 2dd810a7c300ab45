/// What kind of failure an error of `Domain` is: what a program checks, beside the message a person reads. Each error
/// type names its codes in an extension:
///
/// ```swift
/// extension ErrorCode where Domain == UsageError {
///     package static let notFound = Self("notFound")
/// }
/// ```
package struct ErrorCode<Domain>: Sendable, Hashable, CustomStringConvertible {
    private let name: String

    package init(_ name: String) {
        self.name = name
    }

    package var description: String { name }
}

/// The shape of orchestrate's errors, as postgres-nio's: a ``code`` a program can check and a ``message`` a person can
/// act on, which is what the error says unless it says more (a `file:line`).
package protocol CodedError: Error, CustomStringConvertible, Sendable {
    var code: ErrorCode<Self> { get }
    var message: String { get }
}

extension CodedError {
    package var description: String { message }
}
