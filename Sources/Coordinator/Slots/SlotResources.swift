import ProcessSupervisor

/// What a worker slot holds for the whole run: its number, its port, its supervisor process, its HOME, TMPDIR and
/// artifacts folders (emptied before every attempt), the files its attempts' output is captured in, and the part of
/// its attempts' environment that is the same for all of them.
struct SlotResources: Sendable {
    var number: Int
    var portLease: PortLease
    var supervisor: Supervisor
    /// The slot's folder, `<attempts>/<run>/.slots/<n>`.
    var folder: String
    let home: ScratchFolder
    let temporary: ScratchFolder
    let artifacts: ScratchFolder
    /// The run's environment with the slot's part of the contract, HOME and TMPDIR (``AttemptRunner/slotEnvironment(_:)``).
    var environment = SharedEnvironment([:])
    /// The keys of `environment` a scenario's own environment does not override.
    var fixedKeys: Set<String> = []

    init(number: Int, portLease: PortLease, supervisor: Supervisor, folder: String) {
        self.number = number
        self.portLease = portLease
        self.supervisor = supervisor
        self.folder = folder
        home = ScratchFolder("\(folder)/home")
        temporary = ScratchFolder("\(folder)/tmp")
        artifacts = ScratchFolder("\(folder)/artifacts")
    }

    var stdoutLog: String { "\(folder)/stdout.log" }
    var stderrLog: String { "\(folder)/stderr.log" }
    var port: Int { portLease.port }
}
