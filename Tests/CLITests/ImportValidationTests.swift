import Foundation
import Health
import Testing

@testable import WearhouseCLI

/// What `import-samples` accepts: every RFC 3339 form of a time, and nothing of the wrong JSON type or of an
/// absurd size (checked in-process, one line at a time, plus one run of the real binary for the line number).
@Suite struct ImportValidationTests {
    static let base = #""type":"heartRate","value":60"#

    /// Each case: the time, the instant in ms since 1970, the offset in seconds.
    static let times: [(String, Int64, Int32)] = [
        ("2025-03-30T10:00:00Z", 1_743_328_800_000, 0),
        ("2025-03-30T10:00:00.123456Z", 1_743_328_800_123, 0),  // Python's isoformat(): digits past ms dropped
        ("2025-03-30T10:00:00.9999999-00:00", 1_743_328_800_999, 0),
        ("2025-03-30T15:30:00+0530", 1_743_328_800_000, 19_800),
        ("2025-03-30T12:00:00.5+02:00", 1_743_328_800_500, 7_200),
        ("2025-03-30t10:00:00z", 1_743_328_800_000, 0),
        ("2025-03-30 10:00:00Z", 1_743_328_800_000, 0),
        ("2025-03-30T10:00Z", 1_743_328_800_000, 0),
        ("1969-12-31T23:59:59.9999Z", -1, 0),  // truncation moves toward the earlier instant
        ("2016-12-31T23:59:60Z", 1_483_228_799_999, 0),  // a leap second is its second's last millisecond
    ]

    @Test func everyRFC3339FormIsAccepted() throws {
        for (text, milliseconds, offset) in Self.times {
            let parsed = try ImportSamplesCommand.time(text, field: "start")
            #expect(parsed.0 == Instant(milliseconds: milliseconds), "\(text)")
            #expect(parsed.1 == offset, "\(text)")
        }
    }

    static let badTimes = [
        "2025-03-30T10:00:00", "2025-02-30T10:00:00Z", "2025-03-30T24:00:00Z", "2025-03-30T10:00:00+24:00",
        "2025-03-30T10:00:00.Z", "2025-03-30T10:00:00Z now", "2025-03-30", "30/03/2025 10:00Z",
        "2025-03-30T10:00:00." + String(repeating: "1", count: 31) + "Z",
    ]

    @Test func timesThatAreNotRFC3339AreRefused() {
        for text in Self.badTimes {
            #expect(throws: ImportSamplesCommand.LineError.self, "\(text)") {
                try ImportSamplesCommand.time(text, field: "start")
            }
        }
    }

    /// Each case: the line's other fields, and what the refusal says.
    static let refusals: [(String, String)] = [
        (#""source":7"#, #""source" must be a string"#),
        (#""device":{"x":1}"#, "\"device\" has an unknown field 'x'"),
        (#""device":7"#, #""device" must be a string (its key) or an object"#),
        (#""device":{"name":3}"#, #""device.name" must be a string"#),
        (#""metadata":[1,2]"#, #""metadata" must be an object"#),
        (#""metadata":{"a":[1]}"#, "metadata 'a' must be a string, number, boolean"),
        (#""subject":true"#, #""subject" must be a string"#),
        (#""uuid":"00000000-0000-0000-0000-000000000000""#, #""uuid" is the nil UUID"#),
        (#""uuid":5"#, #""uuid" must be a string"#),
        (#""source":"\#(String(repeating: "s", count: 257))""#, #""source" is longer than 256 bytes (257)"#),
        (
            #""metadata":{"note":"\#(String(repeating: "n", count: 4_097))"}"#,
            #""metadata.note" is longer than 4096 bytes (4097)"#
        ),
        (
            #""metadata":{\#((0..<65).map { "\"k\($0)\":1" }.joined(separator: ","))}"#,
            #""metadata" has 65 keys; at most 64 are accepted"#
        ),
        (#""end":"2125-03-30T10:00:00Z""#, "a heartRate sample may span at most 24 hours"),
        (#""end":"2025-03-30T09:00:00Z""#, #""end" 2025-03-30T09:00:00.000Z is before "start""#),
        (#""unit":1"#, #""unit" must be a string"#),
    ]

    @Test func wrongTypesAndAbsurdSizesAreRefused() {
        for (fields, message) in Self.refusals {
            let line = "{\(Self.base),\"start\":\"2025-03-30T10:00:00Z\",\(fields)}"
            do {
                _ = try ImportSamplesCommand.sample(from: line, defaultSource: "x")
                Issue.record("accepted \(fields.prefix(80))")
            } catch {
                #expect(error.message.hasPrefix(message), "\(fields.prefix(80)): \(error.message)")
            }
        }
    }

    @Test func aSeriesSpanningMoreThanADayOrWithTooManyBeatsIsRefused() {
        let long = #"{"type":"heartbeatSeries","start":"2025-03-30T10:00:00Z","end":"2025-04-01T10:00:00Z","beats":[]}"#
        #expect(throws: ImportSamplesCommand.LineError.self) {
            try ImportSamplesCommand.sample(from: long, defaultSource: "x")
        }
        let noBeats = #"{"type":"heartbeatSeries","start":"2025-03-30T10:00:00Z","end":"2025-03-30T10:01:00Z"}"#
        #expect(throws: ImportSamplesCommand.LineError.self) {
            try ImportSamplesCommand.sample(from: noBeats, defaultSource: "x")
        }
    }

    @Test func theBinaryNamesTheLineAndImportsNothing() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "wearhouse-cli-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = directory.appendingPathComponent("health.db").path
        let input = """
            {\(Self.base),"start":"2025-03-30T10:00:00.123456+00:00"}
            {\(Self.base),"start":"2025-03-30 10:00:01z","source":7}

            """
        let result = try WearhouseRunner.run(["import-samples", "--store", store, "-"], stdin: input)
        #expect(result.status == 65)
        #expect(result.stderr == "Error: stdin:2: \"source\" must be a string; nothing was imported\n")
        let good = try WearhouseRunner.run(
            ["import-samples", "--store", store, "-"], stdin: String(input.split(separator: "\n")[0]) + "\n")
        #expect(
            good.stdout == "1 samples: 1 inserted, 0 duplicate, 0 conflict, 0 replaced, 0 stale\n", "\(good.stderr)")
    }
}

/// How the store commands print instants: by arithmetic, as a `DateFormatter` would from 1583 on (before, it
/// switches to the Julian calendar, where the store's times are proleptic Gregorian throughout).
@Suite struct InstantFormatTests {
    @Test func instantsPrintAsADateFormatterPrintsThemAndReadBack() throws {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd'T'HH:mm:ss.SSS"
        var generator = SystemRandomNumberGenerator()
        let gregorian: Int64 = -12_212_553_600_000  // 1583-01-01T00:00:00Z
        let latest = Instant.supportedMilliseconds.upperBound - 50_400_000
        let edges: [Int64] = [0, -1, 1, 951_782_400_000, 1_743_328_800_123, gregorian, latest]
        let random = (0..<300).map { _ in Int64.random(in: gregorian...latest, using: &generator) }
        for milliseconds in edges + random {
            for offset: Int32 in [0, 19_800, -36_000, 50_400] {
                let shifted = Double(milliseconds + Int64(offset) * 1000) / 1000
                guard shifted >= Double(gregorian) / 1000 else { continue }
                let expected = formatter.string(from: Date(timeIntervalSince1970: shifted))
                let printed = StoreArguments.format(Instant(milliseconds: milliseconds), offsetSeconds: offset)
                #expect(printed.hasPrefix(expected), "\(milliseconds) \(offset): \(printed) vs \(expected)")
            }
        }
        // Every supported instant prints as a time the import reads back to the same instant.
        for milliseconds in [Instant.supportedMilliseconds.lowerBound, gregorian - 1, -1, latest] {
            let printed = StoreArguments.format(Instant(milliseconds: milliseconds), offsetSeconds: 0)
            #expect(try ImportSamplesCommand.time(printed, field: "start").0 == Instant(milliseconds: milliseconds))
        }
        #expect(
            StoreArguments.format(Instant(milliseconds: Instant.supportedMilliseconds.lowerBound), offsetSeconds: 0)
                == "0001-01-01T00:00:00.000Z")
        #expect(
            StoreArguments.format(Instant(milliseconds: 1_743_328_800_000), offsetSeconds: 19_800)
                == "2025-03-30T15:30:00.000+05:30")
        #expect(
            StoreArguments.format(Instant(milliseconds: -1), offsetSeconds: -3_600) == "1969-12-31T22:59:59.999-01:00")
    }
}
