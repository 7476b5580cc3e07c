import Foundation
import GATT
import Gateway
import Health
import SQLiteStore
import Traces

/// `replay-rejects`: `wearhouse replay --speed max` of a chest strap's day whose RR intervals do not match the
/// notification timing (two 1 s intervals a second: the beat clock restarts, beats go backwards, and the store
/// refuses almost every heartbeat series), beside the same day with consistent RR intervals (one a second), in
/// the same run. A rejected series must cost no more than an accepted one (issue 20: 125 s against 0.19 s), and
/// the WAL must stay within the store's size plus a bounded margin.
enum ReplayRejectsScenario {
    static func run(size: BenchSize) async throws -> BenchReport {
        let hours = size.pick(full: 24, quick: 4, smoke: 1)
        let runs = size.pick(full: 3, quick: 2, smoke: 1)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("wearhouse-rejects-\(getpid())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let consistent = directory.appendingPathComponent("consistent.trace").path
        let mismatched = directory.appendingPathComponent("mismatched.trace").path
        let notifications = try generate(hours: hours, intervalsPerSecond: 1, into: consistent)
        _ = try generate(hours: hours, intervalsPerSecond: 2, into: mismatched)

        var goodRates: [Double] = []
        var badRates: [Double] = []
        var ratios: [Double] = []
        var rejected = 0
        var accepted = 0
        var wal: [Double] = []
        var stores: [Double] = []
        for run in 0...runs {  // run 0 warms up
            let good = try await replay(consistent, into: directory.appendingPathComponent("good-\(run).db").path)
            let bad = try await replay(mismatched, into: directory.appendingPathComponent("bad-\(run).db").path)
            if run > 0 {
                goodRates.append(Double(notifications) / good.seconds)
                badRates.append(Double(notifications) / bad.seconds)
                ratios.append(good.seconds / bad.seconds)
                wal.append(bad.walBytes / 1e6)
                stores.append(bad.storeBytes / 1e6)
                rejected = bad.rejected
                accepted = good.inserted
            }
        }
        return BenchReport(
            scenario: "replay-rejects", size: size,
            rows: [
                BenchRow(subject: "replay, RR not matching the timing", unit: "notifications/s", runs: badRates),
                BenchRow(subject: "replay, consistent RR", unit: "notifications/s", runs: goodRates),
                BenchRow(subject: "mismatched / consistent speed, round by round", unit: "x", runs: ratios),
                BenchRow(subject: "WAL after the mismatched replay", unit: "MB", runs: wal),
                BenchRow(subject: "its store", unit: "MB", runs: stores),
            ],
            notes: [
                "\(notifications) heart-rate notifications of one chest strap over \(hours) h per trace; "
                    + "\(rejected) samples or series rejected from the mismatched trace, \(accepted) samples stored from the consistent one",
                "store: WAL + synchronous=FULL, the writer settings of `wearhouse replay`; target: x >= 1 (a rejected series costs no more)",
                "WAL: its size after the replay, before any explicit checkpoint; bound: the store plus a few MB",
            ])
    }

    struct Outcome {
        var seconds: Double
        var rejected: Int
        var inserted: Int
        var walBytes: Double
        var storeBytes: Double
    }

    static func replay(_ trace: String, into path: String) async throws -> Outcome {
        let store = try SQLiteHealthStore(path: path)
        let writer = StoreWriter(sink: HealthStoreSink(store: store), settings: TraceReplay.writerSettings)
        let clock = ContinuousClock()
        let started = clock.now
        var reader = try TraceReader(path: trace)
        _ = try await writer.whileRunning {
            try await TraceReplay.run(
                &reader, engine: TraceReplayEngine(settings: ReplayScenario.settings), writer: writer)
        }
        let elapsed = clock.now - started
        let counters = await writer.counters
        func bytes(_ file: String) -> Double {
            ((try? FileManager.default.attributesOfItem(atPath: file))?[.size] as? NSNumber)?.doubleValue ?? 0
        }
        return Outcome(
            seconds: ReplayScenario.seconds(elapsed), rejected: counters.rejected, inserted: counters.inserted,
            walBytes: bytes(path + "-wal"), storeBytes: bytes(path))
    }

    /// A chest strap's trace: a Heart Rate Measurement a second (60 bpm) carrying `intervalsPerSecond` RR
    /// intervals of 1 s each. Returns the number of notifications.
    static func generate(hours: Int, intervalsPerSecond: Int, into path: String) throws -> Int {
        let wallStart: Int64 = 1_795_946_400_000_000
        let address = "C0:FF:EE:00:02:01"
        let writer = try TraceWriter(path: path, header: TraceHeader(recorder: "wearhouse bench", origin: "simulated"))
        try writer.append(
            .sensor(
                TraceSensor(
                    address: address, name: "Strap", manufacturer: "Wearhouse Fakes", model: "chestStrap",
                    serialNumber: "SN-RR", bodySensorLocation: 1, subject: "subject-0", sourceIdentifier: "wearhouse",
                    sourceVersion: "bench", timeZone: "UTC")))
        // Flags 0x10: uint8 heart rate, RR intervals present; each RR interval 1024/1024 s, little-endian.
        let bytes: [UInt8] = [0x10, 60] + Array(repeating: [0x00, 0x04], count: intervalsPerSecond).flatMap { $0 }
        let seconds = hours * 3600
        for second in 1...seconds {
            let at = Timestamp(
                monotonic: .seconds(second), wallMicroseconds: wallStart + Int64(second) * 1_000_000)
            try writer.append(
                .value(
                    TraceValue(
                        kind: .notification, address: address, characteristic: .heartRateMeasurement, bytes: bytes,
                        at: at)))
        }
        try writer.close()
        return seconds
    }
}
