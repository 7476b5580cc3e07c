import Foundation
import GATT
import Support
import TestSupport
import Testing

@testable import Traces

/// The reader's fast path for value lines against the general decoder: whenever the fast path returns a value, it is
/// the record the general decoder makes of the line; and the reader reports lines it declines exactly as before.
@Suite struct ValueLineDecoderTests {
    /// Random lines around the value kinds: the writer's form, and every way a line may differ from it (key order,
    /// white space, case, unknown keys, escapes, null, duplicates, other kinds, numbers and strings that are not what
    /// a field needs, truncation).
    struct LineGenerator {
        var random: SplitMix64
        /// More addresses than the decoder interns, so that entries are replaced.
        let addresses: [String] = (0..<40).map { String(format: "c0:ff:ee:%02x:%02X:0a", $0, 255 - $0) }

        init(seed: UInt64) { random = SplitMix64(seed: seed) }

        mutating func chance(_ percent: UInt64) -> Bool { random.next() % 100 < percent }
        mutating func pick<T>(_ choices: [T]) -> T { random.pick(choices) }

        mutating func space() -> String {
            chance(85) ? "" : pick([" ", "  ", "\t", "\r", " \t ", "\n"])
        }

        mutating func kind() -> String {
            if chance(90) { return "\"" + pick(["notification", "indication", "read"]) + "\"" }
            return pick([
                "\"sensor\"", "\"connection\"", "\"session\"", "\"future\"", "\"Notification\"",
                "\"notif\\u0069cation\"",
                "null", "1", "true", "\"\"",
            ])
        }

        mutating func address() -> String {
            if chance(92) {
                let text = pick(addresses)
                return "\"" + (chance(50) ? text.uppercased() : text) + "\""
            }
            return pick([
                "\"C0:FF:EE:00:00\"", "\"C0-FF-EE-00-00-01\"", "\"G0:FF:EE:00:00:01\"", "\"C0:FF:EE:00:00:01 \"",
                "\"C0:FF:EE:00:00:0\\u0031\"", "null", "17", "\"\"", "\"C0:FF:EE:00:00:0é\"",
            ])
        }

        mutating func uuid() -> String {
            if chance(85) {
                return "\""
                    + pick([
                        "2a37", "2A37", "2a53", "0000fee0", "00030001-78fc-48fe-8e23-433b3a1942d0",
                        "00030001-78FC-48FE-8E23-433B3A1942D0", "0003000178fc48fe8e23433b3a1942d0", "ffffffff",
                    ]) + "\""
            }
            return pick([
                "\"0x2a37\"", "\"0X2A37\"", "\"2a3\"", "\"2a3g\"", "\"00030001-78fc-48fe-8e23433b3a1942d0-\"",
                "\"00030001x78fc-48fe-8e23-433b3a1942d0\"", "null", "\"\"", "42", "\"2a\\u0033\"", "\"+a37\"",
            ])
        }

        mutating func value() -> String {
            let count = Int(random.next() % 24)
            var digits = ""
            for _ in 0..<count { digits += String(format: "%02x", Int(random.next() % 256)) }
            if chance(85) { return "\"" + (chance(20) ? digits.uppercased() : digits) + "\"" }
            return pick([
                "\"" + digits + "1\"", "\"16 3c\"", "\"16:3c\"", "\"0x16\"", "\"zz\"", "\"1\\u0036\"", "null", "16",
                "\"16\\n\"", "\"\"",
            ])
        }

        mutating func integer() -> String {
            if chance(80) {
                let magnitude = random.next() >> (random.next() % 64)
                let value = Int64(truncatingIfNeeded: magnitude)
                return String(chance(10) ? -Int64(clamping: value.magnitude) : value)
            }
            return pick([
                "1.5", "1e3", "2E2", "-", "0", "-0", "007", "9223372036854775807", "-9223372036854775808",
                "9223372036854775808", "-9223372036854775809", "99999999999999999999999", "null", "\"1\"", "true",
                "1.", "12x",
            ])
        }

        mutating func unknown() -> (String, String) {
            let key = pick([
                "\"x\"", "\"adapter\"", "\"future-key\"", "\"\"", "\"ünï\"", "\"wearhouse-trace\"", "\"k\\u0069nd\"",
                "\"wall-us \"", "\"Kind\"",
            ])
            let value = pick([
                "\"text\"", "\"ünïcode ❤️\"", "\"with \\\" quote\"", "1", "-2", "1.5", "true", "false", "null", "[1,2]",
                "{\"a\":{\"b\":null}}", "\"\"", "\"\u{01}\"", "tru", "1e400", "[", "\"\\ud800\"",
            ])
            return (key, value)
        }

        /// One line, without a newline.
        mutating func line() -> [UInt8] {
            var fields: [(String, String)] = [
                ("\"kind\"", kind()), ("\"sensor\"", address()), ("\"uuid\"", uuid()), ("\"value\"", value()),
                ("\"mono-ns\"", integer()), ("\"wall-us\"", integer()),
            ]
            if chance(15) { fields.remove(at: Int(random.next() % UInt64(fields.count))) }
            if chance(20) { fields.shuffle(using: &random) }
            if chance(15) {
                let extra = unknown()
                fields.insert(extra, at: Int(random.next() % UInt64(fields.count + 1)))
            }
            if chance(5), let duplicate = fields.randomElement(using: &random) { fields.append(duplicate) }
            var text = space() + "{"
            for (position, field) in fields.enumerated() {
                if position > 0 { text += space() + "," }
                text += space() + field.0 + space() + ":" + space() + field.1 + space()
            }
            text += "}" + space()
            if chance(3) { text += pick(["x", "}", ",", "{}"]) }
            var bytes = Array(text.utf8)
            if chance(5) { bytes.removeLast(Int(random.next() % UInt64(bytes.count + 1))) }
            return bytes.map { $0 == UInt8(ascii: "\n") ? UInt8(ascii: " ") : $0 }
        }
    }

    static func general(_ line: [UInt8]) -> Result<TraceLineCodec.Decoded, TraceSyntaxError> {
        Result { () throws(TraceSyntaxError) in try TraceLineCodec.decode(line) }
    }

    @Test(arguments: 0..<8) func theFastPathAgreesWithTheGeneralDecoder(seed: UInt64) {
        var generator = LineGenerator(seed: 0xFA57 &+ seed)
        var decoder = ValueLineDecoder()
        var taken = 0
        var declinedValues = 0
        let lines = 20_000
        for _ in 0..<lines {
            let line = generator.line()
            let fast = line.withUnsafeBufferPointer { decoder.decode($0) }
            let general = Self.general(line)
            if let fast {
                taken += 1
                #expect(general == .success(.record(.value(fast))), "\(String(decoding: line, as: UTF8.self))")
            } else if case .success(.record(.value)) = general {
                declinedValues += 1
            }
        }
        // The generator must exercise both sides: most lines take the fast path, and some valid values do not.
        #expect(taken > lines / 4)
        #expect(declinedValues > 0)
    }

    @Test func everyLineTheWriterWritesTakesTheFastPath() {
        var random = SplitMix64(seed: 7)
        var decoder = ValueLineDecoder()
        let uuids: [BluetoothUUID] = [
            .heartRateMeasurement, .rscMeasurement, BluetoothUUID(UInt32(0xFEE0)),
            BluetoothUUID("00030001-78fc-48fe-8e23-433b3a1942d0")!, BluetoothUUID(high: .max, low: 0),
        ]
        for index in 0..<5_000 {
            let value = TraceValue(
                kind: TraceValue.Kind.allCases[index % 3],
                address: String(format: "%02X:%02x:EE:00:00:%02X", index % 50, index % 7, index % 256),
                characteristic: uuids[index % uuids.count],
                bytes: (0..<Int(random.next() % 40)).map { _ in UInt8(truncatingIfNeeded: random.next()) },
                at: Timestamp(
                    monotonic: .nanoseconds(Int64(bitPattern: random.next())),
                    wallMicroseconds: TraceLineCodec.wallMicroseconds.lowerBound
                        + Int64(random.next() % UInt64(TraceLineCodec.wallMicroseconds.count))))
            let line = TraceLineCodec.encode(.value(value)).dropLast()
            let fast = Array(line).withUnsafeBufferPointer { decoder.decode($0) }
            #expect(fast == value)
            #expect(fast?.address == value.address)
        }
    }

    @Test func otherKindsAreLeftToTheGeneralDecoder() {
        var decoder = ValueLineDecoder()
        for record in TraceFormatTests.records {
            let line = Array(TraceLineCodec.encode(record).dropLast())
            let fast = line.withUnsafeBufferPointer { decoder.decode($0) }
            if case .value(let value) = record { #expect(fast == value) } else { #expect(fast == nil) }
        }
        #expect([UInt8]().withUnsafeBufferPointer { decoder.decode($0) } == nil)
    }

    /// A trace with one line in the middle that the fast path declines: the reader's error (or its skipping) is the
    /// general decoder's, with the same line and column.
    @Test(arguments: 0..<4) func theReaderReportsDeclinedLinesAsBefore(seed: UInt64) throws {
        var generator = LineGenerator(seed: 0xBAD &+ seed)
        let good = TraceLineCodec.encode(TraceFormatTests.records[3])
        let header = TraceLineCodec.encode(.header(TraceHeader()))
        try withTemporaryDirectory { directory in
            var checked = 0
            while checked < 150 {
                let candidate = generator.line()
                // A blank line is no line.
                if candidate.allSatisfy({ [UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\r")].contains($0) }) {
                    continue
                }
                let result = Self.general(candidate)
                let path = directory + "/t\(checked).trace"
                // Lines 1 header, 2 a value, 3 blank, 4 the candidate, 5 the value again (no newline).
                var text = header + good
                text += Array(" \r\n".utf8) + candidate
                text += [UInt8(ascii: "\n")] + good.dropLast()
                #expect(FileManager.default.createFile(atPath: path, contents: Data(text)))
                let reader = try TraceReader(path: path)
                let expected = TraceFormatTests.records[3]
                switch result {
                case .success(.record(.header)):
                    #expect(throws: TraceError(file: path, line: 4, reason: "a second header (use a session line)")) {
                        try reader.readAll()
                    }
                case .success(.record(let record)):
                    #expect(try reader.readAll() == [expected, record, expected])
                    #expect(reader.issues.isEmpty)
                case .success(.unknownKind(let kind)):
                    #expect(try reader.readAll() == [expected, expected])
                    #expect(
                        reader.issues == [
                            TraceIssue(file: path, line: 4, reason: "skipped a line of unknown kind '\(kind)'")
                        ])
                case .failure(let error):
                    let reason = error.offset > 0 ? "column \(error.offset + 1): \(error.reason)" : error.reason
                    #expect(throws: TraceError(file: path, line: 4, reason: reason)) { try reader.readAll() }
                }
                #expect(reader.lineNumber == 4 || reader.lineNumber == 5)
                checked += 1
            }
        }
    }

    @Test func linesLongerThanTheReadBufferAndAddressesBeyondTheInternedOnes() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/long.trace"
            let writer = try TraceWriter(path: path, header: TraceHeader())
            var written: [TraceRecord] = []
            for index in 0..<200 {
                let size = index == 100 ? TraceReader.chunk + 12_345 : index % 17
                let value = TraceValue(
                    kind: .notification, address: String(format: "C0:FF:EE:00:%02X:01", index % 70),
                    characteristic: .heartRateMeasurement, bytes: (0..<size).map { UInt8(truncatingIfNeeded: $0) },
                    at: Timestamp(monotonic: .nanoseconds(Int64(index)), wallMicroseconds: Int64(index)))
                try writer.append(.value(value))
                written.append(.value(value))
            }
            try writer.close()
            let reader = try TraceReader(path: path)
            #expect(try reader.readAll() == written)
            #expect(reader.bytesRead == reader.fileSize)
            #expect(reader.lineNumber == 201)
        }
    }
}
