#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A TCP port on 127.0.0.1 held by a bound, listening socket for as long as the lease lives.
///
/// Bind-and-hold, never check-then-bind: the kernel hands out the port and nobody else — no other
/// slot, no concurrent run on the same host — can get it while it is held. The mock server of the
/// slot adopts the descriptor.
package final class PortLease: Sendable {
    package let port: Int
    /// The listening socket (close-on-exec).
    package let descriptor: Int32

    private init(port: Int, descriptor: Int32) {
        self.port = port
        self.descriptor = descriptor
    }

    /// Binds a free port on 127.0.0.1 chosen by the kernel.
    package static func acquire() throws(CoordinatorError) -> PortLease {
        #if canImport(Glibc)
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        #else
        let descriptor = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard descriptor >= 0 else {
            throw CoordinatorError(.noFreePort, "cannot open a socket: \(String(cString: strerror(errno)))")
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0, listen(descriptor, 128) == 0 else {
            let reason = String(cString: strerror(errno))
            close(descriptor)
            throw CoordinatorError(.noFreePort, "cannot bind a port on 127.0.0.1: \(reason)")
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        return PortLease(port: Int(UInt16(bigEndian: address.sin_port)), descriptor: descriptor)
    }

    deinit {
        close(descriptor)
    }
}
