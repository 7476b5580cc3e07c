import Foundation
import Health
import SQLiteStore

/// `ingest`: heart-rate samples per second into a fresh SQLite store, durable (WAL + FULL), in
/// batches of 1,000 as the gateway's writer sends them, and bytes on disk per sample afterwards. Peers on the
/// same data in the same minute: a C program inserting one row per sample with time-ordered keys (the
/// plain-SQLite limit), and a Python script doing what a bleak + sqlite3 script does (uuid4 keys).
enum IngestScenario {
    static func run(size: BenchSize) async throws -> BenchReport {
        let count = size.pick(full: 86_400, quick: 20_000, smoke: 1_000)  // a day of 1 Hz heart rate
        let runs = size.pick(full: 5, quick: 3, smoke: 1)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("wearhouse-bench-\(getpid())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }

        let start: Int64 = 1_743_289_200_000
        let values = (0..<count).map { 60 + Double(($0 / 7) % 50) }
        let dataFile = directory.appendingPathComponent("samples.csv")
        try (0..<count).map { "\(start + Int64($0) * 1000),\(values[$0])" }.joined(separator: "\n")
            .write(to: dataFile, atomically: true, encoding: .utf8)

        let source = Source(identifier: "org.wearhouse.gateway", version: "0.1.0")
        let device = Device(
            name: "Polar H10", manufacturer: "Polar Electro Oy", model: "H10", localIdentifier: "A0:9E:1A:00:00:01")
        var wearhouseRates: [Double] = []
        var wearhouseBytes: [Double] = []
        var normalRates: [Double] = []
        var sampleRates: [Double] = []
        // The C baseline runs next to wearhouse in every round (before it in even rounds, after it in odd ones), so
        // that both meet the same disk and the same load on the other core; the ratio is also taken round by round.
        let baseline = try Peers.compile("ingest_baseline", in: directory)
        var baselineResults: [PeerResult] = []
        var ratios: [Double] = []
        // The same two without the disk's flushes (synchronous=NORMAL): what the programs themselves cost, round by
        // round; and the disk's own cost of a durable commit, measured in the same round.
        var baselineNormal: [PeerResult] = []
        var normalRatios: [Double] = []
        var flushes: [Double] = []
        for run in 0...runs {  // run 0 warms up
            // The gateway's path: its writer hands the store streams column by column (SampleBatch).
            var stream = QuantitySeries(
                type: .heartRate, source: source, device: device, subject: "alice",
                metadata: [MetadataKey.heartRateSensorLocation: .number(1)])
            for index in 0..<count {
                stream.append(
                    start: start + Int64(index) * 1000, end: start + Int64(index) * 1000, value: values[index])
            }
            let path = directory.appendingPathComponent("wearhouse-\(run).db").path
            func runBaseline() throws -> PeerResult? {
                try baseline.map {
                    try runPeer($0.path, [dataFile.path, directory.appendingPathComponent("c-\(run).db").path])
                }
            }
            // Who goes first alternates, so that neither always meets the other's pages still being written back.
            var peer = run.isMultiple(of: 2) ? try runBaseline() : nil
            let store = try SQLiteHealthStore(path: path)
            let elapsed = try await saveInBatches(stream, into: store)
            try await store.checkpoint()
            if !run.isMultiple(of: 2) { peer = try runBaseline() }
            if run > 0 {
                wearhouseRates.append(Double(count) / seconds(elapsed))
                wearhouseBytes.append(Double(fileBytes(path)) / Double(count))
                if let peer {
                    baselineResults.append(peer)
                    ratios.append(Double(count) / seconds(elapsed) / peer.rate)
                }
            }
            // The same with synchronous=NORMAL, to show what durable commits cost, next to the C program's.
            func runNormalBaseline() throws -> PeerResult? {
                try baseline.map {
                    try runPeer(
                        $0.path, [dataFile.path, directory.appendingPathComponent("cn-\(run).db").path, "normal"])
                }
            }
            var normalPeer = run.isMultiple(of: 2) ? try runNormalBaseline() : nil
            let normal = try SQLiteHealthStore(
                path: directory.appendingPathComponent("normal-\(run).db").path, durability: .normal)
            let normalElapsed = try await saveInBatches(stream, into: normal)
            if !run.isMultiple(of: 2) { normalPeer = try runNormalBaseline() }
            let flush = try flushMilliseconds(in: directory)
            if run > 0 {
                normalRates.append(Double(count) / seconds(normalElapsed))
                flushes.append(flush)
                if let normalPeer {
                    baselineNormal.append(normalPeer)
                    normalRatios.append(Double(count) / seconds(normalElapsed) / normalPeer.rate)
                }
            }
            // An app's path: sample values, each with its id, through save([QuantitySample]).
            let samples = stream.samples
            let bySample = try SQLiteHealthStore(path: directory.appendingPathComponent("samples-\(run).db").path)
            let sampleElapsed = try await saveInBatches(samples, into: bySample)
            if run > 0 { sampleRates.append(Double(count) / seconds(sampleElapsed)) }
        }

        var rows = [
            BenchRow(subject: "wearhouse SQLite store", unit: "samples/s", runs: wearhouseRates),
            BenchRow(subject: "wearhouse, synchronous=NORMAL", unit: "samples/s", runs: normalRates),
            BenchRow(subject: "wearhouse, sample values (apps' API)", unit: "samples/s", runs: sampleRates),
        ]
        var byteRows = [BenchRow(subject: "wearhouse bytes/sample", unit: "bytes", runs: wearhouseBytes)]
        if !baselineResults.isEmpty {
            rows.append(
                BenchRow(
                    subject: "C, row per sample, time-ordered keys", unit: "samples/s",
                    runs: baselineResults.map(\.rate)))
            rows.append(
                BenchRow(
                    subject: "C, row per sample, synchronous=NORMAL", unit: "samples/s",
                    runs: baselineNormal.map(\.rate)))
            byteRows.append(
                BenchRow(subject: "C bytes/sample", unit: "bytes", runs: baselineResults.map(\.bytesPerSample)))
            byteRows.append(BenchRow(subject: "wearhouse / C, round by round", unit: "x", runs: ratios))
            byteRows.append(
                BenchRow(
                    subject: "wearhouse / C, both synchronous=NORMAL, round by round", unit: "x", runs: normalRatios))
        }
        byteRows.append(BenchRow(subject: "the disk: 40 KiB written + fdatasync", unit: "ms", runs: flushes))
        if FileManager.default.fileExists(atPath: "/usr/bin/python3") {
            let results = try (0...runs).map { run in
                try runPeer(
                    "/usr/bin/python3",
                    [
                        "Benchmarks/peers/ingest_bleak_style.py", dataFile.path,
                        directory.appendingPathComponent("py-\(run).db").path,
                    ])
            }.dropFirst()
            rows.append(
                BenchRow(subject: "python3 bleak-style, uuid4 keys", unit: "samples/s", runs: results.map(\.rate)))
            byteRows.append(
                BenchRow(subject: "python3 bytes/sample", unit: "bytes", runs: results.map(\.bytesPerSample)))
        }
        return BenchReport(
            scenario: "ingest", size: size, rows: rows + byteRows,
            notes: [
                "\(count) heart-rate samples per run, batches of 1,000, WAL + synchronous=FULL for all, fresh file per run",
                "targets: ingest >= 2x the C row-per-sample baseline; <= 8 bytes per heart-rate sample on disk",
                "bytes/sample rows: lower is better (the ratio column compares rates only within the rate rows)",
                "wearhouse / C: the C baseline runs next to wearhouse in each round (order alternating); the median of the ratios",
                "each commit waits for one fdatasync of the WAL: with the disk's row above near a batch's CPU time or more, "
                    + "both programs wait on the disk and their ratio tends to 1; the NORMAL ratio is what the code sets",
            ])
    }

    /// The disk's own cost of a durable commit: 40 KiB (about the ten pages a batch's commit writes to the WAL)
    /// appended to a file and handed to `fdatasync`, 20 times; the median, in milliseconds.
    static func flushMilliseconds(in directory: URL) throws -> Double {
        let path = directory.appendingPathComponent("flush.bin").path
        let descriptor = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0o600)
        guard descriptor >= 0 else { throw ReplayScenario.BenchError("cannot create \(path): errno \(errno)") }
        defer {
            close(descriptor)
            unlink(path)
        }
        let page = [UInt8](repeating: 0x5A, count: 40 * 1024)
        var times: [Double] = []
        let clock = ContinuousClock()
        for round in 0..<20 {
            var failed = false
            let elapsed = clock.measure {
                let written = page.withUnsafeBytes {
                    pwrite(descriptor, $0.baseAddress, $0.count, off_t(round * page.count))
                }
                failed = written != page.count || fdatasync(descriptor) != 0
            }
            if failed { throw ReplayScenario.BenchError("cannot write and sync \(path): errno \(errno)") }
            times.append(seconds(elapsed) * 1000)
        }
        return times.sorted()[times.count / 2]
    }

    /// Saves `stream` in batches of 1,000, as the gateway's writer does, and returns how long it took.
    static func saveInBatches(_ stream: QuantitySeries, into store: SQLiteHealthStore) async throws -> Duration {
        let batches = stride(from: 0, to: stream.count, by: 1_000).map { first in
            var batch = SampleBatch()
            batch.append(stream.selecting(first..<min(first + 1_000, stream.count)))
            return batch
        }
        return try await ContinuousClock().measure {
            for batch in batches { _ = try await store.save(batch, as: .owner) }
        }
    }

    /// Saves `samples` in batches of 1,000 through the sample-by-sample API, and returns how long it took.
    static func saveInBatches(_ samples: [QuantitySample], into store: SQLiteHealthStore) async throws -> Duration {
        try await ContinuousClock().measure {
            var index = 0
            while index < samples.count {
                let end = min(index + 1_000, samples.count)
                _ = try await store.save(Array(samples[index..<end]), as: .owner)
                index = end
            }
        }
    }

    struct PeerResult {
        var rate: Double
        var bytesPerSample: Double
    }

    static func runPeer(_ executable: String, _ arguments: [String]) throws -> PeerResult {
        struct Output: Decodable { var samples: Double; var seconds: Double; var bytes: Double }
        let result = try JSONDecoder().decode(Output.self, from: try Peers.run(executable, arguments))
        return PeerResult(rate: result.samples / result.seconds, bytesPerSample: result.bytes / result.samples)
    }

    static func fileBytes(_ path: String) -> Int64 {
        [path, path + "-wal"].compactMap {
            (try? FileManager.default.attributesOfItem(atPath: $0))?[.size] as? NSNumber
        }
        .reduce(0) { $0 + $1.int64Value }
    }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) * 1e-18
    }
}
