// swift-tools-version: 6.0
//
// wearhouse: a HealthKit-style health data store for Linux, fed by a BLE sensor gateway.
// The target graph follows ARCHITECTURE.md; dependencies point one way:
//   GATT, Health  <-  SQLiteStore, PostgresStore, BlueZ, Traces  <-  FakeDevices, Gateway  <-  WearhouseCLI  <-  wearhouse
import PackageDescription

/// Settings for every Swift target: Swift 6 mode with strict concurrency, plus the stricter upcoming
/// features the house style asks for (explicit `any`, imports internal unless marked `public`).
let strict: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

let package = Package(
    name: "wearhouse",
    products: [
        .executable(name: "wearhouse", targets: ["wearhouse"]),
        .library(name: "GATT", targets: ["GATT"]),
        .library(name: "Health", targets: ["Health"]),
        // What apps link to reach the store over D-Bus (docs/app-api.md).
        .library(name: "WearhouseClient", targets: ["WearhouseClient"]),
    ],
    targets: [
        // System libraries over Debian's -dev packages (installed by `make deps`).
        .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        .systemLibrary(name: "CSystemd", pkgConfig: "libsystemd", providers: [.apt(["libsystemd-dev"])]),
        .systemLibrary(name: "CLibPQ", providers: [.apt(["libpq-dev"])]),  // headers only: Sources/CLibPQ/shim.h
        .systemLibrary(name: "CUdev", pkgConfig: "libudev", providers: [.apt(["libudev-dev"])]),
        .systemLibrary(name: "CBluetooth", pkgConfig: "bluez", providers: [.apt(["libbluetooth-dev"])]),
        .systemLibrary(name: "CMicroHTTPD", pkgConfig: "libmicrohttpd", providers: [.apt(["libmicrohttpd-dev"])]),
        .systemLibrary(name: "CGnuTLS", pkgConfig: "gnutls", providers: [.apt(["libgnutls28-dev"])]),
        .systemLibrary(name: "CLibXML2", pkgConfig: "libxml-2.0", providers: [.apt(["libxml2-dev"])]),
        .systemLibrary(name: "CLibZip", pkgConfig: "libzip", providers: [.apt(["libzip-dev"])]),

        // What several modules need once: the clock (system and manual), the seeded generator, backoff, the JSON
        // reader and writer, the byte cursor, the logger's model. Standard library (and Glibc, Synchronization) only.
        .target(name: "Support", swiftSettings: strict),
        // Bluetooth UUIDs, byte reader/writer, every characteristic decoder and encoder,
        // the Central/Peripheral protocols. Standard library and Support only.
        .target(name: "GATT", dependencies: ["Support"], swiftSettings: strict),
        // The health data model. Support and Foundation only.
        .target(name: "Health", dependencies: ["Support"], swiftSettings: strict),
        // What both store engines share: the store executor, rollups, metadata coding, row helpers, the store URL and
        // the HealthStoreEngine protocol the command line and the tests use.
        .target(name: "StoreEngine", dependencies: ["Support", "Health"], swiftSettings: strict),
        // Store engines, one target each: SQLite (default), PostgreSQL (fleets).
        .target(
            name: "SQLiteStore", dependencies: ["Support", "Health", "StoreEngine", "CSQLite"], swiftSettings: strict),
        // PostgresStore opens libpq at run time (dlopen, PostgresLibrary.swift) rather than linking it, so that a
        // service writing to SQLite does not carry libpq's TLS, Kerberos and LDAP libraries.
        .target(
            name: "PostgresStore", dependencies: ["Support", "Health", "StoreEngine", "CLibPQ"], swiftSettings: strict),
        // openStore(_:): a store by its URL, whichever engine holds it.
        .target(
            name: "Stores", dependencies: ["Health", "StoreEngine", "SQLiteStore", "PostgresStore"],
            swiftSettings: strict),
        // The D-Bus layer over sd-bus: the connection on its bus thread, values and types, calls, signals, served
        // objects and introspection.
        .target(name: "DBus", dependencies: ["CSystemd"], swiftSettings: strict),
        // The org.bluez client, on the D-Bus layer.
        .target(name: "BlueZ", dependencies: ["Support", "GATT", "DBus", "CSystemd"], swiftSettings: strict),
        // Trace format, replay, btsnoop import.
        .target(name: "Traces", dependencies: ["Support", "GATT"], swiftSettings: strict),
        // Simulated peripherals, in-process fake central, FakeBlueZ.
        .target(name: "FakeDevices", dependencies: ["Support", "GATT", "DBus", "BlueZ"], swiftSettings: strict),
        // The store's D-Bus API for apps: org.wearhouse.Health1 (wire format, caller identity, the served object).
        .target(name: "HealthBus", dependencies: ["Support", "DBus", "Health"], swiftSettings: strict),
        // The Swift client of that API, for apps.
        .target(name: "WearhouseClient", dependencies: ["HealthBus", "DBus", "Health"], swiftSettings: strict),
        // The web app's HTTP layer: `HTTPServer` (the one owner of a libmicrohttpd daemon), requests, responses,
        // listen addresses, and the session rules (login token, LAN password, cookie, CSRF, rate limit).
        .target(name: "HealthWeb", dependencies: ["CMicroHTTPD", "CGnuTLS"], swiftSettings: strict),
        // Histories from elsewhere: the Apple Health export (export.zip / export.xml) read in place and streamed, over
        // libxml2's pull parser and libzip, each wrapped once (docs/apple-health-import.md); Gadgetbridge's SQLite database,
        // read only through SQLiteStore's connection.
        .target(
            name: "HealthImports", dependencies: ["Support", "Health", "SQLiteStore", "CLibXML2", "CLibZip"],
            swiftSettings: strict),
        // Sensor sessions, sample building, store writer, service lifecycle.
        .target(
            name: "Gateway",
            dependencies: [
                "Support", "GATT", "Health", "StoreEngine", "SQLiteStore", "PostgresStore", "DBus", "BlueZ", "Traces",
                "CSystemd", "CUdev", "CBluetooth",
            ],
            swiftSettings: strict
        ),
        // The subcommands of `wearhouse`: argument parsing, output formatting, wiring.
        .target(
            name: "WearhouseCLI",
            dependencies: [
                "Support", "GATT", "Health", "StoreEngine", "Stores", "SQLiteStore", "PostgresStore", "DBus", "BlueZ",
                "Traces", "FakeDevices", "Gateway", "HealthBus", "HealthWeb", "HealthImports",
            ],
            swiftSettings: strict
        ),
        // The one executable: main.swift only.
        .executableTarget(name: "wearhouse", dependencies: ["WearhouseCLI"], swiftSettings: strict),
        // The benchmark harness (`make bench`); not part of the product.
        .executableTarget(
            name: "Benchmarks",
            dependencies: [
                "Support", "GATT", "Health", "StoreEngine", "Stores", "SQLiteStore", "PostgresStore", "DBus", "BlueZ",
                "Traces", "Gateway", "FakeDevices", "TestSupport", "WearhouseCLI", "HealthImports",
            ],
            swiftSettings: strict),

        // Helpers shared by the test targets (a seedable generator, tolerant comparison, a whole store's contents, a
        // generated Apple Health export, which the apple-health benchmark uses too).
        .target(
            name: "TestSupport", dependencies: ["Support", "FakeDevices", "Health"], path: "Tests/Support",
            swiftSettings: strict),
        // The whole gateway on a private bus (FakeBlueZ, the BlueZ client, the service, SQLite), for the gateway
        // and trace suites.
        .target(
            name: "GatewayTestSupport",
            dependencies: [
                "Support", "Gateway", "GATT", "Health", "SQLiteStore", "DBus", "BlueZ", "FakeDevices", "TestSupport",
            ],
            path: "Tests/GatewaySupport", swiftSettings: strict),
        .testTarget(name: "SupportTests", dependencies: ["Support"], swiftSettings: strict),
        .testTarget(name: "GATTTests", dependencies: ["Support", "GATT", "TestSupport"], swiftSettings: strict),
        .testTarget(name: "HealthTests", dependencies: ["Support", "Health", "TestSupport"], swiftSettings: strict),
        .testTarget(
            name: "StoreEngineTests", dependencies: ["Support", "Health", "StoreEngine", "TestSupport"],
            swiftSettings: strict),
        .testTarget(
            name: "SQLiteStoreTests", dependencies: ["Support", "SQLiteStore", "StoreEngine", "Health", "TestSupport"],
            swiftSettings: strict),
        .testTarget(
            name: "StoreConformanceTests",
            dependencies: [
                "Support", "SQLiteStore", "PostgresStore", "StoreEngine", "Stores", "Health", "TestSupport",
                "HealthBus", "WearhouseClient", "DBus",
            ],
            swiftSettings: strict),
        .testTarget(
            name: "PostgresStoreTests",
            dependencies: ["PostgresStore", "SQLiteStore", "Health", "Gateway", "TestSupport"], swiftSettings: strict),
        .testTarget(
            name: "CLITests",
            dependencies: [
                "wearhouse", "Support", "SQLiteStore", "Health", "DBus", "FakeDevices", "GATT", "Gateway",
                "TestSupport", "StoreEngine", "Stores",
            ],
            swiftSettings: strict),
        .testTarget(name: "HealthWebTests", dependencies: ["HealthWeb"], swiftSettings: strict),
        .testTarget(
            name: "HealthImportsTests",
            dependencies: ["HealthImports", "Health", "SQLiteStore", "Support", "TestSupport"], swiftSettings: strict),
        .testTarget(name: "DBusTests", dependencies: ["DBus", "TestSupport"], swiftSettings: strict),
        .testTarget(
            name: "FakeDevicesTests", dependencies: ["Support", "FakeDevices", "GATT", "DBus", "BlueZ", "TestSupport"],
            swiftSettings: strict),
        .testTarget(
            name: "HealthBusTests",
            dependencies: [
                "wearhouse", "HealthBus", "WearhouseClient", "Health", "SQLiteStore", "DBus", "Support", "TestSupport",
            ], swiftSettings: strict),
        .testTarget(
            name: "TracesTests",
            dependencies: [
                "Support", "Traces", "GATT", "Gateway", "Health", "SQLiteStore", "FakeDevices", "TestSupport",
                "GatewayTestSupport",
            ], swiftSettings: strict),
        .testTarget(
            name: "GatewayTests",
            dependencies: [
                "Support", "Gateway", "GATT", "Health", "SQLiteStore", "DBus", "BlueZ", "FakeDevices", "TestSupport",
                "GatewayTestSupport", "Traces",
            ], swiftSettings: strict),
    ]
)
