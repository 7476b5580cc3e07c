import DBus
import FakeDevices
import Foundation
import GATT
import Health
import SQLiteStore
import Support

/// `service`: the real `wearhouse run` (release build, its own process) with N simulated chest straps notifying
/// at 4 Hz through FakeBlueZ on a private dbus-daemon, for a minute. Measures the service process only: peak
/// resident memory (VmHWM), CPU time per notification (utime + stime from /proc), the notification-to-durable
/// latency the service's writer records (from the notification's arrival in the service to the commit of its
/// batch), and loss (notifications FakeBlueZ delivered against heart-rate samples stored).
enum ServiceScenario {
    static func run(size: BenchSize) async throws -> BenchReport {
        let sensors = size.pick(full: 20, quick: 4, smoke: 2)
        let seconds = size.pick(full: 60, quick: 8, smoke: 3)
        let executable = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
            .appendingPathComponent("wearhouse")
        guard FileManager.default.isExecutableFile(atPath: executable.path) else {
            throw BenchError("build the wearhouse product first (\(executable.path) is missing)")
        }
        let daemon = try await PrivateDBusDaemon.start()
        defer { daemon.stop() }
        let addresses = (1...sensors).map { String(format: "C0:FF:EE:00:01:%02X", $0) }
        let scenario = FakeBlueZScenario(
            peripherals: addresses.enumerated().map { index, address in
                .init(
                    kind: .chestStrap, address: address, seed: UInt64(index + 1), known: true, measurementInterval: 0.25
                )
            })
        let fake = try await FakeBlueZ.start(on: .address(daemon.address), scenario: scenario)
        return try await fake.inRealTime(interval: .milliseconds(20)) {
            try await measure(
                fake: fake, daemon: daemon, addresses: addresses, sensors: sensors, seconds: seconds,
                executable: executable, size: size)
        }
    }

    /// The run and its figures, while the simulation follows the wall clock.
    private static func measure(
        fake: FakeBlueZ, daemon: PrivateDBusDaemon, addresses: [String], sensors: Int, seconds: Int, executable: URL,
        size: BenchSize
    ) async throws -> BenchReport {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("bench-service-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let storePath = folder.appendingPathComponent("health.db").path
        let store = try SQLiteHealthStore(path: storePath)
        for address in addresses {
            try await store.register(RegisteredSensor(address: address, subject: "bench", enrolledAt: Instant.now))
        }

        // Its log goes to a file, read after it ends (a pipe nobody reads while it runs could fill and stop it).
        let logPath = folder.appendingPathComponent("service.log").path
        let process = try ChildProcess.start(
            executable.path,
            [
                "run", "--config", "/dev/null", "--bus", daemon.address, "--store", storePath, "--set",
                "service.status-interval=1",
            ], output: .inherited, errors: .file(logPath, append: false))
        defer {
            process.signal(SIGKILL)  // nothing once it has ended and been reaped below
            process.wait()
        }
        let pid = process.pid

        // Wait until every sensor streams, then measure a steady window.
        let deadline = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < deadline {
            let streaming = try await store.sensorStatuses().filter { $0.state == "streaming" }.count
            if streaming == sensors { break }
            try await Task.sleep(for: .milliseconds(200))
        }
        let deliveredBefore = await delivered(fake, addresses)
        let cpuBefore = cpuSeconds(pid)
        let started = ContinuousClock.now
        try await Task.sleep(for: .seconds(seconds))
        let elapsed = ContinuousClock.now - started
        let cpuAfter = cpuSeconds(pid)
        let deliveredAfter = await delivered(fake, addresses)
        let peakKilobytes = statusValue(pid, "VmHWM") ?? 0
        process.signal(SIGTERM)
        _ = await process.exit()  // off the pool: the service's last calls are answered by this process's FakeBlueZ
        let log = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
        let (p50, p99) = latencies(in: log)

        let window = deliveredAfter - deliveredBefore
        let windowSeconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
        var stored = 0
        var cursor: SampleCursor?
        repeat {
            let page = try await store.samples(SampleQuery(type: .heartRate, limit: 10_000, cursor: cursor), as: .owner)
            stored += page.samples.count
            cursor = page.next
        } while cursor != nil
        let sent = await delivered(fake, addresses)
        let rows = [
            BenchRow(subject: "notifications handled", unit: "notifications/s", runs: [Double(window) / windowSeconds]),
            BenchRow(subject: "peak resident memory", unit: "MB", runs: [Double(peakKilobytes) / 1024]),
            BenchRow(
                subject: "CPU per notification", unit: "µs",
                runs: [(cpuAfter - cpuBefore) / Double(max(window, 1)) * 1e6]),
            BenchRow(subject: "latency to durable p50", unit: "ms", runs: [p50 ?? .nan]),
            BenchRow(subject: "latency to durable p99", unit: "ms", runs: [p99 ?? .nan]),
            BenchRow(subject: "notifications lost", unit: "count", runs: [Double(sent - stored)]),
        ]
        return BenchReport(
            scenario: "service", size: size, rows: rows,
            notes: [
                "\(sensors) chest straps at 4 Hz through FakeBlueZ on a private dbus-daemon, \(seconds) s window; "
                    + "the service is the release `wearhouse run` in its own process (FakeBlueZ runs in this one)",
                "targets: under 30 MB resident, p99 under 1 s, no loss (sent \(sent), stored \(stored))",
                "the ratio column is meaningless here: each row is its own measure",
            ])
    }

    static func delivered(_ fake: FakeBlueZ, _ addresses: [String]) async -> Int {
        var total = 0
        for address in addresses {
            total += await fake.deliveredNotifications(of: address).count { $0.characteristic == .heartRateMeasurement }
        }
        return total
    }

    /// utime + stime of `pid`, seconds.
    static func cpuSeconds(_ pid: Int32) -> Double {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return 0 }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        // After the command: state is field 3, utime 14, stime 15 (1-based in proc(5)).
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return 0 }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// A `kB` value from /proc/pid/status.
    static func statusValue(_ pid: Int32, _ key: String) -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
        let line = status.split(separator: "\n").first { $0.hasPrefix(key + ":") }
        return line?.split(separator: " ").dropFirst().first.flatMap { Int($0) }
    }

    /// The p50 and p99 the service logs at exit.
    static func latencies(in log: String) -> (Double?, Double?) {
        guard let line = log.split(separator: "\n").last(where: { $0.contains("notification-to-durable latency") })
        else { return (nil, nil) }
        let words = line.split(separator: " ")
        func after(_ word: String) -> Double? {
            words.firstIndex(of: Substring(word)).flatMap { index in
                index + 1 < words.count ? Double(words[index + 1]) : nil
            }
        }
        return (after("p50"), after("p99"))
    }
}

struct BenchError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
