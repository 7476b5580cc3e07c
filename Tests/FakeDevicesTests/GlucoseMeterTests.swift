import FakeDevices
import GATT
import Testing

/// The simulated glucose meter on its own: its records, its control point, a transfer cut by the link.
@Suite struct GlucoseMeterTests {
    static func meter(held: Int = GlucoseMeter.recordCount, seed: UInt64 = 3) -> GlucoseMeter {
        GlucoseMeter(
            script: PeripheralScript(
                kind: .glucoseMeter, address: "C0:FF:EE:00:00:61", seed: seed, summaryInterval: .seconds(1),
                measurementCount: held))
    }

    /// Connected, with every notification and the control point's indications enabled.
    static func listening(_ meter: inout GlucoseMeter) {
        meter.linkChanged(connected: true, at: .zero)
        for uuid in [BluetoothUUID.glucoseMeasurement, .glucoseMeasurementContext, .recordAccessControlPoint] {
            meter.subscribed(to: uuid, at: .zero)
        }
    }

    @Test func fiveHundredDeterministicRecordsSomeWithContexts() throws {
        let meter = Self.meter()
        #expect(meter.records == Self.meter().records)
        #expect(meter.records != Self.meter(seed: 4).records)
        #expect(meter.records.map(\.sequence) == Array(1...500))
        #expect(meter.records.filter { $0.context != nil }.count == 166)
        #expect(meter.records.allSatisfy { $0.measurement.contextFollows == ($0.context != nil) })
        #expect(meter.records.allSatisfy { (70...180).contains($0.milligramsPerDeciliter) })
        #expect(meter.records.allSatisfy { $0.measurement.milligramsPerDeciliter == $0.milligramsPerDeciliter })
        let times = meter.records.compactMap(\.measurement.userFacingTime)
        #expect(times.count == 500)
        #expect(Set(times.map(\.description)).count == 500, "every record has its own time")
        #expect(meter.requiresPairing)
    }

    @Test func recordsComeInOverTime() {
        let meter = Self.meter(held: 100)
        #expect(meter.held(at: .zero).count == 100)
        #expect(meter.held(at: .seconds(10)).count == 110)
        #expect(meter.held(at: .seconds(1_000)).count == 500)
    }

    @Test func reportAllSendsEveryRecordThenSuccess() throws {
        var meter = Self.meter()
        Self.listening(&meter)
        try meter.write(RecordAccessControlPoint.reportAllRecords.encoded(), to: .recordAccessControlPoint)
        let sent = meter.advance(to: .seconds(6))
        let measurements = try sent.filter { $0.characteristic == .glucoseMeasurement }
            .map { try GlucoseMeasurement(decoding: $0.value) }
        #expect(measurements == meter.records.map(\.measurement))
        let contexts = try sent.filter { $0.characteristic == .glucoseMeasurementContext }
            .map { try GlucoseMeasurementContext(decoding: $0.value) }
        #expect(contexts == meter.records.compactMap(\.context))
        // Each context right after its measurement.
        for (index, emission) in sent.enumerated() where emission.characteristic == .glucoseMeasurementContext {
            let context = try GlucoseMeasurementContext(decoding: emission.value)
            let before = try GlucoseMeasurement(decoding: sent[index - 1].value)
            #expect(before.sequenceNumber == context.sequenceNumber)
        }
        let last = try #require(sent.last)
        #expect(last.isIndication && last.characteristic == .recordAccessControlPoint)
        #expect(try RecordAccessControlPoint(decoding: last.value) == .response(to: .reportStoredRecords, .success))
        #expect(meter.transfers.map(\.sent) == [500])
        #expect(meter.transfers.first?.response == .success)
    }

    @Test func fromASequenceNumberAndNumberOfRecords() throws {
        var meter = Self.meter()
        Self.listening(&meter)
        try meter.write(RecordAccessControlPoint.reportNumberOfAllRecords.encoded(), to: .recordAccessControlPoint)
        let count = try meter.advance(to: .seconds(1)).map { try RecordAccessControlPoint(decoding: $0.value) }
        #expect(count == [RecordAccessControlPoint(.numberOfStoredRecordsResponse, .null, .numberOfRecords(500))])
        try meter.write(RecordAccessControlPoint.reportRecords(from: 451).encoded(), to: .recordAccessControlPoint)
        let sent = try meter.advance(to: .seconds(3)).filter { $0.characteristic == .glucoseMeasurement }
            .map { try GlucoseMeasurement(decoding: $0.value).sequenceNumber }
        #expect(sent == Array(451...500))
        try meter.write(RecordAccessControlPoint.reportRecords(from: 501).encoded(), to: .recordAccessControlPoint)
        let none = try meter.advance(to: .seconds(4)).map { try RecordAccessControlPoint(decoding: $0.value) }
        #expect(none == [.response(to: .reportStoredRecords, .noRecordsFound)])
    }

    @Test func busyAbortAndUnconfiguredControlPoint() throws {
        var meter = Self.meter()
        meter.linkChanged(connected: true, at: .zero)
        #expect(throws: GlucoseMeter.cccdImproperlyConfigured) {
            try meter.write(RecordAccessControlPoint.reportAllRecords.encoded(), to: .recordAccessControlPoint)
        }
        Self.listening(&meter)
        try meter.write(RecordAccessControlPoint.reportAllRecords.encoded(), to: .recordAccessControlPoint)
        _ = meter.advance(to: .milliseconds(505))
        #expect(throws: GlucoseMeter.procedureAlreadyInProgress) {
            try meter.write(RecordAccessControlPoint.reportAllRecords.encoded(), to: .recordAccessControlPoint)
        }
        try meter.write(RecordAccessControlPoint.abort.encoded(), to: .recordAccessControlPoint)
        let answer = try meter.advance(to: .seconds(2)).map { try RecordAccessControlPoint(decoding: $0.value) }
        #expect(answer == [.response(to: .abortOperation, .success)])
        #expect(meter.transfers.first?.sent == 50)
        #expect(meter.transfers.first?.response == .procedureNotCompleted)
        try meter.write(RecordAccessControlPoint.reportRecords(from: 51).encoded(), to: .recordAccessControlPoint)
        #expect(meter.transfers.count == 2)
    }

    @Test func aLostLinkAbandonsTheTransfer() throws {
        var meter = Self.meter()
        Self.listening(&meter)
        try meter.write(RecordAccessControlPoint.reportAllRecords.encoded(), to: .recordAccessControlPoint)
        _ = meter.advance(to: .milliseconds(1_005))
        meter.linkChanged(connected: false, at: .milliseconds(1_005))
        #expect(meter.advance(to: .seconds(10)).isEmpty)
        #expect(meter.transfers.first?.sent == 100)
        #expect(meter.transfers.first?.response == nil)
        // Indications are off again until the next session enables them.
        meter.linkChanged(connected: true, at: .seconds(11))
        #expect(throws: GlucoseMeter.cccdImproperlyConfigured) {
            try meter.write(RecordAccessControlPoint.reportAllRecords.encoded(), to: .recordAccessControlPoint)
        }
    }
}
