import Foundation
import GATT
import Gateway
import Health
import Testing
import Traces

/// The real Android capture in `../shared/traces/real/` (a treadmill, no heart rate), when that folder is there.
@Suite struct BtsnoopRealCaptureTests {
    static let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../../shared/traces/real/android-btsnoop-treadmill-no-hr.btsnoop").standardized.path

    static var present: Bool { FileManager.default.fileExists(atPath: path) }

    @Test(.enabled(if: present)) func theTreadmillCaptureIsAccountedForAndHasNoHeartRate() throws {
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: Self.path)))
        let result = try BtsnoopImporter.importCapture(bytes)
        let report = result.report
        // Every record accounted for, none unknown or damaged.
        #expect(report.records == 3640)
        #expect(report.isComplete)
        #expect(report.count(.unknown) == 0 && report.count(.damaged) == 0)
        #expect(report.datalink == 1002)
        #expect(report.devices == ["E8:5D:86:0A:72:7F"])
        // The Device Information characteristics are found by the discovery in the capture (declarations at
        // 0x12-0x20); the capture never reads their values.
        let dis: [UInt16: BluetoothUUID] = [
            0x12: .manufacturerNameString, 0x14: .modelNumberString, 0x16: .serialNumberString,
            0x18: .hardwareRevisionString, 0x1A: .firmwareRevisionString, 0x1C: .softwareRevisionString,
            0x1E: .systemID, 0x20: BluetoothUUID(UInt16(0x2A2A)),
        ]
        let handles = try #require(report.handles["E8:5D:86:0A:72:7F"])
        for (handle, uuid) in dis { #expect(handles[handle] == uuid) }
        #expect(report.reads == 0)
        // 1030 notifications on the vendor UART characteristic at 0x0052, none of them heart rate.
        #expect(report.notifications == 1030)
        #expect(report.unmappedHandles.isEmpty)
        #expect(handles[0x52] == BluetoothUUID("49535343-1e4d-4bd9-ba61-23c647249616"))

        var engine = TraceReplayEngine(settings: .init(source: Source(identifier: "wearhouse", version: "t")))
        var samples = 0
        for record in result.records { samples += engine.handle(record).count }
        samples += engine.finish().count
        #expect(samples == 0)
        #expect(engine.totals.notifications == 1030)
        #expect(engine.totals.samplesByType[HealthType.heartRate.identifier] == nil)
    }
}
