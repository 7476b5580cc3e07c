import DBus
import FakeDevices
import Foundation
import Support
import TestSupport
import Testing

/// `wearhouse scan`, `pair`, `sensors`, `forget`, `run` and `demo` through the real binary, against FakeBlueZ
/// (in this process, running in real time) on a private bus.
@Suite(.serialized, .timeLimit(.minutes(2))) struct GatewayCommandTests {
    static let scenario = FakeBlueZScenario(peripherals: [
        .init(kind: .chestStrap, address: "C0:FF:EE:00:00:01", name: "Strap", seed: 1, known: true),
        .init(
            kind: .chestStrap, address: "C0:FF:EE:00:00:02", name: "Locked strap", seed: 2,
            faults: .init(requiresPairing: true)),
        .init(kind: .footpod, address: "C0:FF:EE:00:00:03", name: "Pod", seed: 3),
        .init(kind: .stepCounter, address: "C0:FF:EE:00:00:04", name: "Counter", seed: 4, nearby: false),
    ])

    /// A private bus with FakeBlueZ in real time, and a store path in a fresh folder.
    static func withFake(
        _ scenario: FakeBlueZScenario = scenario, _ body: (String, FakeBlueZ, String) async throws -> Void
    ) async throws {
        try await withPrivateBus { bus in
            let fake = try await FakeBlueZ.start(on: .address(bus.address), scenario: scenario)
            let clock = Task { await fake.runInRealTime(interval: .milliseconds(50)) }
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("gw-cli-\(UUID().uuidString)")
            defer {
                clock.cancel()
                try? FileManager.default.removeItem(at: folder)
            }
            do {
                try await body(bus.address, fake, folder.appendingPathComponent("health.db").path)
            } catch {
                await fake.stop()
                throw error
            }
            await fake.stop()
        }
    }

    @Test func scanListsNearbyHealthSensorsOnly() async throws {
        try await Self.withFake { bus, _, _ in
            let result = try await WearhouseRunner.runOffPool(["scan", "--bus", bus, "--duration", "1", "--json"])
            #expect(result.status == 0, "\(result.stderr)")
            let found = try result.stdout.split(separator: "\n").map { try WearhouseRunner.json($0) }
            let addresses = Set(found.compactMap { $0["address"] as? String })
            #expect(addresses == ["C0:FF:EE:00:00:01", "C0:FF:EE:00:00:02", "C0:FF:EE:00:00:03"])
            let pod = found.first { $0["address"] as? String == "C0:FF:EE:00:00:03" }
            #expect((pod?["services"] as? [String])?.contains("running speed and cadence") == true)
            #expect(pod?["rssi"] != nil)
        }
    }

    /// Health devices are found and named by their services: scales, cuffs, glucose meters, trainers, treadmills.
    @Test func scanNamesTheHealthDevicesServices() async throws {
        let devices = FakeBlueZScenario(peripherals: [
            .init(kind: .bathroomScale, address: "C0:FF:EE:00:01:01", seed: 1),
            .init(kind: .bloodPressureCuff, address: "C0:FF:EE:00:01:02", seed: 2),
            .init(kind: .glucoseMeter, address: "C0:FF:EE:00:01:03", seed: 3),
            .init(kind: .bikeTrainer, address: "C0:FF:EE:00:01:04", seed: 4),
            .init(kind: .treadmill, address: "C0:FF:EE:00:01:05", seed: 5),
        ])
        try await Self.withFake(devices) { bus, _, _ in
            let result = try await WearhouseRunner.runOffPool(["scan", "--bus", bus, "--duration", "1", "--json"])
            #expect(result.status == 0, "\(result.stderr)")
            let found = try result.stdout.split(separator: "\n").map { try WearhouseRunner.json($0) }
            var services: [String: [String]] = [:]
            for device in found {
                if let address = device["address"] as? String { services[address] = device["services"] as? [String] }
            }
            #expect(services["C0:FF:EE:00:01:01"]?.contains("weight scale") == true, "\(services)")
            #expect(services["C0:FF:EE:00:01:02"]?.contains("blood pressure") == true, "\(services)")
            #expect(services["C0:FF:EE:00:01:03"]?.contains("glucose") == true, "\(services)")
            #expect(services["C0:FF:EE:00:01:04"]?.contains("cycling power") == true, "\(services)")
            #expect(services["C0:FF:EE:00:01:05"]?.contains("fitness machine") == true, "\(services)")
        }
    }

    @Test func pairRecordsTheSensorPairingOnlyWhenNeededAndForgetRemovesIt() async throws {
        try await Self.withFake { bus, fake, store in
            let plain = try await WearhouseRunner.runOffPool([
                "pair", "C0:FF:EE:00:00:01", "--bus", bus, "--store", store, "--subject", "alice", "--json",
            ])
            #expect(plain.status == 0, "\(plain.stderr)")
            let locked = try await WearhouseRunner.runOffPool([
                "pair", "Locked strap", "--bus", bus, "--store", store, "--subject", "bob", "--label", "Bob's",
                "--timeout", "5",
            ])
            #expect(locked.status == 0, "\(locked.stderr)")
            #expect(locked.stdout.contains("paired"))
            let missing = try await WearhouseRunner.runOffPool([
                "pair", "C0:FF:EE:00:00:04", "--bus", bus, "--store", store, "--timeout", "1",
            ])
            #expect(missing.status == 69)
            #expect(missing.stderr.contains("no sensor 'C0:FF:EE:00:00:04' found"))
            let badLocation = try await WearhouseRunner.runOffPool([
                "pair", "C0:FF:EE:00:00:01", "--bus", bus, "--store", store, "--location", "elbow",
            ])
            #expect(badLocation.status == 64)

            let sensors = try await WearhouseRunner.runOffPool(["sensors", "--store", store, "--json"])
            let rows = try sensors.stdout.split(separator: "\n").map { try WearhouseRunner.json($0) }
            #expect(rows.map { $0["address"] as? String } == ["C0:FF:EE:00:00:01", "C0:FF:EE:00:00:02"])
            #expect(rows.map { $0["subject"] as? String } == ["alice", "bob"])
            #expect(rows.map { $0["paired"] as? Bool } == [false, true])
            #expect(rows.allSatisfy { $0["manufacturer"] is String && $0["serial"] is String })
            #expect(rows.allSatisfy { $0["state"] as? String == "not running" })
            // Enrolment leaves the sensors disconnected and trusted; the service connects them.
            #expect(await !fake.isConnected("C0:FF:EE:00:00:02"))
            let table = try await WearhouseRunner.runOffPool(["sensors", "--store", store])
            #expect(table.stdout.contains("SUBJECT") && table.stdout.contains("bob"))

            #expect(
                try await WearhouseRunner.runOffPool(["forget", "C0:FF:EE:00:00:01", "--store", store]).status == 0)
            #expect(
                try await WearhouseRunner.runOffPool(["forget", "C0:FF:EE:00:00:01", "--store", store]).status == 66)
            let after = try await WearhouseRunner.runOffPool(["sensors", "--store", store, "--json"])
            #expect(!after.stdout.contains("C0:FF:EE:00:00:01"))
        }
    }

    /// `--confirm-passkey`: the agent registers as DisplayYesNo, so bluetoothd asks it to confirm a passkey
    /// (FakeBlueZ's 123456, as the real bluetoothd does for numeric comparison, seen in the BlueZ VM); the passkey
    /// is printed and accepted, and the sensor is paired even though it would serve without.
    @Test func pairConfirmingAPasskeyPrintsItAndPairs() async throws {
        try await Self.withFake { bus, fake, store in
            let result = try await WearhouseRunner.runOffPool([
                "pair", "C0:FF:EE:00:00:01", "--confirm-passkey", "--bus", bus, "--store", store, "--json",
            ])
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stderr.contains("passkey 123456: check that the sensor shows the same"), "\(result.stderr)")
            let sensor = try WearhouseRunner.json(result.stdout.split(separator: "\n").first ?? "")
            #expect(sensor["paired"] as? Bool == true)
            #expect(await fake.isPaired("C0:FF:EE:00:00:01"))
        }
    }

    /// SIGTERM in the middle of a stream: everything the sensor notified before is in the store.
    @Test func runStoresEverythingNotifiedBeforeSIGTERM() async throws {
        try await Self.withFake { bus, fake, store in
            let pair = try await WearhouseRunner.runOffPool([
                "pair", "C0:FF:EE:00:00:01", "--bus", bus, "--store", store,
            ])
            #expect(pair.status == 0, "\(pair.stderr)")
            let errors = WearhouseRunner.ErrorLog()
            let process = try WearhouseRunner.start(
                ["run", "--config", "/dev/null", "--bus", bus, "--store", store, "--set", "service.status-interval=1"],
                errors: errors.stream)
            defer { WearhouseRunner.kill(process, errors: errors) }
            let streaming = try await eventually(timeout: .seconds(10)) {
                let status = try await WearhouseRunner.runOffPool(["sensors", "--store", store, "--json"])
                return status.stdout.contains("\"state\":\"streaming\"")
            }
            #expect(streaming)
            try await Task.sleep(for: .seconds(3))
            // What the fake delivered before the signal must all be stored; what it delivers while the service
            // stops (longer on a loaded machine) may be, but nothing twice.
            let sentBefore = await fake.deliveredNotifications(of: "C0:FF:EE:00:00:01").count
            process.signal(SIGTERM)
            let log = try await WearhouseRunner.exit(of: process, errors: errors).stderr
            #expect(process.wait().status == 0, "\(log)")
            #expect(log.contains("stopping (SIGTERM)"))
            let sent = await fake.deliveredNotifications(of: "C0:FF:EE:00:00:01").count
            let samples = try await WearhouseRunner.runOffPool([
                "samples", "--store", store, "--type", "heartRate", "--format", "json",
            ])
            let stored = samples.stdout.split(separator: "\n").count
            #expect(sentBefore >= 3)
            #expect(
                stored >= sentBefore && stored <= sent,
                "stored \(stored), sent \(sentBefore) before SIGTERM, \(sent) in all")
            #expect(await !fake.isConnected("C0:FF:EE:00:00:01"))
        }
    }

    /// SIGTERM while a Connect hangs in bluetoothd: the stop cancels it (Disconnect, docs/bluez.md R7) instead of
    /// leaving it pending, releases the streaming sensor, and stores everything it notified.
    @Test func sigtermWhileAConnectIsInFlightLeavesEverySensorDisconnectedAndLosesNothing() async throws {
        try await Self.withFake { bus, fake, store in
            for address in ["C0:FF:EE:00:00:01", "C0:FF:EE:00:00:03"] {
                let pair = try await WearhouseRunner.runOffPool(["pair", address, "--bus", bus, "--store", store])
                #expect(pair.status == 0, "\(pair.stderr)")
            }
            await fake.setConnectFault(.noReply, for: "C0:FF:EE:00:00:03")
            let errors = WearhouseRunner.ErrorLog()
            let process = try WearhouseRunner.start(
                [
                    "run", "--config", "/dev/null", "--bus", bus, "--store", store, "--set",
                    "service.status-interval=1,bluetooth.connect-timeout=20",
                ], errors: errors.stream)
            defer { WearhouseRunner.kill(process, errors: errors) }
            // The strap streams (it may have waited for the pod's Connect to time out: one Connect per adapter).
            let ready = try await eventually(timeout: .seconds(30)) {
                let strap = await fake.deliveredNotifications(of: "C0:FF:EE:00:00:01").count
                let connecting = await fake.isConnecting("C0:FF:EE:00:00:03")
                return strap >= 3 && connecting
            }
            #expect(ready)
            let signalled = ContinuousClock.now
            process.signal(SIGTERM)
            let log = try await WearhouseRunner.exit(of: process, errors: errors).stderr
            #expect(process.wait().status == 0, "\(log)")
            #expect(ContinuousClock.now - signalled < .seconds(10), "the stop waited for the Connect")
            #expect(await !fake.isConnecting("C0:FF:EE:00:00:03"))
            #expect(await !fake.isConnected("C0:FF:EE:00:00:03"))
            #expect(await !fake.isConnected("C0:FF:EE:00:00:01"))
            let sent = await fake.deliveredNotifications(of: "C0:FF:EE:00:00:01").count
            let samples = try await WearhouseRunner.runOffPool([
                "samples", "--store", store, "--type", "heartRate", "--format", "json",
            ])
            #expect(samples.stdout.split(separator: "\n").count == sent)
        }
    }

    /// SIGHUP re-reads the file given with --config (not the default path): the new log level is in force.
    @Test func sighupReloadsTheConfigurationGivenWithConfig() async throws {
        try await Self.withFake { bus, _, store in
            let config = URL(fileURLWithPath: store).deletingLastPathComponent().appendingPathComponent("gw.conf")
            try FileManager.default.createDirectory(
                at: config.deletingLastPathComponent(), withIntermediateDirectories: true)
            try "[service]\nlog-level = notice\n".write(to: config, atomically: true, encoding: .utf8)
            let logFile = config.deletingLastPathComponent().appendingPathComponent("run.log")
            _ = FileManager.default.createFile(atPath: logFile.path, contents: nil)
            let process = try WearhouseRunner.start(
                ["run", "--config", config.path, "--bus", bus, "--store", store],
                errors: .file(logFile.path, append: true))
            defer { WearhouseRunner.kill(process) }
            func log() -> String { (try? String(contentsOf: logFile, encoding: .utf8)) ?? "" }
            func waitFor(_ text: String) async throws -> Bool {
                try await eventually(timeout: .seconds(10)) { log().contains(text) }
            }
            #expect(try await waitFor("started with 0 sensor(s)"), "\(log())")
            try "[service]\nlog-level = debug\n".write(to: config, atomically: true, encoding: .utf8)
            process.signal(SIGHUP)
            #expect(try await waitFor("reloaded \(config.path) (log level debug)"), "\(log())")
            process.signal(SIGTERM)
            try await WearhouseRunner.exit(of: process)
            #expect(process.wait().status == 0, "\(log())")
            #expect(log().contains("stopping (SIGTERM)"))
        }
    }

    @Test func demoChecksWhatItStored() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("demo-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let result = try await WearhouseRunner.runOffPool(["demo", "--duration", "4", "--dir", folder.path])
        #expect(result.status == 0, "\(result.stdout)\n\(result.stderr)")
        #expect(result.stdout.contains("Check: every stored number matches what the simulated sensors sent."))
        #expect(result.stdout.contains("alice:") && result.stdout.contains("bob:"))
    }
}
