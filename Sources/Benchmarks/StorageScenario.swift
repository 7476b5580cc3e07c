import Foundation
import Health
import SQLiteStore
import Support

/// `storage`: bytes on disk for a day of 1 Hz heart rate (86,400 samples) with its RR intervals (one heartbeat
/// series a minute, 60-90 beats each), written as the gateway writes live data: one batch a minute. Two stores
/// per run, heart rate alone and heart rate with the series, so the beats' cost is the difference. `--quick`:
/// two hours.
enum StorageScenario {
    static func run(size: BenchSize) async throws -> BenchReport {
        let minutes = size.pick(full: 1_440, quick: 120, smoke: 10)
        let runs = size.pick(full: 5, quick: 3, smoke: 1)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("wearhouse-storage-\(getpid())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer {
            if ProcessInfo.processInfo.environment["KEEP"] == nil { try? FileManager.default.removeItem(at: directory) }
        }

        var heartRateOnly: [Double] = []
        var withSeries: [Double] = []
        var perBeat: [Double] = []
        var beatCounts: [Int] = []
        for run in 0..<runs {  // sizes do not need a warm-up; each run draws another day
            let day = Day(minutes: minutes, seed: UInt64(run + 1))
            beatCounts.append(day.series.reduce(0) { $0 + $1.beats.count })
            let alone = directory.appendingPathComponent("hr-\(run).db").path
            let both = directory.appendingPathComponent("hr-rr-\(run).db").path
            try await write(day, to: alone, series: false)
            try await write(day, to: both, series: true)
            let aloneBytes = Double(IngestScenario.fileBytes(alone))
            let bothBytes = Double(IngestScenario.fileBytes(both))
            heartRateOnly.append(aloneBytes / Double(day.heartRate.count))
            withSeries.append(bothBytes / Double(day.heartRate.count))
            perBeat.append((bothBytes - aloneBytes) / Double(beatCounts[run]))
        }
        let beats = beatCounts.sorted()[beatCounts.count / 2]
        return BenchReport(
            scenario: "storage", size: size,
            rows: [
                BenchRow(subject: "heart rate alone, per heart-rate sample", unit: "bytes", runs: heartRateOnly),
                BenchRow(subject: "heart rate + RR series, per heart-rate sample", unit: "bytes", runs: withSeries),
                BenchRow(subject: "RR series, per beat", unit: "bytes", runs: perBeat),
            ],
            notes: [
                "\(minutes * 60) heart-rate samples (1 Hz) and \(minutes) heartbeat series of about \(beats / minutes) "
                    + "beats (\(beats) beats) per run, one batch a minute, database + WAL after a checkpoint",
                "RR intervals in 1/1024 s as BLE sends them, a gap of lost beats every 20 minutes",
                "per beat: the difference between the two stores over the number of beats",
                "per beat on disk: the beats' blob (about 1.1 bytes a beat) plus the series' row and index entry",
                "target: <= 2 bytes per beat in the blob; lower is better (the ratio column is relative to the first row)",
            ])
    }

    /// Writes the day a minute at a time (60 heart-rate samples, then that minute's series), then checkpoints.
    static func write(_ day: Day, to path: String, series: Bool) async throws {
        // Sizes do not depend on durability; NORMAL keeps the 1,440 commits quick.
        let store = try SQLiteHealthStore(path: path, durability: .normal)
        for minute in 0..<day.minutes {
            _ = try await store.save(Array(day.heartRate[minute * 60..<(minute + 1) * 60]), as: .owner)
            if series, let minuteSeries = day.seriesByMinute[minute] {
                _ = try await store.save([minuteSeries], as: .owner)
            }
        }
        try await store.checkpoint()
    }

    /// A generated day: a slowly wandering heart rate with breathing in it, beats on the sensor's 1/1024 s clock,
    /// and the heart rate the strap reports each second (60,000 / the last RR interval, whole beats a minute).
    struct Day {
        var minutes: Int
        var heartRate: [QuantitySample] = []
        var series: [HeartbeatSeriesSample] = []
        var seriesByMinute: [Int: HeartbeatSeriesSample] = [:]

        init(minutes: Int, seed: UInt64) {
            self.minutes = minutes
            var random = SplitMix64(seed: seed)
            let start: Int64 = 1_743_289_200_000  // a midnight
            let source = Source(identifier: "org.wearhouse.gateway", version: "0.1.0")
            let device = Device(
                name: "Polar H10", manufacturer: "Polar Electro Oy", model: "H10", localIdentifier: "A0:9E:1A:00:00:01")
            let tick = 1_000.0 / 1_024
            var ticks: Int64 = 0  // time of the last beat since the start, in 1/1024 s
            var lastRR = 1_000.0
            var gapPending = false
            var beatsByMinute: [[Beat]] = Array(repeating: [], count: minutes)
            var rrBySecond = [Double](repeating: 0, count: minutes * 60)
            while true {
                let seconds = Double(ticks) / 1_024
                let baseline = 60_000 / (68 + 14 * sin(seconds / 5_400) + 6 * sin(seconds / 700))
                let breathing = 35 * sin(seconds * 2 * .pi / 4.2)
                let rr = Int64(((baseline + breathing) / tick + Double(random.next() % 17) - 8).rounded())
                ticks += rr
                if random.next() % 1_300 == 0 {  // about every 20 minutes: contact lost for a few beats
                    ticks += rr * Int64(3 + random.next() % 8)
                    gapPending = true
                }
                let beatMilliseconds = Double(ticks) * tick
                let minute = Int(beatMilliseconds / 60_000)
                guard minute < minutes else { break }
                let offset = beatMilliseconds - Double(minute) * 60_000  // exact: whole ms and 1/1024 s
                beatsByMinute[minute].append(
                    Beat(offsetMilliseconds: offset, rrMilliseconds: Double(rr) * tick, precededByGap: gapPending))
                gapPending = false
                lastRR = Double(rr) * tick
                let second = Int(beatMilliseconds / 1_000)
                if second < rrBySecond.count { rrBySecond[second] = lastRR }
            }
            var previous = 1_000.0
            for second in 0..<(minutes * 60) {
                if rrBySecond[second] > 0 { previous = rrBySecond[second] }
                let at = Instant(milliseconds: start + Int64(second) * 1_000)
                heartRate.append(
                    QuantitySample(
                        type: .heartRate, start: at, end: at, value: (60_000 / previous).rounded(), source: source,
                        device: device, subject: "alice", metadata: [MetadataKey.heartRateSensorLocation: .number(1)]))
            }
            for (minute, beats) in beatsByMinute.enumerated() where !beats.isEmpty {
                let begin = start + Int64(minute) * 60_000
                let sample = HeartbeatSeriesSample(
                    start: Instant(milliseconds: begin), end: Instant(milliseconds: begin + 60_000), beats: beats,
                    source: source, device: device, subject: "alice",
                    metadata: [MetadataKey.heartRateSensorLocation: .number(1)])
                series.append(sample)
                seriesByMinute[minute] = sample
            }
        }
    }

}
