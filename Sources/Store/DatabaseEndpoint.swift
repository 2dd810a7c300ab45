import Foundation

/// Where the database is and who to be there. Its `description` never shows the password.
package struct DatabaseEndpoint: Sendable, Equatable, CustomStringConvertible {
    package enum Address: Sendable, Equatable {
        case tcp(host: String, port: Int)
        /// Full path of the socket file (`…/.s.PGSQL.5432`).
        case unixSocket(path: String)
    }

    /// libpq's `sslmode`, as far as orchestrate tells them apart.
    package enum TLSMode: String, Sendable, Equatable {
        /// No TLS (`disable`, and `allow`).
        case disable
        /// TLS when the server offers it, the certificate not checked (`prefer`, libpq's default over TCP).
        case prefer
        /// TLS or no connection; the certificate is not checked (`require`).
        case require
        /// TLS, the certificate signed by a trusted CA (`verify-ca`).
        case verifyCA = "verify-ca"
        /// TLS, the certificate signed by a trusted CA and naming the host connected to (`verify-full`).
        case verifyFull = "verify-full"

        init?(sslmode: String) {
            switch sslmode {
            case "disable", "allow": self = .disable
            case "prefer": self = .prefer
            default: self.init(rawValue: sslmode)
            }
        }
    }

    package var address: Address
    package var username: String
    package var password: String?
    package var database: String
    package var tls: TLSMode
    /// The CA certificates (PEM) a `verify-ca`/`verify-full` connection trusts (`sslrootcert`); the system's otherwise.
    package var rootCertificate: String?
    /// A libpq password file to take the password from when none is given (``PasswordFile``), read when connecting.
    package var passwordFile: String?
    /// The server is a pooler that hands each transaction to any of its server connections (pgbouncer's `pool_mode =
    /// transaction`; `pool_mode=transaction` in the URL): no statement is prepared once per connection, and no setting
    /// is sent when connecting (pgbouncer refuses those it does not know).
    package var transactionPooled = false

    package init(
        address: Address, username: String, password: String? = nil, database: String, tls: TLSMode = .prefer,
        rootCertificate: String? = nil, passwordFile: String? = nil
    ) {
        self.address = address
        self.username = username
        self.password = password
        self.database = database
        self.tls = tls
        self.rootCertificate = rootCertificate
        self.passwordFile = passwordFile
    }

    /// Whether a connection without TLS is refused.
    package var requireTLS: Bool { ![.disable, .prefer].contains(tls) }

    /// The URL without the password (a password file is named, as libpq's `passfile`).
    package var description: String {
        var parameters: [String] = []
        let hostPart: String
        switch address {
        case .tcp(let host, let port):
            hostPart = "\(host.contains(":") ? "[\(host)]" : host):\(port)"
            if tls != .prefer { parameters.append("sslmode=\(tls.rawValue)") }
            if let rootCertificate { parameters.append("sslrootcert=\(rootCertificate)") }
        case .unixSocket(let path):
            hostPart = ""
            parameters.append("host=\((path as NSString).deletingLastPathComponent)")
        }
        if let passwordFile { parameters.append("passfile=\(passwordFile)") }
        if transactionPooled { parameters.append("pool_mode=transaction") }
        return "postgresql://\(username)@\(hostPart)/\(database)"
            + (parameters.isEmpty ? "" : "?" + parameters.joined(separator: "&"))
    }

    /// The password to connect with: the one given, else the password file's line for this user and database, else
    /// PGPASSWORD, else the line of the password file PGPASSFILE names.
    package func resolvedPassword(environment: [String: String] = ProcessInfo.processInfo.environment) -> String? {
        password ?? passwordFile.flatMap { PasswordFile.password(in: $0, username: username, database: database) }
            ?? environment["PGPASSWORD"]
            ?? environment["PGPASSFILE"].flatMap {
                PasswordFile.password(in: $0, username: username, database: database)
            }
    }

    /// Parses `postgres://user:pass@host:port/db?sslmode=require` and the unix-socket form
    /// `postgresql://user@/db?host=/run/postgresql`.
    package init(
        url string: String, environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws(StoreError) {
        guard let components = URLComponents(string: string),
            let scheme = components.scheme, ["postgres", "postgresql"].contains(scheme)
        else {
            throw StoreError(
                .badConfiguration,
                "database URL must look like postgres://user@host:5432/db (got a value that does not)")
        }
        let query = Dictionary(
            (components.queryItems ?? []).map { ($0.name, $0.value ?? "") }, uniquingKeysWith: { $1 })
        let port = components.port ?? Int(query["port"] ?? "") ?? 5432
        let user =
            components.user.flatMap { $0.removingPercentEncoding } ?? ProcessInfo.processInfo.environment["USER"]
            ?? "postgres"
        var database = String(components.path.drop(while: { $0 == "/" }))
        if database.isEmpty { database = user }
        let host = components.host.flatMap { $0.isEmpty ? nil : $0 } ?? query["host"] ?? "/var/run/postgresql"
        // As libpq: what the URL leaves out, PGSSLMODE and PGSSLROOTCERT may say.
        let sslmode = query["sslmode"] ?? environment["PGSSLMODE"] ?? "prefer"
        guard let tls = TLSMode(sslmode: sslmode) else {
            throw StoreError(
                .badConfiguration,
                "database URL: sslmode must be disable, prefer, require, verify-ca or verify-full (got \(sslmode))")
        }
        let poolMode = query["pool_mode"] ?? "session"
        guard ["session", "transaction"].contains(poolMode) else {
            throw StoreError(
                .badConfiguration, "database URL: pool_mode must be session or transaction (got \(poolMode))")
        }
        self.init(
            address: host.hasPrefix("/")
                ? .unixSocket(path: "\(host)/.s.PGSQL.\(port)") : .tcp(host: Self.unbracketed(host), port: port),
            username: user,
            password: components.password.flatMap { $0.removingPercentEncoding },
            database: database,
            tls: tls,
            rootCertificate: (query["sslrootcert"] ?? environment["PGSSLROOTCERT"]).flatMap { $0.isEmpty ? nil : $0 },
            passwordFile: query["passfile"].flatMap { $0.isEmpty ? nil : $0 }
        )
        transactionPooled = poolMode == "transaction"
    }

    /// An IPv6 address without the brackets a URL puts around it.
    private static func unbracketed(_ host: String) -> String {
        host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
    }

    /// The libpq variables (PGHOST, PGPORT, PGUSER, PGPASSWORD, PGDATABASE), when PGHOST or PGDATABASE is set.
    package static func fromEnvironment(_ environment: [String: String]) -> DatabaseEndpoint? {
        guard environment["PGHOST"] != nil || environment["PGDATABASE"] != nil else { return nil }
        let host = environment["PGHOST"] ?? "/var/run/postgresql"
        let port = Int(environment["PGPORT"] ?? "") ?? 5432
        let user = environment["PGUSER"] ?? environment["USER"] ?? "postgres"
        return DatabaseEndpoint(
            address: host.hasPrefix("/") ? .unixSocket(path: "\(host)/.s.PGSQL.\(port)") : .tcp(host: host, port: port),
            username: user,
            password: environment["PGPASSWORD"],
            database: environment["PGDATABASE"] ?? user,
            tls: environment["PGSSLMODE"].flatMap(TLSMode.init(sslmode:)) ?? .prefer,
            rootCertificate: environment["PGSSLROOTCERT"],
            passwordFile: environment["PGPASSFILE"]
        )
    }
}
