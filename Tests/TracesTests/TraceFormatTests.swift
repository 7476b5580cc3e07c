import Foundation
import GATT
import Testing
import Traces

@Suite struct TraceFormatTests {
    static let at = Timestamp(monotonic: .nanoseconds(1_234_567_891), wallMicroseconds: 1_795_946_401_234_567)
    static let records: [TraceRecord] = [
        .sensor(
            TraceSensor(
                address: "c0:ff:ee:00:00:01", adapter: "00:aa:01:00:00:01", name: "Strap \"A\"\n", label: "ünïcode ❤️",
                manufacturer: "Polar", model: "H10", serialNumber: "123", hardwareRevision: "1", firmwareRevision: "2",
                softwareRevision: "3", bodySensorLocation: 1, sensorLocation: 4, reportsWalkingOrRunning: true,
                subject: "alice", sourceIdentifier: "wearhouse", sourceVersion: "0.1.0", timeZone: "Europe/Paris",
                characteristics: [.heartRateMeasurement, .infiniTimeStepCount], at: at)),
        .sensor(TraceSensor(address: "C0:FF:EE:00:00:02")),
        .connection(TraceConnection(address: "C0:FF:EE:00:00:01", connected: false, at: at)),
        .value(
            TraceValue(
                kind: .notification, address: "C0:FF:EE:00:00:01", characteristic: .heartRateMeasurement,
                bytes: [0x16, 0x3C, 0x00, 0x04], at: at)),
        .value(
            TraceValue(
                kind: .indication, address: "C0:FF:EE:00:00:01", characteristic: .rscMeasurement, bytes: [], at: at)),
        .value(
            TraceValue(
                kind: .read, address: "C0:FF:EE:00:00:01", characteristic: .manufacturerNameString,
                bytes: Array("Polar".utf8), at: Timestamp(monotonic: .seconds(-1), wallMicroseconds: -5))),
        .session(
            TraceHeader(createdWallMicroseconds: 7, recorder: "r", origin: "live", seriesWindowMilliseconds: 60_000)),
    ]

    @Test(arguments: records) func everyRecordSurvivesALine(_ record: TraceRecord) throws {
        let line = TraceLineCodec.encode(record)
        #expect(line.last == UInt8(ascii: "\n"))
        #expect(line.dropLast().allSatisfy { $0 != UInt8(ascii: "\n") })
        #expect(try TraceLineCodec.decode(Array(line.dropLast())) == .record(record))
    }

    @Test func aNotificationLineIsTheDocumentedOne() {
        let line = String(decoding: TraceLineCodec.encode(Self.records[3]), as: UTF8.self)
        #expect(
            line
                == #"{"kind":"notification","sensor":"C0:FF:EE:00:00:01","uuid":"2a37","value":"163c0004","mono-ns":1234567891,"wall-us":1795946401234567}"#
                + "\n")
    }

    @Test func linesTheReaderMustRefuse() throws {
        let cases: [(String, String)] = [
            (
                #"{"kind":"notification","sensor":"C0:FF:EE:00:00:01","uuid":"2a37","value":"16","mono-ns":1}"#,
                "wall-us"
            ),
            (#"{"kind":"notification","sensor":"nope","uuid":"2a37","value":"16","mono-ns":1,"wall-us":2}"#, "sensor"),
            (
                #"{"kind":"notification","sensor":"C0:FF:EE:00:00:01","uuid":"2a3","value":"16","mono-ns":1,"wall-us":2}"#,
                "uuid"
            ),
            (
                #"{"kind":"notification","sensor":"C0:FF:EE:00:00:01","uuid":"2a37","value":"1","mono-ns":1,"wall-us":2}"#,
                "hex"
            ),
            (
                #"{"kind":"read","sensor":"C0:FF:EE:00:00:01","uuid":"2a37","value":"16","mono-ns":1.5,"wall-us":2}"#,
                "integer"
            ),
            (#"{"kind":"sensor","sensor":"C0:FF:EE:00:00:01","body-location":300}"#, "0-255"),
            (#"{"wearhouse-trace":2}"#, "newer"),
            (#"{"kind":"connection","sensor":"C0:FF:EE:00:00:01","mono-ns":1,"wall-us":2"#, "object"),
            (#"{"kind":"connection"} x"#, "after"),
            (#"[1]"#, "{"),
            (#"{"kind":"x\u00"}"#, "escape"),
        ]
        for (line, reason) in cases {
            #expect(throws: TraceSyntaxError.self, "\(line)") { try TraceLineCodec.decode(Array(line.utf8)) }
            do {
                _ = try TraceLineCodec.decode(Array(line.utf8))
            } catch {
                #expect(error.reason.contains(reason) || "\(error)".contains(reason), "\(line): \(error.reason)")
            }
        }
        #expect(
            try TraceLineCodec.decode(Array(#"{"kind":"future-thing","x":{"y":[1,2,{"z":null}]}}"#.utf8))
                == .unknownKind("future-thing"))
    }

    /// A trace holds health data (heart rates, RR intervals): only its owner may read it.
    @Test func aNewTraceIsTheOwnersOnly() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/private.trace"
            let writer = try TraceWriter(path: path, header: TraceHeader(recorder: "test"))
            try writer.close()
            let attributes = try FileManager.default.attributesOfItem(atPath: path)
            #expect(((attributes[.posixPermissions] as? NSNumber)?.intValue ?? 0) & 0o777 == 0o600)
        }
    }

    @Test func aWrittenTraceReadsBackAndAppendingAddsASession() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/a.trace"
            let writer = try TraceWriter(path: path, header: TraceHeader(recorder: "test"))
            for record in Self.records.dropLast() { try writer.append(record) }
            try writer.close()
            let again = try TraceWriter(path: path, header: TraceHeader(recorder: "second"))
            try again.append(Self.records[3])
            try again.close()

            let reader = try TraceReader(path: path)
            #expect(reader.header.recorder == "test")
            let read = try reader.readAll()
            #expect(read.count == Self.records.count - 1 + 2)
            #expect(Array(read.prefix(Self.records.count - 1)) == Array(Self.records.dropLast()))
            #expect(read[Self.records.count - 1] == .session(TraceHeader(recorder: "second")))
            #expect(reader.issues.isEmpty)
            #expect(reader.bytesRead == reader.fileSize)
        }
    }

    @Test func aTornLastLineIsReportedAndSkipped() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/torn.trace"
            var text = String(decoding: TraceLineCodec.encode(.header(TraceHeader())), as: UTF8.self)
            text += String(decoding: TraceLineCodec.encode(Self.records[3]), as: UTF8.self)
            text += #"{"kind":"notification","sensor":"C0:FF:EE:00:0"#
            try text.write(toFile: path, atomically: true, encoding: .utf8)
            let reader = try TraceReader(path: path)
            #expect(try reader.readAll() == [Self.records[3]])
            #expect(reader.issues.count == 1)
            #expect(reader.issues.first?.line == 3)
            #expect(reader.issues.first?.description.contains("torn last line") == true)

            // Appending after the crash: the torn line ends, a session follows, and the reader skips the torn one.
            let writer = try TraceWriter(path: path, header: TraceHeader(recorder: "after"))
            try writer.append(Self.records[2])
            try writer.close()
            let second = try TraceReader(path: path)
            #expect(
                try second.readAll() == [Self.records[3], .session(TraceHeader(recorder: "after")), Self.records[2]])
            #expect(second.issues.map(\.line) == [3])
        }
    }

    @Test func aBadLineInTheMiddleNamesTheFileAndLine() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/bad.trace"
            var text = String(decoding: TraceLineCodec.encode(.header(TraceHeader())), as: UTF8.self)
            text +=
                "\n" + #"{"kind":"connection","sensor":"C0:FF:EE:00:00:01","connected":"yes","mono-ns":1,"wall-us":2}"#
                + "\n"
            text += String(decoding: TraceLineCodec.encode(Self.records[3]), as: UTF8.self)
            try text.write(toFile: path, atomically: true, encoding: .utf8)
            let reader = try TraceReader(path: path)
            #expect(throws: TraceError(file: path, line: 3, reason: "'connected' must be true or false")) {
                try reader.readAll()
            }
        }
    }

    @Test func filesThatAreNotTracesAreRefused() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/notes.txt"
            try "hello\n".write(toFile: path, atomically: true, encoding: .utf8)
            #expect(throws: TraceError.self) { try TraceReader(path: path) }
            #expect(throws: TraceError.self) { try TraceWriter(path: path, header: TraceHeader()) }
            #expect(try String(contentsOfFile: path, encoding: .utf8) == "hello\n")
            #expect(throws: TraceError.self) { try TraceReader(path: directory + "/missing.trace") }
        }
    }

    @Test func theWriterFlushesWithinASecondWithoutClosing() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory + "/live.trace"
            let writer = try TraceWriter(path: path, header: TraceHeader())
            try writer.append(Self.records[3])
            let before = try String(contentsOfFile: path, encoding: .utf8)
            #expect(before.split(separator: "\n").count == 1)  // buffered
            try await Task.sleep(for: .milliseconds(1_050))
            try writer.flushIfDue()
            #expect(try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").count == 2)
            try writer.close()
        }
    }

    @Test func randomBytesNeverTrapTheLineParser() {
        var generator = SystemRandomNumberGenerator()
        let alphabet = Array(#"{}[]",:0123456789-.eEtrufalsn\ux"kind"#.utf8) + [0, 0x80, 0xFF]
        for _ in 0..<20_000 {
            let count = Int.random(in: 0...40, using: &generator)
            let line = (0..<count).map { _ in alphabet.randomElement(using: &generator) ?? 0 }
            _ = try? TraceLineCodec.decode(line)
        }
        let deep = Array(repeating: UInt8(ascii: "["), count: 10_000)
        #expect(throws: TraceSyntaxError.self) { try TraceLineCodec.decode(Array(#"{"a":"#.utf8) + deep) }
    }
}

func withTemporaryDirectory<T>(_ body: (String) async throws -> T) async rethrows -> T {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("trace-\(UUID().uuidString)").path
    try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: directory) }
    return try await body(directory)
}

func withTemporaryDirectory<T>(_ body: (String) throws -> T) rethrows -> T {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("trace-\(UUID().uuidString)").path
    try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: directory) }
    return try body(directory)
}
