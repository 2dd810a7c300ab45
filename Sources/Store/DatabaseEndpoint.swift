import Foundation

/// Where the database is and who to be there. Its `description` never shows the password.
package struct DatabaseEndpoint: Sendable, Equatable, CustomStringConvertible {
    package enum Address: Sendable, Equatable {
        case tcp(host: String, port: Int)
        /// Full path of the socket file (`…/.s.PGSQL.5432`).
        case unixSocket(path: String)
    }

    package var address: Address
    package var username: String
    package var password: String?
    package var database: String
    package var requireTLS: Bool
    /// A libpq password file to take the password from when none is given (``PasswordFile``), read when connecting.
    package var passwordFile: String?

    package init(
        address: Address, username: String, password: String? = nil, database: String, requireTLS: Bool = false, passwordFile: String? = nil
    ) {
        self.address = address
        self.username = username
        self.password = password
        self.database = database
        self.requireTLS = requireTLS
        self.passwordFile = passwordFile
    }

    /// The URL without the password (a password file is named, as libpq's `passfile`).
    package var description: String {
        let passfile = passwordFile.map { "passfile=\($0)" }
        switch address {
        case .tcp(let host, let port):
            return "postgresql://\(username)@\(host):\(port)/\(database)" + (passfile.map { "?\($0)" } ?? "")
        case .unixSocket(let path):
            let directory = (path as NSString).deletingLastPathComponent
            return "postgresql://\(username)@/\(database)?host=\(directory)" + (passfile.map { "&\($0)" } ?? "")
        }
    }

    /// The password to connect with: the one given, else the password file's line for this user and database.
    package var resolvedPassword: String? {
        password ?? passwordFile.flatMap { PasswordFile.password(in: $0, username: username, database: database) }
    }

    /// Parses `postgres://user:pass@host:port/db?sslmode=require` and the unix-socket form
    /// `postgresql://user@/db?host=/run/postgresql`.
    package init(url string: String) throws(StoreError) {
        guard let components = URLComponents(string: string),
            let scheme = components.scheme, ["postgres", "postgresql"].contains(scheme)
        else {
            throw StoreError(.badConfiguration, "database URL must look like postgres://user@host:5432/db (got a value that does not)")
        }
        let query = Dictionary((components.queryItems ?? []).map { ($0.name, $0.value ?? "") }, uniquingKeysWith: { $1 })
        let port = components.port ?? Int(query["port"] ?? "") ?? 5432
        let user = components.user.flatMap { $0.removingPercentEncoding } ?? ProcessInfo.processInfo.environment["USER"] ?? "postgres"
        var database = String(components.path.drop(while: { $0 == "/" }))
        if database.isEmpty { database = user }
        let host = components.host.flatMap { $0.isEmpty ? nil : $0 } ?? query["host"] ?? "/var/run/postgresql"
        self.init(
            address: host.hasPrefix("/") ? .unixSocket(path: "\(host)/.s.PGSQL.\(port)") : .tcp(host: host, port: port),
            username: user,
            password: components.password.flatMap { $0.removingPercentEncoding },
            database: database,
            requireTLS: ["require", "verify-ca", "verify-full"].contains(query["sslmode"] ?? ""),
            passwordFile: query["passfile"].flatMap { $0.isEmpty ? nil : $0 }
        )
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
            requireTLS: environment["PGSSLMODE"].map { ["require", "verify-ca", "verify-full"].contains($0) } ?? false,
            passwordFile: environment["PGPASSFILE"]
        )
    }
}
