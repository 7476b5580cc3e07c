import FakeDevices
import Foundation
import GATT
import Gateway
import Health
import SQLiteStore
import Traces

/// `replay`: `wearhouse replay --speed max` into an empty SQLite store, in notifications per second, for a trace
/// of 10 simulated sensors over 24 hours (1 hour with --quick). Alongside, the stages on their own: reading and
/// parsing the trace, and reading plus sample building without a store, so the table shows where the time goes.
enum ReplayScenario {
    static func run(size: BenchSize) async throws -> BenchReport {
        let hours = size.pick(full: 24, quick: 1, smoke: 1)
        let runs = size.pick(full: 3, quick: 2, smoke: 1)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("wearhouse-replay-\(getpid())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let trace = directory.appendingPathComponent("day.trace").path
        let generated = try generate(hours: hours, into: trace)
        let bytes = (try FileManager.default.attributesOfItem(atPath: trace)[.size] as? NSNumber)?.int64Value ?? 0

        var parseRates: [Double] = []
        var buildRates: [Double] = []
        var replayRates: [Double] = []
        var replayCPURates: [Double] = []
        var discardRates: [Double] = []
        var storeRates: [Double] = []
        var samplesPerNotification = 0.0
        for run in 0...runs {  // run 0 warms up
            let clock = ContinuousClock()
            var count = 0
            let parse = try clock.measure {
                let reader = try TraceReader(path: trace)
                while let record = try reader.next() { if case .value = record { count += 1 } }
            }
            var built = 0
            var batches: [SampleBatch] = []
            let build = try clock.measure {
                let reader = try TraceReader(path: trace)
                var engine = TraceReplayEngine(settings: settings)
                var batch = SampleBatch()
                engine.handle(.header(reader.header), into: &batch)
                while let record = try reader.next() {
                    engine.handle(record, into: &batch)
                    if batch.count >= TraceReplay.writerSettings.batchSize {
                        built += batch.count
                        batches.append(batch)
                        batch = SampleBatch()
                    }
                }
                engine.finish(into: &batch)
                built += batch.count
                batches.append(batch)
            }
            // The store alone: the same batches, already built, saved one after the other.
            let storeOnly = try SQLiteHealthStore(path: directory.appendingPathComponent("store-\(run).db").path)
            let save = try await clock.measure {
                for batch in batches { _ = try await storeOnly.save(batch, as: .owner) }
            }
            batches = []
            let store = try SQLiteHealthStore(path: directory.appendingPathComponent("replay-\(run).db").path)
            let writer = StoreWriter(
                sink: HealthStoreSink(store: store),
                settings: TraceReplay.writerSettings)
            let started = clock.now
            let cpuBefore = cpuSeconds()
            var reader = try TraceReader(path: trace)
            let counters = try await writer.whileRunning {
                try await TraceReplay.run(&reader, engine: TraceReplayEngine(settings: settings), writer: writer)
            }
            let replay = clock.now - started
            let replayCPU = cpuSeconds() - cpuBefore
            let written = await writer.counters
            guard written.inserted == counters.samples, counters.notifications + counters.indications == generated
            else {
                throw BenchError("replay stored \(written.inserted) of \(counters.samples) samples")
            }
            let discarding = StoreWriter(
                sink: DiscardingSink(),
                settings: TraceReplay.writerSettings)
            let discardStart = clock.now
            var again = try TraceReader(path: trace)
            _ = try await discarding.whileRunning {
                try await TraceReplay.run(&again, engine: TraceReplayEngine(settings: settings), writer: discarding)
            }
            let discard = clock.now - discardStart
            if run > 0 {
                discardRates.append(Double(generated) / seconds(discard))
                storeRates.append(Double(generated) / seconds(save))
                parseRates.append(Double(count) / seconds(parse))
                buildRates.append(Double(count) / seconds(build))
                replayRates.append(Double(generated) / seconds(replay))
                replayCPURates.append(Double(generated) / replayCPU)
                samplesPerNotification = Double(built) / Double(count)
            }
        }
        return BenchReport(
            scenario: "replay", size: size,
            rows: [
                BenchRow(subject: "replay --speed max into empty SQLite", unit: "notifications/s", runs: replayRates),
                BenchRow(
                    subject: "the same replay, per CPU second (user + system)", unit: "notifications/s",
                    runs: replayCPURates),
                BenchRow(subject: "read + parse the trace only", unit: "notifications/s", runs: parseRates),
                BenchRow(subject: "read + parse + build samples, no store", unit: "notifications/s", runs: buildRates),
                BenchRow(
                    subject: "replay through the writer, discarding sink", unit: "notifications/s", runs: discardRates),
                BenchRow(
                    subject: "saving the built batches only (SQLite)", unit: "notifications/s", runs: storeRates),
            ],
            notes: [
                "\(generated) notifications from 10 simulated sensors over \(hours) h (\(bytes / 1_000_000) MB trace), "
                    + String(format: "%.2f", samplesPerNotification) + " samples per notification",
                "store: WAL + synchronous=FULL, the writer settings of `wearhouse replay`; target >= 1 M notifications/s",
                "per CPU second: notifications over the replay's user + system time (getrusage), what the replay costs whatever else runs",
            ])
    }

    static let settings = TraceReplayEngine.Settings(
        source: Source(identifier: "wearhouse", version: "bench"), timeZone: TimeZone(identifier: "UTC")!)

    /// Writes a trace of 10 simulated sensors (4 chest straps, 2 wrist monitors, 2 footpods, a PAMS step counter
    /// and an InfiniTime watch) for `hours`, returns the number of notifications.
    static func generate(hours: Int, into path: String) throws -> Int {
        let kinds: [PeripheralScript.Kind] = [
            .chestStrap, .chestStrap, .chestStrap, .chestStrap, .wristMonitor, .wristMonitor, .footpod, .footpod,
            .stepCounter, .infiniTimeWatch,
        ]
        let wallStart: Int64 = 1_795_946_400_000_000
        let writer = try TraceWriter(path: path, header: TraceHeader(recorder: "wearhouse bench", origin: "simulated"))
        var peripherals = kinds.enumerated().map { index, kind in
            PeripheralScript(kind: kind, address: String(format: "C0:FF:EE:00:01:%02X", index), seed: UInt64(index + 1))
                .makePeripheral()
        }
        let measurements: Set<BluetoothUUID> = Set(GatewayService.measurements)
        for (index, peripheral) in peripherals.enumerated() {
            try writer.append(
                .sensor(
                    TraceSensor(
                        address: peripheral.identity.address, name: peripheral.identity.name,
                        manufacturer: "Wearhouse Fakes", model: kinds[index].rawValue, serialNumber: "SN\(index)",
                        bodySensorLocation: kinds[index] == .chestStrap ? 1 : nil, subject: "subject-\(index % 3)",
                        sourceIdentifier: "wearhouse", sourceVersion: "bench", timeZone: "UTC")))
        }
        var count = 0
        for second in 1...(hours * 3600) {
            let now = Duration.seconds(second)
            for index in peripherals.indices {
                for emission in peripherals[index].advance(to: now) where measurements.contains(emission.characteristic)
                {
                    let (whole, fraction) = emission.at.components
                    let at = Timestamp(
                        monotonic: emission.at,
                        wallMicroseconds: wallStart + whole * 1_000_000 + fraction / 1_000_000_000_000)
                    try writer.append(
                        .value(
                            TraceValue(
                                kind: emission.isIndication ? .indication : .notification,
                                address: peripherals[index].identity.address, characteristic: emission.characteristic,
                                bytes: emission.value, at: at)))
                    count += 1
                }
            }
        }
        try writer.close()
        return count
    }

    struct BenchError: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }

    /// The CPU time (user and system) this process has used so far: during the replay it does nothing else, so
    /// the difference is what the replay cost, however busy the machine was.
    static func cpuSeconds() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6 + Double(usage.ru_stime.tv_sec)
            + Double(usage.ru_stime.tv_usec) / 1e6
    }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) * 1e-18
    }
}
