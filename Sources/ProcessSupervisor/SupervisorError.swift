#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The supervisor could not be started at all (no fork, no pipes).
public struct SupervisorError: Error, CustomStringConvertible, Sendable {
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        private let name: String
        public static let launchFailed = Code(name: "launchFailed")
        public var description: String { name }
    }

    public let code: Code
    public let errno: Int32
    public let executable: String

    public var description: String {
        "could not launch \(executable): \(String(cString: strerror(errno)))"
    }
}
