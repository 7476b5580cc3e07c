import DBus
import FakeDevices
import Foundation
import GATT
import Gateway
import Health
import SQLiteStore
import Support

/// `wearhouse demo`: the whole gateway against simulated sensors, with nothing faked above bluetoothd: a private
/// dbus-daemon, FakeBlueZ with two chest straps, a wrist monitor and a footpod worn by two people, a bathroom
/// scale they share, a blood pressure cuff, a thermometer and a pulse oximeter, the real
/// `wearhouse pair` for each (one strap needs pairing, two sensors are found by discovery), the real `wearhouse
/// run` for a while, stopped with SIGTERM; then what the store holds, checked against what the sensors sent.
struct DemoCommand: Command {
    /// How the "Try:" lines name this program: `wearhouse` when the PATH finds this very binary, else its absolute
    /// path (after `make demo`, the build's binary is not on the PATH).
    static var program: String {
        let own = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().path
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        for folder in path.split(separator: ":") {
            let candidate = URL(fileURLWithPath: String(folder) + "/wearhouse")
            guard FileManager.default.isExecutableFile(atPath: candidate.path) else { continue }
            return candidate.resolvingSymlinksInPath().path == own ? "wearhouse" : own
        }
        return own
    }

    let name = "demo"
    let abstract = "Run the gateway against simulated sensors on a private bus and show what it stored."

    struct Options: CommandOptions {
        var duration: Duration = .seconds(20)
        var dir: String?
    }

    let syntax = CommandSyntax<Options>(options: [
        .seconds("duration", in: 1...3600, \.duration, help: "How long the service runs."),
        .text(
            "dir", value: "folder", \.dir, kind: .path,
            help: "Where to put the store and the config (default: a new folder under /tmp)."),
    ])

    struct Wearer {
        var address: String
        var subject: String
        var location: String?
        var label: String
    }

    /// The health devices' clocks: local wall time now (the service reads their time stamps in the system's zone).
    static let deviceClock = Int64(Date().timeIntervalSince1970) + Int64(TimeZone.current.secondsFromGMT())

    static let scale = "C0:FF:EE:00:00:05"
    static let cuff = "C0:FF:EE:00:00:06"
    static let thermometer = "C0:FF:EE:00:00:07"
    static let oximeter = "C0:FF:EE:00:00:08"

    static let scenario = FakeBlueZScenario(
        adapterName: "demo",
        peripherals: [
            .init(
                kind: .chestStrap, address: "C0:FF:EE:00:00:01", name: "HRM-Pro A", seed: 11, known: true, paired: true),
            .init(
                kind: .chestStrap, address: "C0:FF:EE:00:00:02", name: "HRM-Pro B", seed: 12,
                faults: .init(requiresPairing: true)),
            .init(kind: .wristMonitor, address: "C0:FF:EE:00:00:03", name: "Verity", seed: 13),
            .init(kind: .footpod, address: "C0:FF:EE:00:00:04", name: "Stride", seed: 14),
            .init(
                kind: .bathroomScale, address: scale, name: "Scale", seed: 15, summaryInterval: 5,
                clockStart: deviceClock),
            .init(kind: .bloodPressureCuff, address: cuff, name: "Cuff", seed: 16, clockStart: deviceClock),
            .init(
                kind: .thermometer, address: thermometer, name: "Thermo", seed: 17, summaryInterval: 5,
                clockStart: deviceClock),
            .init(
                kind: .pulseOximeter, address: oximeter, name: "Oximeter", seed: 18, summaryInterval: 10,
                clockStart: deviceClock),
        ])

    static let wearers = [
        Wearer(address: "C0:FF:EE:00:00:01", subject: "alice", location: nil, label: "Alice's strap"),
        Wearer(address: "C0:FF:EE:00:00:02", subject: "bob", location: nil, label: "Bob's strap"),
        Wearer(address: "C0:FF:EE:00:00:03", subject: "bob", location: "wrist", label: "Bob's watch"),
        Wearer(address: "C0:FF:EE:00:00:04", subject: "alice", location: "in-shoe", label: "Alice's footpod"),
        Wearer(address: scale, subject: "1=alice,2=bob", location: nil, label: "Family scale"),
        Wearer(address: cuff, subject: "alice", location: nil, label: "Alice's cuff"),
        Wearer(address: thermometer, subject: "bob", location: nil, label: "Bob's thermometer"),
        Wearer(address: oximeter, subject: "alice", location: nil, label: "Alice's oximeter"),
    ]

    func run(_ options: Options, console: Console) async -> ExitCode {
        let duration = options.duration
        let folder: String
        if let dir = options.dir {
            folder = dir
        } else {
            var template = Array("/tmp/wearhouse-demo.XXXXXX".utf8CString)
            guard let made = mkdtemp(&template) else {
                console.error("cannot create a folder under /tmp")
                return .ioError
            }
            folder = String(cString: made)
        }
        try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let storePath = folder + "/health.db"
        let configPath = folder + "/wearhouse.conf"
        let say = { (text: String) in console.out("\n\u{1B}[1m\(text)\u{1B}[0m\n") }

        say("1. A private D-Bus and a fake bluetoothd with eight simulated sensors")
        let daemon: PrivateDBusDaemon
        do {
            daemon = try await PrivateDBusDaemon.start()
        } catch {
            console.error("cannot start dbus-daemon: \(error)", hint: "Install it with 'apt-get install dbus-daemon'.")
            return .unavailable
        }
        defer { daemon.stop() }
        let fake: FakeBlueZ
        do {
            fake = try await FakeBlueZ.start(on: .address(daemon.address), scenario: Self.scenario)
        } catch {
            console.error("cannot start FakeBlueZ: \(error)")
            return .unavailable
        }
        return await fake.inRealTime(interval: .milliseconds(50)) {
            await demo(
                console: console, fake: fake, daemon: daemon, duration: duration, folder: folder,
                storePath: storePath, configPath: configPath, say: say)
        }
    }

    /// The demo from its sensor list on, while the simulation follows the wall clock.
    private func demo(
        console: Console, fake: FakeBlueZ, daemon: PrivateDBusDaemon, duration: Duration,
        folder: String, storePath: String, configPath: String, say: (String) -> Void
    ) async -> ExitCode {
        console.out("bus \(daemon.address)\n")
        for peripheral in Self.scenario.peripherals {
            let state = peripheral.paired == true ? "paired before" : "advertising"
            console.out("  \(peripheral.address)  \(peripheral.kind.rawValue.padding(to: 14))\(state)\n")
        }
        let config = """
            # wearhouse demo configuration (every key: Systemd/wearhouse.conf.example)
            [store]
            url = \(storePath)
            [bluetooth]
            bus = \(daemon.address)
            watchdog = 5
            [service]
            status-interval = 2

            """
        do {
            try config.write(toFile: configPath, atomically: true, encoding: .utf8)
        } catch {
            console.error("cannot write \(configPath): \(error)")
            return .ioError
        }

        say("2. Enrolling the sensors with 'wearhouse pair'")
        for wearer in Self.wearers {
            var pairArguments = [
                "pair", wearer.address, "--bus", daemon.address, "--store", storePath, "--subject", wearer.subject,
                "--label", wearer.label, "--timeout", "10",
            ]
            if let location = wearer.location { pairArguments += ["--location", location] }
            console.out("$ wearhouse \(pairArguments.map(Self.quoted).joined(separator: " "))\n")
            guard let status = await runChild(pairArguments, console: console), status == 0 else {
                console.error("enrolling \(wearer.address) failed")
                return .software
            }
        }

        say("3. 'wearhouse run' for \(duration), then SIGTERM")
        console.out("$ wearhouse run --config \(configPath) --api <the private bus>\n")
        // The apps' API is served on the same private bus (org.wearhouse.Health1), as it would be on the system bus.
        let runArguments = ["run", "--config", configPath, "--api", daemon.address]
        guard let service = startChild(runArguments, console: console) else { return .software }
        try? await Task.sleep(for: duration)
        service.signal(SIGTERM)
        let exit = await service.exit()
        guard exit.succeeded else {
            console.error("the service ended with \(exit)")
            return .software
        }

        say("4. What the store holds")
        do {
            let store = try SQLiteHealthStore(path: storePath)
            let problems = try await summarize(store: store, fake: fake, console: console)
            let program = Self.program
            console.out(
                """

                The store is \(storePath). Try:
                  \(program) sensors --store \(storePath)
                  \(program) samples --store \(storePath) --type heartRate --subject alice --limit 5
                  \(program) stats --store \(storePath) --type heartRate --interval 5m --statistic min,avg,max
                  \(program) export --store \(storePath) --format fhir --type heartRate --out hr.fhir.ndjson

                """)
            guard problems.isEmpty else {
                for problem in problems { console.error(problem) }
                return .software
            }
            console.out("Check: every stored number matches what the simulated sensors sent.\n")
            return .success
        } catch {
            console.error("cannot read the store: \(error)")
            return .ioError
        }
    }

    /// Prints per sensor and wearer what was stored, and returns where it differs from what was sent.
    private func summarize(store: SQLiteHealthStore, fake: FakeBlueZ, console: Console) async throws -> [String] {
        var problems: [String] = []
        let statuses = Dictionary(try await store.sensorStatuses().map { ($0.address, $0) }, uniquingKeysWith: { $1 })
        for subject in ["alice", "bob", "1=alice,2=bob"] {
            console.out(subject.contains("=") ? "shared (user 1 alice, user 2 bob):\n" : "\(subject):\n")
            for wearer in Self.wearers where wearer.subject == subject {
                let sent = await fake.deliveredNotifications(of: wearer.address)
                var lines: [String] = []
                func samples(_ type: HealthType) async throws -> [QuantitySample] {
                    var all: [QuantitySample] = []
                    var cursor: SampleCursor?
                    repeat {
                        let page = try await store.samples(
                            SampleQuery(type: type, devices: [wearer.address], limit: 5000, cursor: cursor), as: .owner)
                        all += page.samples
                        cursor = page.next
                    } while cursor != nil
                    return all
                }
                let rates = try await samples(.heartRate)
                let measurements = sent.filter { $0.characteristic == .heartRateMeasurement }.compactMap {
                    try? HeartRateMeasurement(decoding: $0.value)
                }
                if !measurements.isEmpty {
                    let expected = measurements.filter { $0.heartRate > 0 && $0.sensorContact != .notDetected }
                        .map { Double($0.heartRate) }
                    let values = rates.map(\.value)
                    lines.append(
                        "heart rate \(values.count) samples, min/avg/max \(Self.triple(values)) bpm"
                            + " (sent \(expected.count), \(Self.triple(expected)))")
                    if values.count != expected.count || Self.triple(values) != Self.triple(expected) {
                        problems.append("\(wearer.address): stored heart rates differ from what was sent")
                    }
                    let beatsSent = measurements.reduce(0) { $0 + $1.rrIntervals.count }
                    if beatsSent > 0 {
                        let series = try await store.heartbeatSeries(
                            SampleQuery(type: .heartbeatSeries, devices: [wearer.address]), as: .owner
                        ).series
                        let beats = series.reduce(0) { $0 + $1.beats.count }
                        let hrv = try await samples(.heartRateVariabilitySDNN)
                        lines.append(
                            "beats \(beats) in \(series.count) heartbeat series (sent \(beatsSent)), "
                                + "\(hrv.count) HRV values")
                        if beats != beatsSent { problems.append("\(wearer.address): stored beats differ from sent") }
                    }
                    let energy = try await samples(.activeEnergyBurned).reduce(0) { $0 + $1.value }
                    if energy > 0 { lines.append(String(format: "active energy %.1f kcal", energy)) }
                }
                let rsc = sent.filter { $0.characteristic == .rscMeasurement }.compactMap {
                    try? RSCMeasurement(decoding: $0.value)
                }
                if !rsc.isEmpty {
                    let distance = try await samples(.distanceWalkingRunning).reduce(0) { $0 + $1.value }
                    let first = rsc.first?.totalDistance ?? 0
                    let last = rsc.last?.totalDistance ?? 0
                    let expected = Double(last &- first) / 10
                    let steps = try await samples(.stepCount).reduce(0) { $0 + $1.value }
                    let speeds = try await samples(.runningSpeed)
                    lines.append(
                        String(
                            format: "distance %.1f m (sent %.1f m), steps %.0f (estimated from cadence), "
                                + "%d speed samples (sent %d)", distance, expected, steps, speeds.count, rsc.count))
                    if abs(distance - expected) > 0.001 || speeds.count != rsc.count {
                        problems.append("\(wearer.address): stored distance or speeds differ from what was sent")
                    }
                }
                problems += try await healthDeviceLines(wearer, sent: sent, store: store, into: &lines)
                let state = statuses[wearer.address].map { "\($0.state), \($0.reconnects) reconnects" } ?? "-"
                console.out("  \(wearer.label) \(wearer.address) [\(state)]\n")
                for line in lines { console.out("    \(line)\n") }
            }
        }
        return problems
    }

    /// The scale's weights, the cuff's blood pressures, the thermometer's temperatures and the oximeter's
    /// saturations: each distinct reading sent is stored once, on its user's subject; returns where that does not
    /// hold.
    private func healthDeviceLines(
        _ wearer: Wearer, sent: [PeripheralEmission], store: SQLiteHealthStore, into lines: inout [String]
    ) async throws -> [String] {
        var problems: [String] = []
        var distinct: [[UInt8]] = []
        for emission in sent where emission.characteristic == .weightMeasurement && !distinct.contains(emission.value) {
            distinct.append(emission.value)
        }
        let weights = distinct.compactMap { try? WeightMeasurement(decoding: $0) }
        if !weights.isEmpty {
            let stored = try await store.samples(
                SampleQuery(type: .bodyMass, devices: [wearer.address], limit: 5000), as: .owner
            ).samples
            let byUser = weights.map { ($0.userID == 1 ? "alice" : "bob", $0.kilograms ?? 0) }
            lines.append(
                "weights "
                    + stored.map { "\($0.subject ?? "-") " + String(format: "%.2f kg", $0.value) }.joined(
                        separator: ", ") + " (sent \(weights.count), the last one again after each reconnect)")
            let expected = byUser.sorted { ($0.0, $0.1) < ($1.0, $1.1) }
            let got = stored.map { ($0.subject ?? "-", $0.value) }.sorted { ($0.0, $0.1) < ($1.0, $1.1) }
            if expected.map({ $0.0 }) != got.map({ $0.0 })
                || zip(expected, got).contains(where: { abs($0.1 - $1.1) > 1e-9 })
            {
                problems.append("\(wearer.address): stored weights differ from what the scale sent")
            }
        }
        let results = sent.filter { $0.characteristic == .bloodPressureMeasurement }.compactMap {
            try? BloodPressureMeasurement(decoding: $0.value)
        }
        let intermediates = sent.filter { $0.characteristic == .intermediateCuffPressure }.count
        if !results.isEmpty || intermediates > 0 {
            let stored = try await store.correlations(
                SampleQuery(type: .bloodPressure, devices: [wearer.address]), as: .owner
            ).correlations
            let pressures = stored.map { correlation in
                let systolic = correlation.objects(for: .bloodPressureSystolic).first?.value ?? 0
                let diastolic = correlation.objects(for: .bloodPressureDiastolic).first?.value ?? 0
                return String(format: "%.0f/%.0f mmHg", systolic, diastolic)
            }
            lines.append(
                "blood pressure \(pressures.isEmpty ? "none yet" : pressures.joined(separator: ", "))"
                    + " (sent \(results.count) result(s) after \(intermediates) cuff pressures, which are not stored)")
            let expected = results.map { [$0.systolic.value ?? 0, $0.diastolic.value ?? 0] }
            let got = stored.map {
                [
                    $0.objects(for: .bloodPressureSystolic).first?.value ?? 0,
                    $0.objects(for: .bloodPressureDiastolic).first?.value ?? 0,
                ]
            }
            if expected != got {
                problems.append("\(wearer.address): stored blood pressures differ from what was sent")
            }
        }
        problems += try await readings(
            wearer, store: store, type: .bodyTemperature, name: "temperatures", unit: "°C", scale: 1,
            sent: sent.filter { $0.characteristic == .temperatureMeasurement }.compactMap {
                try? TemperatureMeasurement(decoding: $0.value).celsius
            }, into: &lines)
        // Continuous values and spot-checks (half a second apart, so never at one instant); the oximeter sends
        // only validated data.
        var saturations: [Double] = []
        for emission in sent {
            if emission.characteristic == .plxContinuousMeasurement,
                let percent = (try? PLXContinuousMeasurement(decoding: emission.value))?.normal.spo2.value
            {
                saturations.append(percent)
            } else if emission.characteristic == .plxSpotCheckMeasurement,
                let percent = (try? PLXSpotCheckMeasurement(decoding: emission.value))?.spo2.value
            {
                saturations.append(percent)
            }
        }
        problems += try await readings(
            wearer, store: store, type: .oxygenSaturation, name: "SpO2", unit: "%", scale: 100,
            sent: saturations.filter { $0 > 0 }, into: &lines)
        return problems
    }

    /// One line of a single-value device's readings (`sent`, in the unit shown; the store keeps them divided by
    /// `scale`) and, when the stored ones are not exactly those, a problem.
    private func readings(
        _ wearer: Wearer, store: SQLiteHealthStore, type: HealthType, name: String, unit: String, scale: Double,
        sent: [Double], into lines: inout [String]
    ) async throws -> [String] {
        guard !sent.isEmpty else { return [] }
        let stored = try await store.samples(
            SampleQuery(type: type, devices: [wearer.address], limit: 5000), as: .owner
        ).samples.map { $0.value * scale }
        lines.append(
            "\(name) \(stored.count) samples, min/avg/max \(Self.triple(stored, decimals: 1)) \(unit)"
                + " (sent \(sent.count), \(Self.triple(sent, decimals: 1)))")
        let same =
            stored.count == sent.count
            && zip(stored.sorted(), sent.sorted()).allSatisfy { abs($0 - $1) <= 1e-9 * max(1, abs($1)) }
        return same ? [] : ["\(wearer.address): stored \(name) differ from what was sent"]
    }

    /// `text`, single-quoted for a shell when it needs to be.
    static func quoted(_ text: String) -> String {
        text.allSatisfy { $0.isLetter || $0.isNumber || "-_.:/=,".contains($0) } ? text : "'\(text)'"
    }

    static func triple(_ values: [Double], decimals: Int = 0) -> String {
        guard let low = values.min(), let high = values.max() else { return "-" }
        let average = values.reduce(0, +) / Double(values.count)
        return String(format: "%.\(decimals)f/%.\(decimals + 1)f/%.\(decimals)f", low, average, high)
    }

    /// This executable, for the child processes.
    private var executable: URL {
        URL(
            fileURLWithPath: (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
                ?? CommandLine.arguments[0])
    }

    /// Starts this executable with `arguments`, its output on ours (a `ChildProcess`: it inherits no descriptor
    /// of this process but the standard three).
    private func startChild(_ arguments: [String], console: Console) -> ChildProcess? {
        var environment = ProcessInfo.processInfo.environment
        environment.removeValue(forKey: "NOTIFY_SOCKET")
        environment.removeValue(forKey: "WEARHOUSE_STORE")
        do {
            return try ChildProcess.start(
                executable.path, arguments, environment: environment, output: .inherited, errors: .inherited)
        } catch {
            console.error("cannot start \(executable.path): \(error)")
            return nil
        }
    }

    /// Runs this executable with `arguments` to its end, waiting off the concurrency pool: the child's calls are
    /// answered by this process's FakeBlueZ.
    private func runChild(_ arguments: [String], console: Console) async -> Int32? {
        guard let child = startChild(arguments, console: console) else { return nil }
        return await child.exit().status
    }
}
