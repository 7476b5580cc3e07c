import FakeDevices
import GATT
import Testing

/// Same seed, same bytes; every peripheral fault shows.
@Suite struct DeterminismAndFaultTests {
    static func script(_ kind: PeripheralScript.Kind, seed: UInt64 = 42, faults: PeripheralFaults = .none)
        -> PeripheralScript
    {
        PeripheralScript(kind: kind, address: "AA:BB:CC:00:00:01", seed: seed, faults: faults)
    }

    static func run(_ script: PeripheralScript, to end: Duration, step: Duration? = nil) -> [PeripheralEmission] {
        var peripheral = script.makePeripheral()
        // Connected and listening from the start (health devices send only then; the others ignore it).
        peripheral.linkChanged(connected: true, at: .zero)
        for characteristic in peripheral.services.flatMap(\.characteristics)
        where !characteristic.properties.isDisjoint(with: [.notify, .indicate]) {
            peripheral.subscribed(to: characteristic.uuid, at: .zero)
        }
        // A glucose meter sends its records only when asked through its control point.
        if peripheral.services.flatMap(\.characteristics).contains(where: { $0.uuid == .recordAccessControlPoint }) {
            try? peripheral.write(RecordAccessControlPoint.reportAllRecords.encoded(), to: .recordAccessControlPoint)
        }
        var out: [PeripheralEmission] = []
        if let step {
            var time = Duration.zero
            while time < end {
                time = min(end, time + step)
                out += peripheral.advance(to: time)
            }
        } else {
            out = peripheral.advance(to: end)
        }
        #expect(out == peripheral.groundTruth.emissions)
        return out
    }

    @Test(arguments: PeripheralScript.Kind.allCases)
    func sameSeedSameBytesHoweverTheClockIsDriven(kind: PeripheralScript.Kind) {
        let once = Self.run(Self.script(kind), to: .seconds(120))
        let stepped = Self.run(Self.script(kind), to: .seconds(120), step: .milliseconds(730))
        #expect(!once.isEmpty)
        #expect(once == stepped)
        #expect(once != Self.run(Self.script(kind, seed: 43), to: .seconds(120)))
    }

    @Test func malformedEveryNthValueFailsToDecode() {
        let faults = PeripheralFaults(malformedEvery: 5)
        var strap = Self.script(.chestStrap, faults: faults).makePeripheral()
        let out = strap.advance(to: .seconds(50)).filter { $0.characteristic == .heartRateMeasurement }
        let failures = out.enumerated().filter { (try? HeartRateMeasurement(decoding: $0.element.value)) == nil }
        #expect(failures.map(\.offset) == Array(stride(from: 4, to: 50, by: 5)))
        #expect(strap.groundTruth.malformed.count == 10)
        #expect(strap.groundTruth.malformed.allSatisfy { (try? HeartRateMeasurement(decoding: $0.value)) != nil })
    }

    @Test func duplicatesAreIdenticalAndBackToBack() {
        var pod = Self.script(.footpod, faults: PeripheralFaults(duplicateEvery: 3)).makePeripheral()
        let out = pod.advance(to: .seconds(30))
        #expect(out.count == 40)
        #expect(pod.groundTruth.duplicates == 10)
        for index in stride(from: 2, to: 40, by: 4) { #expect(out[index] == out[index + 1]) }
    }

    @Test func pairingRequiredBeforeReads() throws {
        var strap = Self.script(.chestStrap, faults: PeripheralFaults(requiresPairing: true)).makePeripheral()
        #expect(strap.requiresPairing)
        #expect(throws: ATTError.insufficientAuthentication) { try strap.read(.bodySensorLocation) }
        #expect(throws: ATTError.insufficientAuthentication) { try strap.write([1], to: .heartRateControlPoint) }
        strap.setPaired(true)
        #expect(try strap.read(.bodySensorLocation) == [1])
    }

    @Test func firmwareUpdateChangesServicesAndRevision() throws {
        let faults = PeripheralFaults(firmwareUpdateAt: .seconds(30), updatedFirmwareRevision: "9.9.9")
        var strap = Self.script(.chestStrap, faults: faults).makePeripheral()
        let before = strap.services
        #expect(try FirmwareRevisionString(decoding: strap.read(.firmwareRevisionString)).value == "1.4.2")
        _ = strap.advance(to: .seconds(29))
        #expect(strap.services == before)
        _ = strap.advance(to: .seconds(30))
        #expect(strap.services != before)
        #expect(Set(strap.services.map(\.uuid)) == Set(before.map(\.uuid)))
        #expect(try FirmwareRevisionString(decoding: strap.read(.firmwareRevisionString)).value == "9.9.9")
    }

    @Test func silentAfterSendsAndMeasuresNothingMore() {
        var strap = Self.script(.chestStrap, faults: PeripheralFaults(silentAfter: .seconds(20))).makePeripheral()
        let out = strap.advance(to: .seconds(60))
        #expect(out.count == 20)
        #expect(out.allSatisfy { $0.at <= .seconds(20) })
        #expect(strap.advance(to: .seconds(120)).isEmpty)
        #expect(strap.groundTruth.heartRates.count == 20)
    }
}
