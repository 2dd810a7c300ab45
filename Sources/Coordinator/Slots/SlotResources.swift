import ProcessSupervisor

/// What a worker slot holds for the whole run: its number, its port, its supervisor process, its HOME, TMPDIR and
/// artifacts folders (emptied before every attempt) and the files its attempts' output is captured in.
struct SlotResources: Sendable {
    var number: Int
    var portLease: PortLease
    var supervisor: Supervisor
    /// The slot's folder, `<attempts>/<run>/.slots/<n>`.
    var folder: String

    var home: String { "\(folder)/home" }
    var temporary: String { "\(folder)/tmp" }
    var artifacts: String { "\(folder)/artifacts" }
    var stdoutLog: String { "\(folder)/stdout.log" }
    var stderrLog: String { "\(folder)/stderr.log" }
    var port: Int { portLease.port }
}
