import FakeDevices
import Foundation
import GATT
import Support
import TestSupport
import Testing

/// Every kind of health device through the real binary: `wearhouse pair` enrols each (bonding the glucose meter),
/// `wearhouse run` streams from all seven at once against FakeBlueZ in real time, and what `wearhouse samples`
/// then lists is what the fakes delivered: each weight once, at its real time (the scale's clock, a day slow, is
/// corrected and set), the cuff's result, every glucose record, every temperature result, every oximeter value,
/// the trainer's power and the treadmill's distance.
@Suite(.serialized, .timeLimit(.minutes(3))) struct HealthDeviceCommandTests {
    static let scale = "C0:FF:EE:00:02:01"
    static let cuff = "C0:FF:EE:00:02:02"
    static let meter = "C0:FF:EE:00:02:03"
    static let thermometer = "C0:FF:EE:00:02:04"
    static let oximeter = "C0:FF:EE:00:02:05"
    static let trainer = "C0:FF:EE:00:02:06"
    static let treadmill = "C0:FF:EE:00:02:07"
    static let all = [scale, cuff, meter, thermometer, oximeter, trainer, treadmill]

    /// The devices' clocks start at the real wall time (the binary runs on it), the scale's a day behind.
    static func scenario(now: Int64) -> FakeBlueZScenario {
        FakeBlueZScenario(peripherals: [
            .init(kind: .bathroomScale, address: scale, seed: 1, summaryInterval: 2, clockStart: now - 86_400),
            .init(kind: .bloodPressureCuff, address: cuff, seed: 2, clockStart: now),
            .init(
                kind: .glucoseMeter, address: meter, seed: 3, summaryInterval: 3_600, measurementCount: 30,
                clockStart: now),
            .init(kind: .thermometer, address: thermometer, seed: 4, summaryInterval: 2, clockStart: now),
            .init(kind: .pulseOximeter, address: oximeter, seed: 5, summaryInterval: 3, clockStart: now),
            .init(kind: .bikeTrainer, address: trainer, seed: 6, clockStart: now),
            .init(kind: .treadmill, address: treadmill, seed: 7, clockStart: now),
        ])
    }

    /// What `wearhouse samples` lists of `type`, oldest first.
    static func samples(_ type: String, store: String) throws -> [[String: Any]] {
        let result = try WearhouseRunner.run(["samples", "--store", store, "--type", type, "--format", "json"])
        #expect(result.status == 0, "\(result.stderr)")
        return try result.stdout.split(separator: "\n").map { try WearhouseRunner.json($0) }
            .sorted { ($0["start"] as? String ?? "") < ($1["start"] as? String ?? "") }
    }

    /// `values` with each run of equal values given once.
    static func runs(_ values: [Double]) -> [Double] {
        var runs: [Double] = []
        for value in values where runs.last != value { runs.append(value) }
        return runs
    }

    static func values(_ type: String, store: String) throws -> [Double] {
        try samples(type, store: store).compactMap { $0["value"] as? Double }
    }

    static func delivered(_ fake: FakeBlueZ, _ address: String, _ characteristic: BluetoothUUID) async
        -> [[UInt8]]
    {
        await fake.deliveredNotifications(of: address).filter { $0.characteristic == characteristic }.map(\.value)
    }

    @Test func everyHealthDevicePairsThroughTheBinaryAndWhatIsStoredIsWhatItSent() async throws {
        let now = Int64(Date().timeIntervalSince1970)
        try await GatewayCommandTests.withFake(Self.scenario(now: now)) { bus, fake, store in
            for (address, subject) in zip(Self.all, ["1=alice,2=bob", "carol", "dana", "erin", "frank", "gus", "hal"]) {
                let pair = try await WearhouseRunner.runOffPool([
                    "pair", address, "--bus", bus, "--store", store, "--subject", subject, "--timeout", "10",
                ])
                #expect(pair.status == 0, "\(address): \(pair.stderr)")
            }
            #expect(await fake.isPaired(Self.meter))
            let errors = WearhouseRunner.ErrorLog()
            let process = try WearhouseRunner.start(
                ["run", "--config", "/dev/null", "--bus", bus, "--store", store, "--set", "service.status-interval=1"],
                errors: errors.stream)
            defer { WearhouseRunner.kill(process, errors: errors) }
            // Until every device delivered enough; then they all go away (out of range, link lost), so that what
            // they delivered is final before the service stops.
            let enough = try await eventually(timeout: .seconds(60)) {
                let counts = [
                    await Self.delivered(fake, Self.scale, .weightMeasurement).count >= 5,
                    await Self.delivered(fake, Self.cuff, .bloodPressureMeasurement).count >= 1,
                    await Self.delivered(fake, Self.meter, .glucoseMeasurement).count >= 30,
                    await Self.delivered(fake, Self.thermometer, .temperatureMeasurement).count >= 3,
                    await Self.delivered(fake, Self.oximeter, .plxSpotCheckMeasurement).count >= 2,
                    await Self.delivered(fake, Self.trainer, .cyclingPowerMeasurement).count >= 5,
                    await Self.delivered(fake, Self.treadmill, .treadmillData).count >= 5,
                ]
                return !counts.contains(false)
            }
            #expect(enough)
            for address in Self.all {
                await fake.setNearby(false, for: address)
                await fake.dropConnection(of: address)
            }
            // SIGTERM: the service stores everything delivered before it stops.
            process.signal(SIGTERM)
            let log = try await WearhouseRunner.exit(of: process, errors: errors).stderr
            #expect(process.wait().status == 0, "\(log)")
            #expect(log.contains("s behind; set it, and corrected the stamps taken before"), "\(log)")
            try await Self.check(fake, store: store, now: now)
        }
    }

    static func check(_ fake: FakeBlueZ, store: String, now: Int64) async throws {
        // The scale: each distinct reading once (it repeats its last one after a reconnect), at its real time.
        var readings: [[UInt8]] = []
        for value in await delivered(fake, scale, .weightMeasurement) where !readings.contains(value) {
            readings.append(value)
        }
        // (No closures inside the macros' arguments: see Tests/Package/closure_audit.py.)
        var sent: [Double] = []
        // Readings stamped by the unset clock (a day slow): taken before the gateway set it, each stored corrected.
        // How many there are depends on when the binary got to the clock, which a loaded machine moves.
        var slow = 0
        var utc = Calendar(identifier: .gregorian)
        utc.timeZone = TimeZone(identifier: "UTC") ?? .current
        for reading in readings {
            let measurement = try WeightMeasurement(decoding: reading)
            sent.append(measurement.kilograms ?? -1)
            guard let stamp = measurement.timeStamp else { continue }
            let components = DateComponents(
                year: Int(stamp.year), month: Int(stamp.month), day: Int(stamp.day), hour: Int(stamp.hours),
                minute: Int(stamp.minutes), second: Int(stamp.seconds))
            if let date = utc.date(from: components), date.timeIntervalSince1970 < Double(now - 3_600) { slow += 1 }
        }
        let weights = try samples("bodyMass", store: store)
        let earliest = ISO8601DateFormatter().string(from: Date(timeIntervalSince1970: Double(now - 5)))
        var stored: [Double] = []
        var early = 0
        var corrected = 0
        for weight in weights {
            stored.append(weight["value"] as? Double ?? -1)
            if weight["start"] as? String ?? "" < earliest { early += 1 }
            if (weight["metadata"] as? [String: Any])?["deviceClockOffset"] != nil { corrected += 1 }
        }
        #expect(stored == sent)
        #expect(early == 0, "\(weights)")
        #expect(corrected == slow, "\(weights)")
        let fakeScale = try #require(await fake.peripheral(at: scale) as? BathroomScale)
        #expect(fakeScale.clockSettings.count == 1)

        // The cuff: its result as systolic and diastolic.
        let results = try await delivered(fake, cuff, .bloodPressureMeasurement).map {
            try BloodPressureMeasurement(decoding: $0)
        }
        #expect(try values("bloodPressureSystolic", store: store) == results.compactMap(\.systolic.value))
        #expect(try values("bloodPressureDiastolic", store: store) == results.compactMap(\.diastolic.value))

        // The glucose meter: its 30 records, each once.
        let records = try await delivered(fake, meter, .glucoseMeasurement).map { try GlucoseMeasurement(decoding: $0) }
        let glucose = try samples("bloodGlucose", store: store)
        #expect(glucose.count == 30)
        let sequences = glucose.compactMap { ($0["metadata"] as? [String: Any])?["glucoseSequenceNumber"] as? Int }
        #expect(Set(sequences) == Set(records.map { Int($0.sequenceNumber) }))

        // The thermometer: every result.
        let temperatures = try await delivered(fake, thermometer, .temperatureMeasurement).map {
            try TemperatureMeasurement(decoding: $0)
        }
        #expect(try values("bodyTemperature", store: store) == temperatures.compactMap(\.celsius))

        // The oximeter: every continuous and spot-check saturation. A continuous reading the same, byte for byte,
        // as the one before it may be missing: held up (a loaded machine) and delivered in the same millisecond, it
        // is taken for a repeat of that notification (SampleBuilder.instant(of:_:receivedAt:)).
        var saturations: [Double] = []
        let continuous = await delivered(fake, oximeter, .plxContinuousMeasurement)
        var repeats: [Double] = []
        for (index, value) in continuous.enumerated() {
            guard let percent = try PLXContinuousMeasurement(decoding: value).normal.spo2.value else { continue }
            saturations.append(percent / 100)
            if index > 0, continuous[index - 1] == value { repeats.append(percent / 100) }
        }
        for value in await delivered(fake, oximeter, .plxSpotCheckMeasurement) {
            if let percent = try PLXSpotCheckMeasurement(decoding: value).spo2.value {
                saturations.append(percent / 100)
            }
        }
        let storedSaturations = try samples("oxygenSaturation", store: store)
        let storedAt = storedSaturations.map { "\($0["start"] ?? "?") \($0["value"] ?? "?")" }
        var missing = saturations
        var unsent: [Double] = []
        for value in storedSaturations.compactMap({ $0["value"] as? Double }) {
            if let index = missing.firstIndex(of: value) { missing.remove(at: index) } else { unsent.append(value) }
        }
        for value in repeats {
            if let index = missing.firstIndex(of: value) { missing.remove(at: index) }
        }
        #expect(unsent.isEmpty && missing.isEmpty, "missing \(missing), not sent \(unsent); stored: \(storedAt)")

        // The trainer's power, and the treadmill's distance as increases of its total.
        let power = try await delivered(fake, trainer, .cyclingPowerMeasurement).map {
            Double(try CyclingPowerMeasurement(decoding: $0).instantaneousPower)
        }
        let watts = try values("cyclingPower", store: store)
        // The same power twice in a row may reach the gateway within one millisecond when the fake catches up on a
        // loaded machine: it is then stored once, as a repeat (docs/bluez.md, R11).
        #expect(Self.runs(watts) == Self.runs(power), "stored \(watts), sent \(power)")
        #expect(watts.count <= power.count)
        let totals = try await delivered(fake, treadmill, .treadmillData).compactMap {
            try TreadmillData(decoding: $0).totalDistance
        }
        let increase = zip(totals, totals.dropFirst()).reduce(UInt32(0)) { $0 + ($1.1 >= $1.0 ? $1.1 - $1.0 : $1.1) }
        #expect(try values("distanceWalkingRunning", store: store).reduce(0, +) == Double(increase))
    }
}
