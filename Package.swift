// swift-tools-version:6.1
import PackageDescription

/// One settings list for every target, as the house style asks.
let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

let package = Package(
    name: "orchestrate",
    platforms: [.macOS(.v15), .iOS(.v17)],
    products: [
        .executable(name: "orchestrate", targets: ["orchestrate"]),
        .library(name: "OrchestrateKit", targets: ["OrchestrateKit"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
        .package(url: "https://github.com/jpsim/Yams.git", from: "6.2.2"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/hummingbird-project/swift-mustache.git", from: "2.1.1"),
        .package(url: "https://github.com/adam-fowler/compress-nio.git", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-crypto.git", from: "4.5.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
    ],
    targets: [
        .executableTarget(
            name: "orchestrate",
            dependencies: [
                "Orchestrator", "CHeap",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "Orchestrator",
            dependencies: [
                "Coordinator", "Suites", "Store", "Analysis", "Reports", "MockServer", "OrchestrateModel",
                "ProcessSupervisor", "Gherkin",
                "OrchestrateKit",
                .product(name: "Yams", package: "Yams"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "Coordinator",
            dependencies: [
                "OrchestrateModel", "ProcessSupervisor", "OrchestrateKit", "Reports",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "Store",
            dependencies: [
                "OrchestrateModel", "ProcessSupervisor",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "CompressNIO", package: "compress-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "MockServer",
            dependencies: [
                "OrchestrateModel",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Mustache", package: "swift-mustache"),
                .product(name: "CompressNIO", package: "compress-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        // Each way a suite is described (listed scenarios, suite.list, Gherkin, SwiftPM, xcodebuild): building, listing, the
        // batch command and results format of its scenarios, and the per-slot resources it needs.
        .target(
            name: "Suites",
            dependencies: [
                "Coordinator", "OrchestrateModel", "ProcessSupervisor", "Gherkin", "OrchestrateKit", "Reports",
            ],
            swiftSettings: swiftSettings
        ),
        .target(name: "Reports", dependencies: ["OrchestrateModel"], swiftSettings: swiftSettings),
        .target(name: "Analysis", dependencies: ["OrchestrateModel"], swiftSettings: swiftSettings),
        .target(name: "ProcessSupervisor", dependencies: ["CSupervisor"], swiftSettings: swiftSettings),
        .target(name: "CSupervisor"),
        .target(name: "CHeap"),
        .target(name: "OrchestrateModel", swiftSettings: swiftSettings),
        .target(name: "Gherkin", swiftSettings: swiftSettings),
        .target(name: "OrchestrateKit", swiftSettings: swiftSettings),
        .target(
            name: "OrchestrateTesting",
            dependencies: [
                "Store", "ProcessSupervisor", "OrchestrateModel",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "CompressNIO", package: "compress-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        // The drivers of `make bench` (Benchmarks/run.sh), built beside the product, not part of it.
        .executableTarget(
            name: "orchestrate-bench",
            dependencies: [
                "Orchestrator", "Coordinator", "Store", "OrchestrateModel", "OrchestrateTesting",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
            ],
            path: "Benchmarks/Sources/OrchestrateBench", swiftSettings: swiftSettings
        ),
        // The example of Examples/clinic: a backend, an "app" that reaches it only through OrchestrateKit,
        // and the scenario executable whose step definitions drive the app.
        .executableTarget(
            name: "clinic-backend",
            dependencies: [
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ],
            path: "Examples/clinic/Sources/ClinicBackend", swiftSettings: swiftSettings
        ),
        .target(
            name: "ClinicApp", dependencies: ["OrchestrateKit"], path: "Examples/clinic/Sources/ClinicApp",
            swiftSettings: swiftSettings),
        .executableTarget(
            name: "clinic-scenarios", dependencies: ["ClinicApp", "OrchestrateKit"],
            path: "Examples/clinic/Sources/ClinicScenarios",
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "ProcessSupervisorTests", dependencies: ["ProcessSupervisor", "CSupervisor", "OrchestrateTesting"],
            swiftSettings: swiftSettings),
        .testTarget(name: "StoreTests", dependencies: ["Store", "OrchestrateTesting"], swiftSettings: swiftSettings),
        .testTarget(
            name: "CoordinatorTests", dependencies: ["Coordinator", "Store", "Orchestrator", "OrchestrateTesting"],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "AnalysisTests", dependencies: ["Analysis", "OrchestrateModel", "OrchestrateTesting"],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "ReportsTests", dependencies: ["Reports", "OrchestrateTesting"], exclude: ["Fixtures"],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "OrchestrateKitTests",
            dependencies: [
                "OrchestrateKit", "OrchestrateTesting", "MockServer", "OrchestrateModel",
                .product(name: "Logging", package: "swift-log"),
            ], swiftSettings: swiftSettings),
        .testTarget(
            name: "GherkinTests", dependencies: ["Gherkin", "OrchestrateTesting"], exclude: ["Corpus", "oracle.py"],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "MockServerTests",
            dependencies: [
                "MockServer", "OrchestrateTesting", "OrchestrateModel", "Store",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "CompressNIO", package: "compress-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "OrchestratorTests", dependencies: ["Orchestrator", "Suites", "OrchestrateTesting", "MockServer"],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "orchestrateTests",
            dependencies: [
                "orchestrate", "OrchestrateTesting", "ProcessSupervisor", "Store", "OrchestrateKit",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
            ],
            exclude: ["Fixtures"],
            swiftSettings: swiftSettings
        ),
    ]
)
