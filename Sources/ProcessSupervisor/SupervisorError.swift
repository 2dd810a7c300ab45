#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The supervisor could not be started at all (no fork, no pipes).
package struct SupervisorError: Error, CustomStringConvertible, Sendable {
    package struct Code: Sendable, Hashable, CustomStringConvertible {
        private let name: String
        package static let launchFailed = Code(name: "launchFailed")
        package var description: String { name }
    }

    package let code: Code
    package let errno: Int32
    package let executable: String

    package var description: String {
        "could not launch \(executable): \(String(cString: strerror(errno)))"
    }
}
