import Foundation
import ProcessSupervisor
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Hosts for tests that need several: Linux network namespaces, each with its own loopback, host name (a UTS
/// namespace per command) and a veth link to a bridge in the test's namespace, on a private /24 that the test makes
/// and removes. No traffic leaves the machine. Needs root (CAP_NET_ADMIN); without it ``make(count:)`` throws — a test
/// that needs hosts fails, it never skips.
///
/// ```swift
/// try await NetworkHosts.with(count: 3) { hosts in
///     let server = hosts.gateway            // 10.x.y.1, an address of this namespace on the bridge
///     let process = try hosts.launch(1, executable, ["run", …], directory: …, environment: …)
///     try hosts.setLink(3, up: false)       // a partition
/// }
/// ```
package struct NetworkHosts: Sendable {
    /// A short tag in every name, so that tests running at once do not meet: the test process's id and a count
    /// within it (both hex), which also tells the hosts of a test process that died from those of one still running.
    package let tag: String
    package let count: Int
    /// The first three octets of the private network.
    let prefix: String

    /// The address of the test's own namespace on the hosts' network.
    package var gateway: String { "\(prefix).1" }
    /// The address of host `n` (1…count).
    package func address(_ n: Int) -> String { "\(prefix).\(n + 1)" }
    /// The host name commands on host `n` see.
    package func name(_ n: Int) -> String { "host\(n)" }
    /// The namespace of host `n`.
    package func namespace(_ n: Int) -> String { "orch-\(tag)-h\(n)" }
    var bridge: String { "ob\(tag)" }
    /// The test side of host `n`'s link (interface names stay under 16 bytes).
    func link(_ n: Int) -> String { "o\(tag)h\(n)" }

    /// Makes the namespaces, their links and the bridge, or throws with what `ip` said.
    package static func make(count: Int) throws -> NetworkHosts {
        let used = (try? run(["-4", "addr"])) ?? ""
        var prefix = ""
        repeat {
            prefix = "10.\(Int.random(in: 160...199)).\(Int.random(in: 0...255))"
        } while used.contains(" \(prefix).")
        removeAbandoned()
        let made = madeCount.withLock { count -> Int in
            count += 1
            return count
        }
        let tag = String(getpid(), radix: 16) + "x" + String(made, radix: 16)
        let hosts = NetworkHosts(tag: tag, count: count, prefix: prefix)
        do {
            try run(["link", "add", "name", hosts.bridge, "type", "bridge"])
            try run(["addr", "add", "\(hosts.gateway)/24", "dev", hosts.bridge])
            try run(["link", "set", hosts.bridge, "up"])
            for n in 1...count {
                let namespace = hosts.namespace(n)
                try run(["netns", "add", namespace])
                try run(["link", "add", hosts.link(n), "type", "veth", "peer", "name", "\(hosts.link(n))p"])
                try run(["link", "set", "\(hosts.link(n))p", "netns", namespace])
                try run(["link", "set", hosts.link(n), "master", hosts.bridge])
                try run(["link", "set", hosts.link(n), "up"])
                try run(["-n", namespace, "link", "set", "lo", "up"])
                try run(["-n", namespace, "addr", "add", "\(hosts.address(n))/24", "dev", "\(hosts.link(n))p"])
                try run(["-n", namespace, "link", "set", "\(hosts.link(n))p", "up"])
            }
        } catch {
            hosts.remove()
            throw error
        }
        return hosts
    }

    /// How many sets of hosts this process made.
    private static let madeCount = Mutex(0)

    /// Removes the hosts that a test process which no longer exists left behind (killed before it could remove them):
    /// its namespaces with whatever runs in them, and its bridge.
    static func removeAbandoned() {
        let names = ((try? run(["netns", "list"])) ?? "").split(separator: "\n").compactMap {
            $0.split(separator: " ").first.map(String.init)
        }
        for name in names where name.hasPrefix("orch-") {
            let tag = name.dropFirst("orch-".count).prefix { $0 != "-" }
            guard let pid = tag.split(separator: "x").first.flatMap({ Int32($0, radix: 16) }), kill(pid, 0) == -1,
                errno == ESRCH
            else { continue }
            for process in ((try? run(["netns", "pids", name])) ?? "").split(separator: "\n").compactMap({ Int32($0) })
            { kill(process, SIGKILL) }
            _ = try? run(["netns", "del", name])
            _ = try? run(["link", "del", "ob\(tag)"])
        }
    }

    /// Runs `body` with `count` hosts, removed afterwards with every process in them.
    package static func with<R>(count: Int, _ body: (NetworkHosts) async throws -> R) async throws -> R {
        let hosts = try make(count: count)
        defer { hosts.remove() }
        return try await body(hosts)
    }

    /// Starts `executable` on host `n`, under that host's name, in its own process group.
    package func launch(
        _ n: Int, _ executable: String, _ arguments: [String], directory: String, environment: [String: String],
        name: String
    ) throws -> SupervisedProcess {
        var command = SupervisedCommand(
            executable: Self.ip,
            arguments: [
                "netns", "exec", namespace(n), "unshare", "--uts", "sh", "-c", "hostname \"$0\" && exec \"$@\"",
                self.name(n), executable,
            ]
                + arguments,
            environment: environment, workingDirectory: directory, stdoutPath: "\(directory)/\(name).stdout",
            stderrPath: "\(directory)/\(name).stderr")
        command.timeout = .seconds(300)
        command.grace = .seconds(20)
        return try SupervisedProcess.launch(command)
    }

    /// Kills every process of host `n` at once (SIGKILL), as a host that vanishes.
    package func killAll(_ n: Int) {
        for pid in pids(n) { kill(pid, SIGKILL) }
    }

    /// The processes living in host `n`'s namespace.
    package func pids(_ n: Int) -> [Int32] {
        ((try? Self.run(["netns", "pids", namespace(n)])) ?? "").split(separator: "\n").compactMap { Int32($0) }
    }

    /// Takes host `n`'s link down (cut off from everything, the database included) or brings it back.
    package func setLink(_ n: Int, up: Bool) throws {
        try Self.run(["link", "set", link(n), up ? "up" : "down"])
    }

    /// Kills what still runs in the namespaces and removes them, their links and the bridge.
    package func remove() {
        for n in 1...count {
            killAll(n)
            _ = try? Self.run(["link", "del", link(n)])
            _ = try? Self.run(["netns", "del", namespace(n)])
        }
        _ = try? Self.run(["link", "del", bridge])
    }

    static let ip =
        ["/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip", "/bin/ip"].first {
            FileManager.default.isExecutableFile(atPath: $0)
        } ?? "ip"

    /// `ip ARGUMENTS…`'s output, or an error with what it said.
    @discardableResult
    package static func run(_ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: ip)
        process.arguments = arguments
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let problem = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw NetworkHostsError(
                description:
                    "ip \(arguments.joined(separator: " ")) failed (\(process.terminationStatus)): \(problem) — the tests that need hosts "
                    + "make network namespaces and need root (CAP_NET_ADMIN)")
        }
        return text
    }
}

package struct NetworkHostsError: Error, CustomStringConvertible {
    package var description: String
}
