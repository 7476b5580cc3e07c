import Foundation
import Health
import SQLiteStore
import Support
import TestSupport
import Testing

/// The real service (`wearhouse run --api <private bus>`) over a fresh store, and programs run against it, as
/// root or as other users (`setpriv`).
final class RunningService: @unchecked Sendable {
    // @unchecked Sendable: every property is set in init and never changed.
    let bus: PrivateBus
    let directory: URL
    let storePath: String
    let process: ChildProcess
    let log: URL

    static let wearhouse: URL = {
        let besideTests = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
            .appendingPathComponent("wearhouse")
        if FileManager.default.isExecutableFile(atPath: besideTests.path) { return besideTests }
        return repositoryRoot.appendingPathComponent(".build/debug/wearhouse")
    }()

    private init(bus: PrivateBus, directory: URL, process: ChildProcess, log: URL) {
        self.bus = bus
        self.directory = directory
        storePath = directory.appendingPathComponent("health.db").path
        self.process = process
        self.log = log
    }

    /// Starts a private bus and the service on it, and waits (up to 15 s) until it owns `org.wearhouse.Health1`.
    /// With `serviceUser`, the service runs as that user with the shipped unit's capabilities and user namespace
    /// (``unitSandbox(_:)``), in a directory that user owns; otherwise as root.
    static func start(serviceUser: uid_t? = nil) async throws -> RunningService {
        let bus = try await PrivateBus.start()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("wearhouse-service-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let log = directory.appendingPathComponent("service.log")
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        let arguments = [
            "run", "--store", directory.appendingPathComponent("health.db").path, "--bus", bus.address, "--api",
            bus.address,
        ]
        if let serviceUser {
            let gid = getpwuid(serviceUser).map { $0.pointee.pw_gid } ?? serviceUser
            guard chown(directory.path, serviceUser, gid) == 0 else {
                throw ServiceError(message: "cannot give \(directory.path) to uid \(serviceUser)")
            }
        }
        let argv = try serviceUser.map { try unitSandbox($0) + [wearhouse.path] } ?? [wearhouse.path]
        let process = try ChildProcess.start(
            argv[0], Array(argv.dropFirst()) + arguments, output: .file(log.path, append: true), errors: .sameAsOutput)
        let service = RunningService(bus: bus, directory: directory, process: process, log: log)
        let deadline = ContinuousClock.now + .seconds(15)
        while true {
            let owned = try service.run([
                "/usr/bin/busctl", "--address=\(bus.address)", "call", "org.freedesktop.DBus", "/org/freedesktop/DBus",
                "org.freedesktop.DBus", "NameHasOwner", "s", "org.wearhouse.Health1",
            ])
            if owned.stdout.hasPrefix("b true") { return service }
            guard ContinuousClock.now < deadline, process.isRunning else {
                let text = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
                service.stop()
                throw ServiceError(message: "the service did not take its name: \(text)")
            }
            try await Task.sleep(for: .milliseconds(50))
        }
    }

    struct ServiceError: Error, CustomStringConvertible {
        var message: String
        var description: String { message }
    }

    /// Stops the service (SIGTERM) and returns its exit status; removes the bus and the store.
    @discardableResult
    func stop() -> Int32 {
        process.signal(SIGTERM)
        let exit = process.wait()
        bus.stop()
        try? FileManager.default.removeItem(at: directory)
        return exit.status
    }

    /// The environment programs get: the private bus as the system bus.
    var environment: [String: String] {
        [
            "PATH": Self.wearhouse.deletingLastPathComponent().path + ":/usr/bin:/bin",
            "DBUS_SYSTEM_BUS_ADDRESS": bus.address, "WEARHOUSE_STORE": storePath, "HOME": "/", "LANG": "C.UTF-8",
        ]
    }

    /// The prefix that runs a program as `uid` the way `Systemd/wearhouse.service` runs the service: with the
    /// unit's `AmbientCapabilities=` as its only capabilities, and in a user namespace of its own when the unit says
    /// `PrivateUsers=yes` (mapping only that user, as systemd does).
    static func unitSandbox(_ uid: uid_t) throws -> [String] {
        let unit = try String(
            contentsOf: repositoryRoot.appendingPathComponent("Systemd/wearhouse.service"), encoding: .utf8)
        let lines = unit.split(separator: "\n").map(String.init)
        let capabilities = lines.filter { $0.hasPrefix("AmbientCapabilities=") }
            .flatMap { $0.dropFirst("AmbientCapabilities=".count).split(separator: " ") }
            .map { "+" + $0.lowercased().replacingOccurrences(of: "cap_", with: "") }
        let gid = getpwuid(uid).map { $0.pointee.pw_gid } ?? uid
        var argv = ["/usr/bin/setpriv", "--reuid=\(uid)", "--regid=\(gid)", "--clear-groups"]
        if !capabilities.isEmpty {
            let list = capabilities.joined(separator: ",")
            argv += ["--inh-caps=-all,\(list)", "--ambient-caps=\(list)", "--bounding-set=-all,\(list)"]
        }
        argv.append("--")
        if lines.contains("PrivateUsers=yes") {
            argv += ["/usr/bin/unshare", "--user", "--map-user=\(uid)", "--map-group=\(gid)", "--"]
        }
        return argv
    }

    /// `argv` prefixed to run as `uid` (with its primary group and no others).
    static func asUser(_ uid: uid_t?, _ argv: [String]) -> [String] {
        guard let uid else { return argv }
        let gid = getpwuid(uid).map { $0.pointee.pw_gid } ?? uid
        return ["/usr/bin/setpriv", "--reuid=\(uid)", "--regid=\(gid)", "--clear-groups", "--"] + argv
    }

    /// Runs a program to completion (as `uid`, when given).
    func run(_ argv: [String], as uid: uid_t? = nil) throws -> ToolRun {
        let full = Self.asUser(uid, argv)
        return try runTool(full[0], Array(full.dropFirst()), environment: environment)
    }

    /// `busctl call org.wearhouse.Health1 /org/wearhouse/Health1 org.wearhouse.Health1 <member> <arguments>`.
    func busctl(_ member: String, _ arguments: [String] = [], as uid: uid_t? = nil) throws -> ToolRun {
        try run(
            [
                "/usr/bin/busctl", "call", "org.wearhouse.Health1", "/org/wearhouse/Health1", "org.wearhouse.Health1",
                member,
            ]
                + arguments, as: uid)
    }

    /// `wearhouse <arguments>` as the owner (root, with the store).
    func wearhouse(_ arguments: [String]) throws -> ToolRun {
        try run([Self.wearhouse.path] + arguments + ["--store", storePath])
    }

    /// Starts a program in the background (as `uid`), its output going to a file.
    func background(_ argv: [String], as uid: uid_t?, output: URL) throws -> ChildProcess {
        let full = Self.asUser(uid, argv)
        return try ChildProcess.start(
            full[0], Array(full.dropFirst()), environment: environment, output: .file(output.path, append: false),
            errors: .sameAsOutput)
    }
}

/// Whether the multi-user tests can run here, and the users they run as.
enum MultiUser {
    /// Existing non-root users (dbus-daemon refuses UIDs without a passwd entry), UID 1000 first when it exists.
    static let users: [uid_t] = [1000, 65534, 1, 2, 3, 8, 33].filter { getpwuid($0) != nil }

    static let tools = ["/usr/bin/setpriv", "/usr/bin/busctl", "/usr/bin/gdbus", "/usr/bin/python3"]

    /// Root, the tools, python3-dbus and python3-gi, and two users.
    static let available: Bool = {
        guard getuid() == 0, users.count >= 2, tools.allSatisfy({ FileManager.default.isExecutableFile(atPath: $0) })
        else { return false }
        let probe = try? ChildProcess.start(
            "/usr/bin/python3", ["-c", "import dbus, dbus.mainloop.glib; from gi.repository import GLib"],
            output: .null, errors: .null)
        return probe?.wait().succeeded ?? false
    }()

    static let skipReason: Comment = """
        needs root (to start clients under other UIDs with setpriv), busctl, gdbus, /usr/bin/python3 with \
        python3-dbus and python3-gi, and two non-root users; skipped here, CI runs it as root
        """
}
