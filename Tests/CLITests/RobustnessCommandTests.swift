import Foundation
import Support
import Testing

/// Issue 15 through the real binary: what used to trap, echo megabytes or stay silent.
@Suite struct RobustnessCommandTests {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
        "wearhouse-robust-\(UUID().uuidString)")
    var store: String { directory.appendingPathComponent("health.db").path }

    func write(_ bytes: [UInt8], to name: String) throws -> String {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let path = directory.appendingPathComponent(name).path
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    func write(_ text: String, to name: String) throws -> String { try write(Array(text.utf8), to: name) }

    static let header =
        #"{"wearhouse-trace":1,"recorder":"test","origin":"live","series-window-ms":60000,"gap-threshold-ms":2500}"#
    static let sensor =
        #"{"kind":"sensor","sensor":"C0:FF:EE:00:00:01","characteristics":["2a37"],"mono-ns":0,"wall-us":1795946400000000}"#

    static func notification(_ value: String, second: Int64, wall: Int64? = nil) -> String {
        let wall = wall ?? 1_795_946_400_000_000 + second * 1_000_000
        return #"{"kind":"notification","sensor":"C0:FF:EE:00:00:01","uuid":"2a37","value":""#
            + value + #"","mono-ns":\#(second * 1_000_000_000),"wall-us":\#(wall)}"#
    }

    @Test(arguments: [Int64.max, Int64.min])
    func aTraceAtTheEndsOfTimeIsRefusedNotATrap(_ wall: Int64) throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let trace = [
            Self.header, Self.sensor, Self.notification("0648", second: 1, wall: wall),
            Self.notification("0649", second: 2, wall: wall),
        ]
        let path = try write(trace.joined(separator: "\n") + "\n", to: "edge.trace")
        let result = try WearhouseRunner.run(["replay", path, "--store", store])
        #expect(result.status == 65, "\(result.stderr)")
        #expect(result.stderr.contains("edge.trace:3: 'wall-us' \(wall) is outside the times a store holds"))
        #expect(result.stderr.contains("the replay stopped there; nothing was stored"))
    }

    @Test func aReplayThatStopsSaysWhatItStoredAndWhyItRejected() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        // 16-bit heart rates: 72, then 400 (outside heartRate's 1-300), then a line that is not a record.
        let trace = [
            Self.header, Self.sensor, Self.notification("064800", second: 1), Self.notification("079001", second: 2),
            Self.notification("064a00", second: 3),
            #"{"kind":"connection","sensor":"C0:FF:EE:00:00:01","connected":0}"#,
            Self.notification("064b00", second: 4),
        ]
        let path = try write(trace.joined(separator: "\n") + "\n", to: "stops.trace")
        let result = try WearhouseRunner.run(["replay", path, "--store", store])
        #expect(result.status == 65, "\(result.stderr)")
        #expect(result.stderr.contains("stops.trace:6: 'connected' must be true or false"))
        #expect(result.stderr.contains("the replay stopped there; the 2 new samples before it were stored"))
        #expect(result.stderr.contains("the store rejected 1 samples or series as invalid, the first 1 of them:"))
        #expect(result.stderr.contains("heartRate at 2026-11-29T10:00:02"))
    }

    @Test func aRetentionBeyondAHundredYearsIsRefusedAndPruneRuns() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = try write(
            [Self.header, Self.sensor, Self.notification("0648", second: 1)].joined(separator: "\n"), to: "one.trace")
        #expect(try WearhouseRunner.run(["replay", path, "--store", store]).status == 0)
        let refused = try WearhouseRunner.run([
            "store", "retention", "--type", "heartRate", "--days", "999999999999999", "--store", store,
        ])
        #expect(refused.status == 64, "\(refused.stderr)")
        #expect(refused.stderr.contains("--days must be a whole number from 1 to 36525, not '999999999999999'"))
        #expect(try WearhouseRunner.run(["store", "retention", "--store", store]).stdout.contains("kept forever"))
        let longest = ["store", "retention", "--type", "heartRate", "--days", "36525", "--store", store]
        #expect(try WearhouseRunner.run(longest).status == 0)
        let pruned = try WearhouseRunner.run(["store", "prune", "--store", store, "--yes"])
        #expect(pruned.status == 0, "\(pruned.stderr)")
        #expect(pruned.stdout == "pruned 0 samples\n")
    }

    @Test func aBrokenPipeWithSIGPIPEIgnoredEndsWith74() throws {
        // The reader of stdout is gone before the child starts; `trap "" PIPE` ignores SIGPIPE as systemd does.
        var ends: [Int32] = [0, 0]
        #expect(pipe(&ends) == 0)
        close(ends[0])
        let errors = WearhouseRunner.ErrorLog()
        let child = try ChildProcess.start(
            "/bin/sh", ["-c", #"trap "" PIPE; exec "$0" --help"#, WearhouseRunner.executable.path],
            output: .descriptor(ends[1]), errors: errors.stream)
        close(ends[1])
        let exit = child.wait()
        let stderr = errors.take()
        #expect(exit.exited && exit.status == 74, "\(exit): \(stderr)")
        #expect(stderr == "wearhouse: cannot write to stdout: Broken pipe; stopping\n")
    }

    @Test func errorLinesShowAtMost64CharactersOfABadValue() throws {
        let long = String(repeating: "x", count: 100_000)
        let shown = String(repeating: "x", count: 62) + "...' (1000"  // 64 characters of the value, its size
        let commands: [[String]] = [
            ["replay", "a", "--speed", long], ["store", "retention", "--type", "heartRate", "--days", long],
            [long], ["types", "--" + long], ["import", "a", "--address", long], ["samples", "--type", long],
            ["store", long],
        ]
        for command in commands {
            let result = try WearhouseRunner.run(command)
            let named = command.map { $0.prefix(20) }
            #expect(result.status == 64, "\(named)")
            #expect(result.stderr.contains(shown), "\(named): \(result.stderr.prefix(300))")
            #expect(result.stderr.utf8.count < 2_000, "\(named): \(result.stderr.utf8.count) bytes")
            #expect(!result.stderr.contains(String(repeating: "x", count: 65)), "\(named)")
        }
    }

    @Test func anEmptyOrDamagedCaptureIsNamedForWhatItIs() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let cases: [(bytes: [UInt8], says: String)] = [
            ([], "empty file: neither a btsnoop capture nor a bleak log"),
            (Array("btsn".utf8), "truncated btsnoop capture: 4 bytes"),
            (
                Array("btsnooq\0".utf8) + [0, 0, 0, 1, 0, 0, 0x03, 0xEA],
                "not a btsnoop capture (its first bytes are 62 74 73 6e 6f 6f 71 00"
            ),
            (Array("hello\n".utf8), "no Notify or Read lines in the log (read as a bleak log"),
        ]
        for (index, item) in cases.enumerated() {
            let path = try write(item.bytes, to: "capture\(index)")
            let result = try WearhouseRunner.run(["import", path, "--store", store])
            #expect(result.status == 65, "\(item.says): \(result.stderr)")
            #expect(result.stderr.contains(item.says), "\(result.stderr)")
        }
    }
}
