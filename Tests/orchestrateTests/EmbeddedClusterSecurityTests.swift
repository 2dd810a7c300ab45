import Foundation
import OrchestrateTesting
import ProcessSupervisor
import Store
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The embedded database is private to its owner: other local users neither reach it nor plant anything at its paths.
/// Root only: the tests act as the user `nobody`, and give planted folders to it.
@Suite(
    "The embedded cluster is private", .enabled(if: geteuid() == 0, "needs root to act as another user"),
    .timeLimit(.minutes(3)))
struct EmbeddedClusterSecurityTests {
    /// The CLI with the embedded cluster of its folder (no database URL).
    static func nobody() throws -> (uid: UInt32, gid: UInt32) {
        var entry = passwd()
        var found: UnsafeMutablePointer<passwd>?
        var buffer = [CChar](repeating: 0, count: 4096)
        try #require(getpwnam_r("nobody", &entry, &buffer, buffer.count, &found) == 0 && found != nil, "no user nobody")
        return (entry.pw_uid, entry.pw_gid)
    }

    /// psql as `user` (or as root): its exit status and what it printed.
    static func psql(
        _ arguments: [String], as user: (uid: UInt32, gid: UInt32)?, in directory: String
    ) async throws -> (Termination.Reason, String) {
        let psql = try PostgresBinaries.locate().path("psql")
        var command = SupervisedCommand(
            executable: psql, arguments: ["-X", "-At"] + arguments,
            environment: ["PATH": "/usr/bin:/bin", "HOME": "/tmp"],
            workingDirectory: "/tmp", stdoutPath: "\(directory)/psql.out", stderrPath: "\(directory)/psql.out"
        )
        command.user = user
        command.timeout = .seconds(30)
        let reason = try await SupervisedProcess.run(command).reason
        return (reason, (try? String(contentsOfFile: "\(directory)/psql.out", encoding: .utf8)) ?? "")
    }

    /// Runs `body` with a project whose embedded cluster is made and running, and stops it afterwards.
    static func withEmbeddedCluster(_ body: (TemporaryDirectory, EmbeddedCluster) async throws -> Void) async throws {
        try await TemporaryDirectory.with { directory in
            chmod(directory.path, 0o755)
            let cli = OrchestrateCLI.embedded(in: directory.path)
            let migrate = try await cli.run(["db", "migrate"])
            try #require(migrate.exitCode == 0, "\(migrate.stderr)")
            let cluster = EmbeddedCluster(root: directory.file(".orchestrate"))
            do {
                try await body(directory, cluster)
                _ = try await cli.run(["db", "stop"])
            } catch {
                _ = try await cli.run(["db", "stop"])
                throw error
            }
        }
    }

    @Test("another local user cannot connect, not even as the superuser, and the role orchestrate uses is no superuser")
    func otherUsersStayOut() async throws {
        try await Self.withEmbeddedCluster { directory, cluster in
            let nobody = try Self.nobody()
            let proof = "/tmp/orch-proof-\(UUID().uuidString.prefix(8))"
            for role in [EmbeddedCluster.adminUsername, EmbeddedCluster.username] {
                let (reason, output) = try await Self.psql(
                    [
                        "postgresql://\(role)@/postgres?host=\(cluster.socketDirectory)", "-c",
                        "COPY (SELECT 1) TO PROGRAM 'id > \(proof)'",
                    ],
                    as: nobody, in: directory.path
                )
                #expect(reason != .exited(0), "nobody connected as \(role): \(output)")
                #expect(output.contains("Permission denied"), "\(output)")
            }
            #expect(!FileManager.default.fileExists(atPath: proof), "a program ran as the server's user")
            // The password files and the folders are the owner's alone.
            for path in [
                cluster.passwordFile, cluster.adminPasswordFile, cluster.socketDirectory, cluster.dataDirectory,
            ] {
                var info = stat()
                #expect(
                    stat(path, &info) == 0 && info.st_mode & 0o077 == 0,
                    "\(path) is open to others: \(String(info.st_mode & 0o777, radix: 8))")
            }
            // With its own password the role orchestrate connects as owns the tables, and runs no program.
            let url = cluster.endpoint.description
            let (whoReason, who) = try await Self.psql(
                [url, "-c", "SELECT rolsuper FROM pg_roles WHERE rolname = current_user"], as: nil, in: directory.path)
            #expect(whoReason == .exited(0) && who.trimmingCharacters(in: .whitespacesAndNewlines) == "f", "\(who)")
            let (copyReason, copy) = try await Self.psql(
                [url, "-c", "COPY (SELECT 1) TO PROGRAM 'id > \(proof)'"], as: nil, in: directory.path)
            #expect(copyReason != .exited(0) && copy.contains("must be superuser"), "\(copy)")
            #expect(!FileManager.default.fileExists(atPath: proof))
        }
    }

    @Test("a link or a folder planted at the cluster's paths is refused, never followed or adopted")
    func plantedPaths() async throws {
        try await TemporaryDirectory.with { directory in
            chmod(directory.path, 0o755)
            let nobody = try Self.nobody()
            // The victim: a folder of another user that a link points at.
            let victim = directory.file("victim")
            try FileManager.default.createDirectory(atPath: victim, withIntermediateDirectories: true)
            chown(victim, nobody.uid, nobody.gid)
            chmod(victim, 0o755)

            func refused(_ project: String, at planted: String, because reason: String) async throws {
                let run = try await OrchestrateCLI.embedded(in: project).run(["db", "migrate"])
                #expect(run.exitCode == 3, "\(run.stdout)\(run.stderr)")
                #expect(run.stderr.contains("\(planted) is not orchestrate's to use: \(reason)"), "\(run.stderr)")
                var info = stat()
                #expect(
                    stat(victim, &info) == 0 && info.st_uid == nobody.uid && info.st_mode & 0o777 == 0o755,
                    "the victim was changed")
                #expect(
                    try FileManager.default.contentsOfDirectory(atPath: victim).isEmpty,
                    "something was made in the victim")
            }

            // The socket's folder in /tmp: a link, a folder of another user, a folder anybody may write in.
            let project = directory.file("project")
            try FileManager.default.createDirectory(atPath: project, withIntermediateDirectories: true)
            let socketFolder = EmbeddedCluster(root: "\(project)/.orchestrate").socketDirectory
            defer { try? FileManager.default.removeItem(atPath: socketFolder) }
            try FileManager.default.createSymbolicLink(atPath: socketFolder, withDestinationPath: victim)
            try await refused(project, at: socketFolder, because: "it is a symbolic link")
            try FileManager.default.removeItem(atPath: socketFolder)
            mkdir(socketFolder, 0o700)
            chown(socketFolder, nobody.uid, nobody.gid)
            try await refused(project, at: socketFolder, because: "it belongs to another user (uid \(nobody.uid))")
            chown(socketFolder, 0, 0)
            chmod(socketFolder, 0o777)
            try await refused(project, at: socketFolder, because: "others may write in it")

            // The data folder in /var/tmp, where it goes when the server's user cannot reach the project.
            let hidden = directory.file("hidden")
            try FileManager.default.createDirectory(atPath: "\(hidden)/project", withIntermediateDirectories: true)
            chmod(hidden, 0o700)
            let hiddenCluster = EmbeddedCluster(root: "\(hidden)/project/.orchestrate")
            let dataParent = (hiddenCluster.dataDirectory as NSString).deletingLastPathComponent
            try #require(dataParent.hasPrefix("/var/tmp/orchestrate-"), "\(dataParent)")
            defer {
                try? FileManager.default.removeItem(atPath: dataParent)
                try? FileManager.default.removeItem(atPath: hiddenCluster.socketDirectory)
            }
            try FileManager.default.createSymbolicLink(atPath: dataParent, withDestinationPath: victim)
            try await refused("\(hidden)/project", at: dataParent, because: "it is a symbolic link")
        }
    }
}
