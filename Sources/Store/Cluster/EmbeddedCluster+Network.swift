import Foundation
import Logging
import OrchestrateModel
import PostgresNIO
import ProcessSupervisor

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension EmbeddedCluster {
    /// The certificate authority other hosts trust the cluster's TLS certificate by (`sslrootcert`).
    package var certificateAuthorityFile: String { "\(root)/postgres-ca.crt" }
    /// Its key, which signs a new server certificate when the cluster is opened on another address (0600).
    var certificateAuthorityKeyFile: String { "\(root)/postgres-ca.key" }

    /// The endpoint other hosts use once the cluster listens on `address`: TLS checked against the cluster's CA and the
    /// address, the application role's password from its password file (to be handed over; never printed).
    package func networkEndpoint(address: String) -> DatabaseEndpoint {
        DatabaseEndpoint(
            address: .tcp(host: address, port: Self.port), username: Self.username, database: Self.database,
            tls: .verifyFull,
            rootCertificate: certificateAuthorityFile, passwordFile: passwordFile)
    }

    /// Opens the cluster to other hosts on `address` (an IP address or host name of this host that they reach it by),
    /// besides its unix socket: TLS with a certificate for `address` signed by a CA made here (kept beside the
    /// cluster), and from the network only the application role, by password (SCRAM), never the superuser. The server
    /// restarts.
    package func openToNetwork(address: String, logger: Logger) async throws(StoreError) -> DatabaseEndpoint {
        guard !address.isEmpty, address.allSatisfy({ $0.isLetter || $0.isNumber || ".-:".contains($0) }), address != "*"
        else {
            throw StoreError(
                .badConfiguration,
                "the address to listen on must be one IP address or host name of this host (got \(address))")
        }
        try await startDetached(logger: logger)
        try await makeCertificates(for: address, logger: logger)
        do {
            try await Database.with(adminEndpoint, logger: logger, maximumConnections: 1, migrate: false) { database in
                for (name, value) in [
                    ("listen_addresses", address), ("ssl", "on"), ("ssl_cert_file", "server.crt"),
                    ("ssl_key_file", "server.key"),
                    ("ssl_min_protocol_version", "TLSv1.2"),
                ] {
                    let literal = "'" + value.replacingOccurrences(of: "'", with: "''") + "'"
                    try await database.client.query(
                        PostgresQuery(unsafeSQL: "ALTER SYSTEM SET \(name) = \(literal)"), logger: logger)
                }
            }
        } catch let error as StoreError {
            throw error
        } catch {
            throw StoreError(
                .clusterFailed, "cannot configure the embedded PostgreSQL for TLS: \(Database.describe(error))")
        }
        try writeAccessRules(network: true)
        let binaries = try PostgresBinaries.locate()
        let status = try await runTool(
            binaries.path("pg_ctl"), ["restart", "-w", "-t", "60", "-m", "fast", "-D", dataDirectory, "-l", logFile],
            logger: logger)
        guard status == .exited(0) else {
            throw StoreError(
                .clusterFailed, "PostgreSQL did not restart listening on \(address) (\(status)); see \(logFile)")
        }
        return networkEndpoint(address: address)
    }

    /// A CA (made once) and a server certificate for `address`, by the `openssl` program: the server's key goes into
    /// the data folder, owned by the server's user, 0600, as PostgreSQL demands.
    private func makeCertificates(for address: String, logger: Logger) async throws(StoreError) {
        let work = "/tmp/orchestrate-tls-\(UUID().uuidString.prefix(12).lowercased())"
        try PrivateDirectory.ensure(work, owner: nil)
        defer { try? FileManager.default.removeItem(atPath: work) }
        let curve = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
        if !FileManager.default.fileExists(atPath: certificateAuthorityKeyFile)
            || !FileManager.default.fileExists(atPath: certificateAuthorityFile)
        {
            try await openssl(
                ["req", "-x509"] + curve + [
                    "-keyout", "\(work)/ca.key", "-out", "\(work)/ca.crt", "-days", "3650", "-subj",
                    "/CN=orchestrate embedded PostgreSQL CA",
                    "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign",
                ], in: work, logger: logger)
            try copyPrivately("\(work)/ca.key", to: certificateAuthorityKeyFile, owner: nil, permissions: 0o600)
            try copyPrivately("\(work)/ca.crt", to: certificateAuthorityFile, owner: nil, permissions: 0o644)
        }
        let isAddress = address.allSatisfy { $0.isNumber || $0 == "." } || address.contains(":")
        let names = [isAddress ? "IP:\(address)" : "DNS:\(address)", "DNS:localhost", "IP:127.0.0.1"]
        let extensions = """
            basicConstraints = critical, CA:FALSE
            keyUsage = critical, digitalSignature, keyEncipherment
            extendedKeyUsage = serverAuth
            subjectAltName = \(names.joined(separator: ", "))
            """
        do {
            try extensions.write(toFile: "\(work)/server.ext", atomically: true, encoding: .utf8)
        } catch {
            throw StoreError(.clusterFailed, "cannot write \(work)/server.ext: \(error.localizedDescription)")
        }
        try await openssl(
            ["req"] + curve + [
                "-keyout", "\(work)/server.key", "-out", "\(work)/server.csr", "-subj", "/CN=\(address)",
            ], in: work,
            logger: logger)
        try await openssl(
            [
                "x509", "-req", "-in", "\(work)/server.csr", "-CA", certificateAuthorityFile, "-CAkey",
                certificateAuthorityKeyFile,
                "-CAcreateserial", "-CAserial", "\(work)/ca.srl", "-out", "\(work)/server.crt", "-days", "825",
                "-extfile", "\(work)/server.ext",
            ], in: work, logger: logger)
        let server = ServerUser.current
        try copyPrivately("\(work)/server.key", to: "\(dataDirectory)/server.key", owner: server, permissions: 0o600)
        try copyPrivately("\(work)/server.crt", to: "\(dataDirectory)/server.crt", owner: server, permissions: 0o644)
    }

    private func openssl(_ arguments: [String], in folder: String, logger: Logger) async throws(StoreError) {
        var command = SupervisedCommand(
            executable: "/usr/bin/env", arguments: ["openssl"] + arguments,
            environment: ["PATH": "/usr/bin:/bin:/usr/local/bin:/opt/homebrew/bin", "LANG": "C"],
            workingDirectory: folder,
            stdoutPath: "\(folder)/openssl.out", stderrPath: "\(folder)/openssl.err")
        command.timeout = .seconds(60)
        let termination: Termination
        do {
            termination = try await SupervisedProcess.run(command)
        } catch {
            throw StoreError(.clusterFailed, "cannot run openssl: \(error)")
        }
        guard termination.reason == .exited(0) else {
            let output = (try? String(contentsOfFile: "\(folder)/openssl.err", encoding: .utf8)) ?? ""
            throw StoreError(
                .clusterFailed,
                "openssl \(arguments[0]) failed (\(termination.reason)): \(output.split(separator: "\n").last ?? "") — is openssl installed?"
            )
        }
    }

    private func copyPrivately(
        _ source: String, to path: String, owner: ServerUser?, permissions: mode_t
    ) throws(StoreError) {
        do {
            let text = try String(contentsOfFile: source, encoding: .utf8)
            try AtomicFile.write(
                text, to: path, permissions: permissions, owner: owner.map { (uid: $0.uid, gid: $0.gid) })
        } catch {
            throw StoreError(.clusterFailed, "cannot write \(path): \(error.localizedDescription)")
        }
    }
}
