import FakeDevices
import GATT
import Testing

/// The simulated scale and cuff on their own: what they store, when they send, when they hang up.
@Suite struct HealthDeviceFakeTests {
    static func scale() -> BathroomScale {
        BathroomScale(script: PeripheralScript(kind: .bathroomScale, address: "C0:FF:EE:00:00:51", seed: 9))
    }

    @Test func theScaleStoresReadingsUntilSomeoneListensAndThenSendsThemWithTheirOwnTimes() throws {
        var scale = Self.scale()
        #expect(scale.advance(to: .seconds(25)).isEmpty)  // readings at 0.1, 10.1 and 20.1 s: nobody listening
        #expect(scale.readings.count == 3)
        scale.linkChanged(connected: true, at: .seconds(30))
        scale.subscribed(to: .weightMeasurement, at: .seconds(30))
        let sent = scale.advance(to: .seconds(31))
        #expect(sent.count == 4)  // the three stored, then the one taken at 30.1 s
        #expect(sent.allSatisfy { $0.isIndication && $0.characteristic == .weightMeasurement })
        let decoded = try sent.map { try WeightMeasurement(decoding: $0.value) }
        #expect(decoded == scale.readings)
        #expect(decoded.map(\.userID) == [1, 2, 1, 2])
        #expect(
            decoded.map { $0.timeStamp?.description } == [
                "2026-11-29T10:00:00", "2026-11-29T10:00:10", "2026-11-29T10:00:20", "2026-11-29T10:00:30",
            ])
        #expect(decoded.allSatisfy { ($0.kilograms ?? 0) > 60 && ($0.kilograms ?? 0) < 90 })
    }

    @Test func afterAReconnectTheScaleRepeatsItsLastReadingOnly() throws {
        var scale = Self.scale()
        scale.linkChanged(connected: true, at: .zero)
        scale.subscribed(to: .weightMeasurement, at: .zero)
        let first = scale.advance(to: .seconds(15))
        #expect(first.count == 2)
        scale.linkChanged(connected: false, at: .seconds(16))
        #expect(scale.advance(to: .seconds(21)).isEmpty)  // 20.1 s: stored
        scale.linkChanged(connected: true, at: .seconds(22))
        #expect(scale.advance(to: .seconds(23)).isEmpty)  // not listening yet
        scale.subscribed(to: .weightMeasurement, at: .seconds(23))
        let again = scale.advance(to: .seconds(24))
        #expect(again.map(\.value) == [first[1].value, scale.readings[2].encoded()])
    }

    @Test func theCuffMeasuresOnceThenHangsUp() throws {
        var cuff = BloodPressureCuff(
            script: PeripheralScript(kind: .bloodPressureCuff, address: "C0:FF:EE:00:00:52", seed: 4))
        #expect(cuff.advance(to: .seconds(10)).isEmpty)
        cuff.linkChanged(connected: true, at: .seconds(10))
        cuff.subscribed(to: .bloodPressureMeasurement, at: .seconds(10))
        let sent = cuff.advance(to: .seconds(20))
        #expect(
            sent.map(\.characteristic) == Array(repeating: .intermediateCuffPressure, count: 5) + [
                .bloodPressureMeasurement
            ])
        #expect(
            try sent.prefix(5).map { try IntermediateCuffPressure(decoding: $0.value).cuffPressure.value } == [
                160, 140, 120, 100, 80,
            ])
        let result = try BloodPressureMeasurement(decoding: try #require(sent.last).value)
        #expect(result == cuff.measurements.first)
        #expect(result.timeStamp?.description == "2026-11-29T10:00:16")
        #expect(sent.last?.isIndication == true)
        #expect(cuff.wantsToDisconnect)
        cuff.linkChanged(connected: false, at: .seconds(20))
        cuff.linkChanged(connected: true, at: .seconds(30))
        cuff.subscribed(to: .bloodPressureMeasurement, at: .seconds(30))
        #expect(cuff.advance(to: .seconds(60)).isEmpty)  // one measurement per script
    }
}
