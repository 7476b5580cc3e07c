import Foundation
import GATT
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
        print(report)
        #expect(report.records == 3640)
        #expect(report.isComplete)
        #expect(report.datalink == 1002)
        let values = result.records.compactMap { record -> TraceValue? in
            if case .value(let value) = record { return value }
            return nil
        }
        #expect(!values.contains { $0.characteristic == .heartRateMeasurement })
        let sensors = result.records.compactMap { record -> TraceSensor? in
            if case .sensor(let sensor) = record { return sensor }
            return nil
        }
        print(sensors)
    }
}
