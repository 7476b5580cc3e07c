import GATT
import Health
import Testing
import Traces

/// What `wearhouse import` takes a file for, from its first bytes.
@Suite struct CaptureFormatTests {
    @Test func theMagicMakesACaptureAndTextALog() throws {
        #expect(try CaptureFormat.detect(Array("btsnoop\0".utf8) + [0, 0, 0, 1]) == .btsnoop)
        #expect(try CaptureFormat.detect(Array("[2026-02-01 02:53:33] Notify ...\n".utf8)) == .bleakLog)
        // A log longer than the 4 KiB looked at, cut inside a character there, is still text.
        let long = Array(String(repeating: "é", count: 3_000).utf8)
        #expect(try CaptureFormat.detect(long) == .bleakLog)
    }

    @Test(arguments: [
        ([UInt8](), "empty file"), (Array("btsnoop".utf8), "truncated btsnoop capture: 7 bytes"),
        (Array(" \n\r\n".utf8), "blank file"),
        (Array("btsnoop!".utf8) + [0], "its first bytes are 62 74 73 6e 6f 6f 70 21"),
        ([0xFF, 0xFE, 0x41], "not a bleak log (it is binary, not text)"),
    ])
    func anythingElseIsNamed(_ bytes: [UInt8], _ says: String) {
        #expect {
            try CaptureFormat.detect(bytes)
        } throws: { error in
            "\(error)".contains(says)
        }
    }
}

/// `wall-us` outside the store's years is an invalid line, on the fast path and the general one.
@Suite struct TraceWallClockRangeTests {
    @Test(arguments: [Int64.max, Int64.min, 253_402_300_800_000_000, -62_135_596_800_000_001])
    func aWallClockOutsideTheStoresYearsIsInvalid(_ wall: Int64) {
        let line =
            #"{"kind":"notification","sensor":"C0:FF:EE:00:00:01","uuid":"2a37","value":"0648","mono-ns":1,"wall-us":\#(wall)}"#
        #expect {
            try TraceLineCodec.decode(Array(line.utf8))
        } throws: { error in
            (error as? TraceSyntaxError)?.reason.contains("'wall-us' \(wall) is outside the times a store holds")
                == true
        }
    }

    @Test func theRangeIsTheStoresInMicroseconds() {
        let store = Instant.supportedMilliseconds
        #expect(TraceLineCodec.wallMicroseconds.lowerBound == store.lowerBound * 1000)
        #expect(TraceLineCodec.wallMicroseconds.upperBound == store.upperBound * 1000 + 999)
    }

    @Test func theEndsOfTheRangeAreValid() throws {
        for wall in [TraceLineCodec.wallMicroseconds.lowerBound, TraceLineCodec.wallMicroseconds.upperBound] {
            let line =
                #"{"kind":"notification","sensor":"C0:FF:EE:00:00:01","uuid":"2a37","value":"0648","mono-ns":1,"wall-us":\#(wall)}"#
            guard case .record(.value(let value)) = try TraceLineCodec.decode(Array(line.utf8)) else {
                Issue.record("not a value: \(line)")
                continue
            }
            #expect(value.at.wallMicroseconds == wall)
        }
    }
}

/// A bleak log's dates outside years 1-9999 are damaged lines, not an overflow.
@Suite struct BleakLogDateRangeTests {
    @Test func aYearBeyond9999IsAnUnreadableTime() throws {
        let log = """
            [99999999999999999-01-01 00:00:00] x Notify 00002a37-0000-1000-8000-00805f9b34fb: 0044
            [9999-12-31 23:59:60] x Notify 00002a37-0000-1000-8000-00805f9b34fb: 0044
            [2026-02-01 02:54:16] x Notify 00002a37-0000-1000-8000-00805f9b34fb: 0044
            """
        let result = try BleakLogImporter.importLog(log)
        #expect(result.report.notifications == 1)
        #expect(result.report.damaged.map(\.reason) == ["unreadable time", "unreadable time"])
    }
}
