import OrchestrateModel
import ProcessSupervisor

/// What a worker slot holds for the whole run: its number, its port, its supervisor process, its HOME, TMPDIR and
/// artifacts folders (emptied before every attempt), the files its attempts' output is captured in, and the part of
/// its attempts' environment that is the same for all of them.
struct SlotResources: Sendable {
    var number: Int
    var portLease: PortLease
    var supervisor: Supervisor
    /// The slot's folder, `<attempts>/<run>/.slots/<pid>/<n>`: the process's own, so that two processes working a run in
    /// one project folder (two nodes on one machine) never empty each other's HOME.
    var folder: String
    /// The slot's folder as it was made: its entries are reached through it.
    let handle: FolderHandle
    let home: ScratchFolder
    let temporary: ScratchFolder
    let artifacts: ScratchFolder
    /// The run's environment with the slot's part of the contract, HOME and TMPDIR
    /// (``AttemptRunner/slotEnvironment(_:)``).
    var environment = SharedEnvironment([:])
    /// The keys of `environment` a scenario's own environment does not override.
    var fixedKeys: Set<String> = []

    /// Makes the slot's folder (and its parents) when missing.
    init(number: Int, portLease: PortLease, supervisor: Supervisor, folder: String) throws {
        self.number = number
        self.portLease = portLease
        self.supervisor = supervisor
        self.folder = folder
        try Folders.make(folder)
        handle = try FolderHandle(opening: folder)
        home = ScratchFolder("home", in: handle)
        temporary = ScratchFolder("tmp", in: handle)
        artifacts = ScratchFolder("artifacts", in: handle)
    }

    var stdoutLog: String { "\(folder)/stdout.log" }
    var stderrLog: String { "\(folder)/stderr.log" }
    var port: Int { portLease.port }

    /// Makes the slot ready for an attempt: its folder still the one it made (an attempt may have moved or replaced
    /// it), its HOME, TMPDIR and artifacts folders empty, nothing at its output files' names. An error means the slot
    /// cannot be used again.
    func prepare() throws(FolderError) {
        guard isOwnFolder else {
            throw FolderError(.notOwnFile, "the slot's folder \(folder) was moved or replaced (by an attempt?)")
        }
        try artifacts.empty()
        try home.empty()
        try temporary.empty()
        for name in Self.outputFiles where handle.kind(of: name) != nil { try handle.remove(name) }
    }

    /// Whether the slot is ready for an attempt as it is, which ``prepare()`` would leave unchanged: a handful of
    /// system calls, where preparing may remove whatever tree an attempt left.
    var isPrepared: Bool {
        isOwnFolder && artifacts.isEmptied && home.isEmptied && temporary.isEmptied
            && Self.outputFiles.allSatisfy { handle.kind(of: $0) == nil }
    }

    private var isOwnFolder: Bool {
        guard let identity = handle.identity else { return false }
        return FileIdentity(path: folder) == identity
    }

    private static let outputFiles = ["stdout.log", "stderr.log"]
}
