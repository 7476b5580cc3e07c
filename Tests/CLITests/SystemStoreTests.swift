import Foundation
import TestSupport
import Testing

/// One store for the command line and the service: without `--store` or `$WEARHOUSE_STORE`, and without a per-user
/// store, the commands use the system configuration's `[store] url` (`$WEARHOUSE_CONFIG` stands in for
/// `/etc/wearhouse/wearhouse.conf` here), `--help` says which store that is, and a store the user may not read is
/// reported as "permission denied", through the real binary.
@Suite struct SystemStoreTests {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("wearhouse-system-\(UUID())")

    /// The environment of a user with an empty home and the system configuration at `config`.
    func environment(config: String) -> [String: String] {
        var environment = ProcessInfo.processInfo.environment
        environment["WEARHOUSE_STORE"] = nil
        environment["XDG_DATA_HOME"] = nil
        environment["HOME"] = directory.appendingPathComponent("home").path
        environment["WEARHOUSE_CONFIG"] = config
        return environment
    }

    func run(_ arguments: [String], config: String) throws -> WearhouseRunner.Result {
        WearhouseRunner.Result(
            try TestSupport.runTool(
                WearhouseRunner.executable.path, arguments, environment: environment(config: config)))
    }

    @Test func commandsUseTheSystemStoreWhenThereIsNoUserStore() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        try FileManager.default.createDirectory(
            at: directory.appendingPathComponent("home"), withIntermediateDirectories: true)
        let store = directory.appendingPathComponent("system.db").path
        let config = directory.appendingPathComponent("wearhouse.conf").path
        try "[store]\nurl = \(store)\n".write(toFile: config, atomically: true, encoding: .utf8)
        let line = #"{"type":"heartRate","start":"2025-03-30T00:00:00Z","value":61,"source":"test"}"#
        let imported = try WearhouseRunner.run(["import-samples", "--store", store, "-"], stdin: line + "\n")
        #expect(imported.status == 0, "\(imported.stderr)")

        let listed = try run(["samples", "--type", "heartRate", "--format", "csv"], config: config)
        #expect(listed.status == 0, "\(listed.stderr)")
        #expect(listed.stdout.contains(",61"), "\(listed.stdout)")
        let help = try run(["samples", "--help"], config: config)
        #expect(help.stdout.contains("STORE: without --store, this command uses \(store) ([store] url of \(config)"))

        // Once the user has a store of their own, that one wins.
        let userStore = directory.appendingPathComponent("home/.local/share/wearhouse/health.db").path
        let own = try WearhouseRunner.run(["import-samples", "--store", userStore, "-"], stdin: line + "\n")
        #expect(own.status == 0, "\(own.stderr)")
        let mine = try run(["samples", "--help"], config: config)
        #expect(mine.stdout.contains("this command uses \(userStore) (the per-user store)"), "\(mine.stdout)")
    }

    @Test(.enabled(if: getuid() == 0, "runs the binary as nobody, which needs root"))
    func unreadableStoreSaysPermissionDenied() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let folder = directory.appendingPathComponent("state")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let store = folder.appendingPathComponent("health.db").path
        let line = #"{"type":"heartRate","start":"2025-03-30T00:00:00Z","value":61,"source":"test"}"#
        #expect(try WearhouseRunner.run(["import-samples", "--store", store, "-"], stdin: line + "\n").status == 0)
        for path in [directory.path, folder.path] { chmod(path, 0o755) }
        chmod(store, 0o600)
        let result = try WearhouseRunner.runTool(
            "/usr/bin/setpriv",
            [
                "--reuid=nobody", "--regid=nogroup", "--clear-groups", WearhouseRunner.executable.path, "sensors",
                "--store", store,
            ])
        #expect(result.status == 77)
        #expect(result.stderr.contains("permission denied: \(store)"), "\(result.stderr)")
        #expect(!result.stderr.contains("unable to open database file"))
    }

    /// A store in a set-group-ID folder that only its group may read (as the package makes /var/lib/wearhouse):
    /// its files are made 0640 in that group, and a member who may not write them runs every reading command.
    @Test(.enabled(if: getuid() == 0, "runs the binary as nobody, which needs root"))
    func membersOfTheStoresGroupRead() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let folder = directory.appendingPathComponent("state")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        chmod(directory.path, 0o755)
        #expect(chown(folder.path, 0, Self.nogroup) == 0)
        chmod(folder.path, 0o2750)
        let store = folder.appendingPathComponent("health.db").path
        let line = #"{"type":"heartRate","start":"2025-03-30T00:00:00Z","value":61,"source":"test"}"#
        #expect(try WearhouseRunner.run(["import-samples", "--store", store, "-"], stdin: line + "\n").status == 0)
        for file in try FileManager.default.contentsOfDirectory(atPath: folder.path) {
            var info = stat()
            #expect(stat(folder.path + "/" + file, &info) == 0)
            #expect(info.st_mode & 0o777 == 0o640 && info.st_gid == Self.nogroup, "\(file)")
        }
        let member = ["/usr/bin/setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"]
        for command in [
            ["sensors"], ["store", "check"], ["samples", "--type", "heartRate", "--format", "csv"],
            ["stats", "--type", "heartRate", "--interval", "1d", "--from", "2025-03-30", "--to", "2025-03-31"],
            ["export", "--format", "csv", "--type", "heartRate"],
        ] {
            let result = try WearhouseRunner.runTool(
                member[0], Array(member.dropFirst()) + [WearhouseRunner.executable.path] + command + ["--store", store])
            #expect(result.status == 0, "\(command): \(result.stderr)")
            #expect(!result.stderr.contains("warning"), "\(command): \(result.stderr)")
        }
        let listed = try WearhouseRunner.runTool(
            member[0],
            Array(member.dropFirst()) + [
                WearhouseRunner.executable.path, "samples", "--type", "heartRate", "--format", "csv", "--store", store,
            ])
        #expect(listed.stdout.contains(",61"))
    }

    /// The group id of `nogroup`, which stands in for `wearhouse`.
    static let nogroup: gid_t = getgrnam("nogroup")?.pointee.gr_gid ?? 65534
}
