import GATT
import Gateway
import Health
import Testing
import Traces

@Suite struct BtsnoopImporterTests {
    static let strap = "A0:9E:1A:12:34:56"
    static let adapter = "00:1A:7D:DA:71:13"
    static let rates: [UInt8] = [61, 62, 64, 67, 71, 76, 80, 83, 85, 86]

    /// A strap session: connection, discovery, Device Information (a long model string), heart rate with RR
    /// intervals in fragmented ACL, disconnection.
    static func strapSession(_ datalink: Btsnoop.Datalink, discover: Bool = true, fragment: Int = 5) -> CaptureBuilder {
        var capture = CaptureBuilder(datalink)
        if datalink == .linuxMonitor { capture.newIndex(address: adapter) }
        capture.command(0x1009)
        capture.event(0x0E, [0x01] + le16(0x1009) + [0x00] + CaptureBuilder.address(adapter))
        capture.connect(handle: 0x0040, address: strap, enhanced: datalink == .linuxMonitor)
        capture.att(handle: 0x0040, incoming: false, [0x02, 0xF7, 0x00])  // MTU exchange
        capture.att(handle: 0x0040, incoming: true, [0x03, 0x17, 0x00])
        if discover {
            capture.discoverCharacteristics(
                handle: 0x0040,
                [
                    (0x0010, .heartRateMeasurement), (0x0013, .bodySensorLocation), (0x0020, .manufacturerNameString),
                    (0x0022, .modelNumberString), (0x0030, .infiniTimeStepCount),
                ])
        }
        capture.read(handle: 0x0040, attribute: 0x0020, Array("Polar Electro Oy".utf8))
        capture.longRead(
            handle: 0x0040, attribute: 0x0022, Array("H10 with a model string longer than one ATT PDU".utf8))
        capture.read(handle: 0x0040, attribute: 0x0013, [0x01])
        capture.att(handle: 0x0040, incoming: false, [0x12, 0x11, 0x00, 0x01, 0x00])  // enable notifications
        capture.att(handle: 0x0040, incoming: true, [0x13])
        for (number, rate) in rates.enumerated() {
            capture.advance(milliseconds: 1000)
            let rr = UInt16(60_000 * 1024 / Int(rate) / 1000)
            capture.notify(
                handle: 0x0040, attribute: 0x0010, [0x16, rate] + le16(rr) + le16(rr), fragment: fragment)
            if number == 4 {
                capture.notify(handle: 0x0040, attribute: 0x0030, [UInt8(number), 0, 0, 0])
            }
        }
        capture.advance(milliseconds: 500)
        capture.disconnect(handle: 0x0040)
        return capture
    }

    static func heartRates(_ records: [TraceRecord]) -> [Double] {
        var engine = TraceReplayEngine(settings: .init(source: Source(identifier: "wearhouse", version: "t")))
        var rates: [QuantitySample] = []
        for record in records { rates += engine.handle(record).samples.filter { $0.type == .heartRate } }
        return rates.map(\.value)
    }

    @Test(arguments: Btsnoop.Datalink.allCases) func aStrapSessionIsImportedFromEveryDatalink(
        _ datalink: Btsnoop.Datalink
    ) throws {
        let capture = Self.strapSession(datalink)
        let result = try BtsnoopImporter.importCapture(capture.bytes)
        let report = result.report
        #expect(report.records == capture.records)
        #expect(report.isComplete)
        #expect(report.count(.unknown) == 0 && report.count(.damaged) == 0)
        #expect(report.notifications == Self.rates.count + 1)
        #expect(report.reads == 3)
        #expect(report.connectionEvents == 2)
        #expect(report.devices == [Self.strap])
        #expect(report.handles[Self.strap]?[0x0030] == .infiniTimeStepCount)

        guard case .sensor(let sensor)? = result.records.dropFirst().first else {
            Issue.record("no sensor line")
            return
        }
        #expect(sensor.address == Self.strap)
        #expect(sensor.adapter == Self.adapter)
        #expect(sensor.manufacturer == "Polar Electro Oy")
        #expect(sensor.model == "H10 with a model string longer than one ATT PDU")
        #expect(sensor.bodySensorLocation == 1)
        #expect(sensor.characteristics == [.heartRateMeasurement, .infiniTimeStepCount])
        #expect(Self.heartRates(result.records) == Self.rates.map(Double.init))
        // The values keep the capture's times: a second apart.
        let times = result.records.compactMap { record -> Int64? in
            guard case .value(let value) = record, value.characteristic == .heartRateMeasurement else { return nil }
            return value.at.wallMicroseconds
        }
        #expect(zip(times, times.dropFirst()).allSatisfy { $1 - $0 == 1_000_000 })
    }

    @Test func withoutDiscoveryTheMapNamesTheHandles() throws {
        let capture = Self.strapSession(.hciUART, discover: false)
        let unmapped = try BtsnoopImporter.importCapture(capture.bytes)
        #expect(unmapped.report.notifications == 0)
        #expect(unmapped.report.unmappedHandles == [0x0010: 10, 0x0030: 1, 0x0020: 1, 0x0022: 1, 0x0013: 1])
        #expect(unmapped.report.description.contains("0x10 (10)"))

        let map = try BtsnoopImportOptions.parseMap("0x0010=2a37, 0x22=2A24,32=00002a29-0000-1000-8000-00805f9b34fb")
        #expect(map == [0x10: .heartRateMeasurement, 0x22: .modelNumberString, 32: .manufacturerNameString])
        let mapped = try BtsnoopImporter.importCapture(capture.bytes, options: BtsnoopImportOptions(handleMap: map))
        #expect(mapped.report.notifications == Self.rates.count)
        #expect(mapped.report.unmappedHandles == [0x0030: 1, 0x0013: 1])
        #expect(Self.heartRates(mapped.records) == Self.rates.map(Double.init))
        #expect(throws: BtsnoopImportError.self) { try BtsnoopImportOptions.parseMap("0x10") }
        #expect(throws: BtsnoopImportError.self) { try BtsnoopImportOptions.parseMap("0xZZ=2a37") }
        #expect(throws: BtsnoopImportError.self) { try BtsnoopImportOptions.parseMap("0x10=heart") }
    }

    @Test func aCaptureStartingMidConnectionGetsTheGivenAddress() throws {
        var capture = CaptureBuilder(.hciUART)
        for rate in Self.rates { capture.notify(handle: 0x0041, attribute: 0x000E, [0x00, rate]) }
        let result = try BtsnoopImporter.importCapture(
            capture.bytes,
            options: BtsnoopImportOptions(handleMap: [0x0E: .heartRateMeasurement], address: "aa:bb:cc:dd:ee:ff"))
        #expect(result.report.devices == ["AA:BB:CC:DD:EE:FF"])
        #expect(Self.heartRates(result.records) == Self.rates.map(Double.init))
        let anonymous = try BtsnoopImporter.importCapture(
            capture.bytes, options: BtsnoopImportOptions(handleMap: [0x0E: .heartRateMeasurement]))
        #expect(anonymous.report.devices == ["00:00:00:00:00:41"])
    }

    @Test func unknownAndDamagedRecordsAreCountedWithTheirNumbers() throws {
        var capture = Self.strapSession(.linuxMonitor)
        capture.record([0x01, 0x02], flags: 0xFFFF)  // an opcode btmon does not write
        let unknown = capture.records
        capture.acl(0x0040 | 0x1 << 12, [0x01, 0x02], incoming: true)  // a continuation without its start
        let orphan = capture.records
        capture.acl(0x0040 | 0x2 << 12, [0x09, 0x00, 0x04, 0x00, 0x1B], incoming: true)  // never completed
        let unfinished = capture.records
        capture.record([0x40, 0x00, 0x10, 0x00, 0x01], flags: 5)  // ACL length beyond the record
        let short = capture.records
        capture.record([0x3E, 0x13, 0x01], flags: 3, originalLength: 30)  // cut by the snap length
        let snapped = capture.records
        var bytes = capture.bytes
        bytes += [0, 0, 0, 40, 0, 0, 0, 40]  // a record header cut short at the end of the file
        let result = try BtsnoopImporter.importCapture(bytes)
        let report = result.report
        #expect(report.records == capture.records + 1)
        #expect(report.isComplete)
        #expect(report.count(.unknown) == 1)
        #expect(report.count(.damaged) == 5)
        #expect(report.problems.map(\.record) == [unknown, orphan, unfinished, short, snapped, capture.records + 1])
        #expect(report.problems.first?.reason == "monitor opcode 65535")
        #expect(report.notifications == Self.rates.count + 1)
    }

    @Test func aCaptureWithNothingUsableFailsWithItsReport() throws {
        var capture = CaptureBuilder(.hciUART)
        capture.command(0x0C03)
        capture.event(0x0E, [0x01, 0x03, 0x0C, 0x00])
        #expect(throws: BtsnoopImportError.self) { try BtsnoopImporter.importCapture(capture.bytes) }
        do {
            _ = try BtsnoopImporter.importCapture(capture.bytes)
        } catch {
            #expect(error.report?.records == 2)
            #expect(error.report?.count(.hci) == 2)
        }
        #expect(throws: BtsnoopImportError.self) { try BtsnoopImporter.importCapture(Array("not a capture".utf8)) }
        #expect(throws: BtsnoopImportError.self) {
            try BtsnoopImporter.importCapture(BtsnoopWriter(rawDatalink: 1).bytes)
        }
    }

    @Test func randomCapturesNeverTrapTheImporter() {
        var generator = SystemRandomNumberGenerator()
        let seed = Self.strapSession(.hciUART).bytes
        for _ in 0..<3_000 {
            var bytes = seed
            for _ in 0..<Int.random(in: 1...8, using: &generator) {
                let position = Int.random(in: 16..<bytes.count, using: &generator)
                bytes[position] = UInt8.random(in: 0...255, using: &generator)
            }
            if Bool.random(using: &generator) { bytes.removeLast(Int.random(in: 0..<200, using: &generator)) }
            if let result = try? BtsnoopImporter.importCapture(bytes) { #expect(result.report.isComplete) }
        }
    }
}
