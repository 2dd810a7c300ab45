import ProcessSupervisor

/// What a worker slot holds for the whole run: its number, its port, its supervisor process and
/// its HOME and TMPDIR folders (emptied before every attempt).
struct SlotResources: Sendable {
    var number: Int
    var portLease: PortLease
    var supervisor: Supervisor
    var home: String
    var temporary: String

    var port: Int { portLease.port }
}
