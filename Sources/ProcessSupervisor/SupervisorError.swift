#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A command could not be handed to a supervisor: none could be started (no fork, no pipes), or the one there is has
/// died.
package struct SupervisorError: Error, CustomStringConvertible, Sendable {
    package struct Code: Sendable, Hashable, CustomStringConvertible {
        private let name: String
        package static let launchFailed = Code(name: "launchFailed")
        /// The supervisor process is gone (killed): a new one has to be started.
        package static let supervisorDied = Code(name: "supervisorDied")
        package var description: String { name }
    }

    package let code: Code
    package let errno: Int32
    package let executable: String

    package var description: String {
        if code == .supervisorDied { return "could not launch \(executable): its supervisor process died" }
        return "could not launch \(executable): \(String(cString: strerror(errno)))"
    }
}
