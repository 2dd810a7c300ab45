import OrchestrateModel

/// Bad usage: a flag or argument the command cannot use, or something it names that is not there. Exit 2 with one line
/// (the message), checked before any work starts where it can be.
package struct UsageError: CodedError {
    package typealias Code = ErrorCode<UsageError>

    package let code: Code
    package let message: String

    package init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }
}

extension ErrorCode where Domain == UsageError {
    /// A value a flag or argument cannot take (a tag expression that does not parse, an address it cannot listen on).
    package static let badValue = Self("badValue")
    /// A flag or argument the command needs in this use (`--cassette` to replay, a scenario to quarantine).
    package static let missingValue = Self("missingValue")
    /// What a flag or argument names is not there (a run, a scenario, an attempt, a run under a join key).
    package static let notFound = Self("notFound")
    /// A file or folder the command is asked to write cannot be written there.
    package static let cannotWrite = Self("cannotWrite")
    /// More than this host can do (worker slots past its open-file limit).
    package static let beyondHost = Self("beyondHost")
    /// The command does not apply to what was chosen (exposing or stopping a database orchestrate did not start).
    package static let notApplicable = Self("notApplicable")
}
