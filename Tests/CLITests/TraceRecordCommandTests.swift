import DBus
import FakeDevices
import Foundation
import Support
import TestSupport
import Testing

/// `wearhouse run --record` and `wearhouse record` through the real binary, against FakeBlueZ in real time.
@Suite(.serialized, .timeLimit(.minutes(2))) struct TraceRecordCommandTests {
    static let strap = "C0:FF:EE:00:00:01"
    static let scenario = FakeBlueZScenario(peripherals: [
        .init(kind: .chestStrap, address: strap, name: "Strap", seed: 1, known: true),
        .init(kind: .footpod, address: "C0:FF:EE:00:00:03", name: "Pod", seed: 3, known: true),
    ])

    @Test func runRecordsWhatItStoresAndRecordStoresNothing() async throws {
        try await withPrivateBus { bus in
            let fake = try await FakeBlueZ.start(on: .address(bus.address), scenario: Self.scenario)
            let clock = Task { await fake.runInRealTime(interval: .milliseconds(50)) }
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("rec-cli-\(UUID().uuidString)")
            defer {
                clock.cancel()
                try? FileManager.default.removeItem(at: folder)
            }
            let store = folder.appendingPathComponent("health.db").path
            let trace = folder.appendingPathComponent("run.trace").path
            for address in [Self.strap, "C0:FF:EE:00:00:03"] {
                let pair = try await WearhouseRunner.runOffPool([
                    "pair", address, "--bus", bus.address, "--store", store,
                ])
                #expect(pair.status == 0, "\(pair.stderr)")
            }
            // The service runs until the trace holds a few notifications (however busy the machine), then SIGTERM.
            let run = try await Self.run(
                ["run", "--config", "/dev/null", "--bus", bus.address, "--store", store, "--record", trace]
            ) { Self.notifications(in: trace, afterLast: nil) >= 4 }
            #expect(run.status == 0, "\(run.stderr)")
            #expect(run.stderr.contains("recorded"))
            let lines = try String(contentsOfFile: trace, encoding: .utf8).split(separator: "\n")
            #expect(lines.first?.hasPrefix(#"{"wearhouse-trace":1"#) == true)
            #expect(lines.contains { $0.contains(#""kind":"sensor","sensor":"C0:FF:EE:00:00:01""#) })
            let notifications = lines.filter { $0.contains(#""kind":"notification""#) }.count
            #expect(notifications >= 4)

            // Replayed into an empty store: the same heart-rate samples as the service stored.
            let replayStore = folder.appendingPathComponent("replay.db").path
            let replay = try await WearhouseRunner.runOffPool(["replay", trace, "--store", replayStore])
            #expect(replay.status == 0, "\(replay.stderr)")
            for type in ["heartRate", "runningSpeed", "heartbeatSeries"] {
                let live = try await WearhouseRunner.runOffPool([
                    "samples", "--store", store, "--type", type, "--format", "csv",
                ])
                let again = try await WearhouseRunner.runOffPool([
                    "samples", "--store", replayStore, "--type", type, "--format", "csv",
                ])
                #expect(!live.stdout.isEmpty)
                #expect(live.stdout == again.stdout, "\(type)")
            }

            // Record only: the trace grows by a session, the store does not.
            let before = try await WearhouseRunner.runOffPool([
                "samples", "--store", store, "--type", "heartRate", "--format", "csv",
            ])
            let record = try await Self.run([
                "record", "--out", trace, "--sensor", Self.strap.lowercased(), "--config", "/dev/null", "--bus",
                bus.address, "--store", store,
            ]) { Self.notifications(in: trace, afterLast: #""kind":"session""#) >= 2 }
            #expect(record.status == 0, "\(record.stderr)")
            let after = try await WearhouseRunner.runOffPool([
                "samples", "--store", store, "--type", "heartRate", "--format", "csv",
            ])
            #expect(before.stdout == after.stdout)
            let all = try String(contentsOfFile: trace, encoding: .utf8).split(separator: "\n")
            let session = try #require(all.firstIndex { $0.contains(#""kind":"session""#) })
            let recorded = all[session...].filter { $0.contains(#""kind":"notification""#) }
            #expect(recorded.count >= 2)
            #expect(recorded.allSatisfy { $0.contains(Self.strap) })
            await fake.stop()
        }
    }

    /// `fake-bluez --trace`: a recorded session lived again through D-Bus and the real service.
    @Test func aRecordedTraceIsServedAgainAsASimulatedPeripheral() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("rec-fake-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let trace = folder.appendingPathComponent("strap.trace").path
        let first = folder.appendingPathComponent("first.db").path
        try await withPrivateBus { bus in
            let fake = try await FakeBlueZ.start(on: .address(bus.address), scenario: Self.scenario)
            let clock = Task { await fake.runInRealTime(interval: .milliseconds(50)) }
            defer { clock.cancel() }
            #expect(
                try await WearhouseRunner.runOffPool(["pair", Self.strap, "--bus", bus.address, "--store", first])
                    .status == 0)
            let run = try await Self.run(
                ["run", "--config", "/dev/null", "--bus", bus.address, "--store", first, "--record", trace]
            ) { Self.notifications(in: trace, afterLast: nil) >= 8 }
            #expect(run.status == 0, "\(run.stderr)")
            await fake.stop()
        }
        let again = folder.appendingPathComponent("again.db").path
        try await withPrivateBus { bus in
            let server = try WearhouseRunner.start([
                "fake-bluez", "--address", bus.address, "--trace", trace, "--duration", "60",
            ])
            defer { WearhouseRunner.kill(server) }
            var paired = WearhouseRunner.Result(ToolRun(status: -1, stdout: "", stderr: ""))
            _ = try await eventually(timeout: .seconds(5)) {
                paired = try await WearhouseRunner.runOffPool([
                    "pair", Self.strap, "--bus", bus.address, "--store", again,
                ])
                return paired.status == 0
            }
            #expect(paired.status == 0, "\(paired.stderr)")
            #expect(paired.stdout.contains("Strap"))
            let run = try await Self.run(["run", "--config", "/dev/null", "--bus", bus.address, "--store", again]) {
                let stored = try? await WearhouseRunner.runOffPool([
                    "samples", "--store", again, "--type", "heartRate", "--format", "csv",
                ])
                return (stored?.stdout.split(separator: "\n").count ?? 0) >= 4
            }
            #expect(run.status == 0, "\(run.stderr)")
        }
        // What the replayed strap sent is what the real one sent: the values are a run of the original ones.
        func values(_ store: String) throws -> [String] {
            let csv = try WearhouseRunner.run([
                "samples", "--store", store, "--type", "heartRate", "--format", "csv",
            ])
            let rows = csv.stdout.split(separator: "\n").map {
                $0.split(separator: ",", omittingEmptySubsequences: false)
            }
            guard let column = rows.first?.firstIndex(of: "value") else { return [] }
            return rows.dropFirst().map { String($0[column]) }
        }
        let original = try values(first)
        let replayed = try values(again)
        #expect(replayed.count >= 3)
        // Compared with the heart rates the trace holds, which is what the replayed strap serves: the first store
        // holds what its run stored before the stop, and a repeat once.
        let sent = try Self.heartRates(inTrace: trace)
        #expect(sent.joined(separator: " ").contains(replayed.prefix(3).joined(separator: " ")), "\(original)")
        #expect(original.allSatisfy(sent.contains))
    }

    /// The heart rates of a trace's Heart Rate Measurement notifications (flags, then a UInt8 or UInt16 value).
    static func heartRates(inTrace path: String) throws -> [String] {
        try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").compactMap { line in
            guard line.contains(#""kind":"notification""#), line.contains(#""uuid":"2a37""#),
                let start = line.range(of: #""value":""#)?.upperBound
            else { return nil }
            let hex = line[start...].prefix { $0 != "\"" }
            let bytes = stride(from: 0, to: hex.count - 1, by: 2).compactMap { offset -> UInt8? in
                let from = hex.index(hex.startIndex, offsetBy: offset)
                return UInt8(hex[from..<hex.index(from, offsetBy: 2)], radix: 16)
            }
            guard bytes.count >= 2 else { return nil }
            let bpm = bytes[0] & 1 == 0 ? Int(bytes[1]) : bytes.count >= 3 ? Int(bytes[1]) | Int(bytes[2]) << 8 : 0
            // Values the service does not store: 0 bpm, or sent without skin contact (flags 0b10 set, 0b100 clear).
            guard bpm > 0, bytes[0] & 0b110 != 0b100 else { return nil }
            return String(format: "%.1f", Double(bpm))
        }
    }

    /// Runs the binary until `done` holds (checked every 100 ms, at most a minute), then stops it with SIGTERM.
    static func run(_ arguments: [String], until done: () async -> Bool) async throws -> WearhouseRunner.Result {
        let errors = WearhouseRunner.ErrorLog()
        let process = try WearhouseRunner.start(arguments, errors: errors.stream)
        _ = try await eventually(timeout: .seconds(60)) { await done() || !process.isRunning }
        process.signal(SIGTERM)
        return try await WearhouseRunner.exit(of: process, errors: errors)
    }

    /// Notification lines in the trace at `path`, counting only after the last line containing `marker`.
    static func notifications(in path: String, afterLast marker: String?) -> Int {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return 0 }
        var lines = text.split(separator: "\n")[...]
        if let marker {
            guard let last = lines.lastIndex(where: { $0.contains(marker) }) else { return 0 }
            lines = lines[(last + 1)...]
        }
        return lines.filter { $0.contains(#""kind":"notification""#) }.count
    }
}
