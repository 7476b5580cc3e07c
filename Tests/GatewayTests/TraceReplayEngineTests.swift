import Foundation
import GATT
import Health
import Testing
import Traces

@testable import Gateway

/// The replay engine finds each value's sensor by its address: the first sensors through their addresses' bytes
/// (``AddressKeys``), the rest through a dictionary; every value must reach its own sensor's builder either way.
@Suite struct TraceReplayEngineTests {
    @Test func everyValueReachesItsOwnSensorWhateverTheNumberOfSensors() {
        // More sensors than the byte keys hold, addresses that differ only in their last byte or only in length
        // (a trailing NUL), and addresses too long to be a key.
        var addresses = (0..<AddressKeys.capacity + 8).map {
            String(format: "C0:FF:EE:00:%02X:%02X", $0 / 256, $0 % 256)
        }
        addresses += [
            "AB", "AB\u{0}", "A-SENSOR-ADDRESS-LONGER-THAN-24-BYTES-1", "A-SENSOR-ADDRESS-LONGER-THAN-24-BYTES-2",
        ]
        var engine = TraceReplayEngine(settings: .init(source: Source(identifier: "wearhouse", version: "test")))
        var batch = SampleBatch()
        // Three rounds, each sensor's heart rate its own index (the round apart by a second).
        for round in 0..<3 {
            for (index, address) in addresses.enumerated() {
                let at = Timestamp(
                    monotonic: .seconds(round * 10 + 1) + .milliseconds(index),
                    wallMicroseconds: 1_795_946_400_000_000 + Int64(round * 10 + 1) * 1_000_000 + Int64(index) * 1000)
                engine.handle(
                    .value(
                        TraceValue(
                            kind: .notification, address: address, characteristic: .heartRateMeasurement,
                            bytes: [0, UInt8(40 + index)], at: at)),
                    into: &batch)
            }
        }
        let samples = batch.samples.filter { $0.type == .heartRate }
        #expect(samples.count == 3 * addresses.count)
        for (index, address) in addresses.enumerated() {
            let own = samples.filter { $0.device?.localIdentifier == address.uppercased() }
            #expect(own.count == 3 && own.allSatisfy { $0.value == Double(40 + index) }, "\(address)")
        }
    }

    /// A sensor's last arrivals are kept for at most ``LastArrivals/capacity`` characteristics: the one added longest
    /// ago makes room, the others stay where they are.
    @Test func lastArrivalsAreBounded() {
        var arrivals = LastArrivals()
        let characteristics = (0..<LastArrivals.capacity + 1).map { BluetoothUUID(high: UInt64($0), low: 7) }
        for (index, characteristic) in characteristics.enumerated() {
            #expect(arrivals.slot(of: characteristic) == nil)
            arrivals.set(characteristic, at: Instant(milliseconds: Int64(index)), value: [UInt8(index)], in: nil)
        }
        #expect(arrivals.entries.count == LastArrivals.capacity)
        #expect(arrivals.slot(of: characteristics[0]) == nil)
        #expect(arrivals.slot(of: characteristics[LastArrivals.capacity]) == 0)
        let second = arrivals.slot(of: characteristics[1])
        #expect(second == 1)
        arrivals.set(characteristics[1], at: Instant(milliseconds: 99), value: [9], in: second)
        #expect(arrivals.entries[1].at == Instant(milliseconds: 99) && arrivals.entries[1].value == [9])
    }
}
