import Foundation
import Health
import Support
import Testing

@testable import WearhouseCLI

/// The fast path of `import-samples` (``FlatLineParser``) takes only lines the general reader accepts, gives the
/// same sample for each, and leaves every other line to the general reader (which words its errors).
@Suite struct FlatLineParserTests {
    static let start = #""start":"2025-03-30T10:00:00Z""#

    /// Lines the fast path takes.
    static let taken = [
        #"{"type":"heartRate","start":"2025-03-30T00:00:00Z","value":61,"unit":"count/min","source":"org.example.app"}"#,
        #"{"type":"heartRate",\#(start),"value":61}"#,
        #"  { "value" : 61.25 , "type" : "heartRate" , \#(start) , "source" : null }  "#,
        #"{"type":"heartRate",\#(start),"value":-0.5,"unit":null,"end":null}"#,
        #"{"type":"stepCount","start":"2025-03-30T12:00:00.5+02:00","end":"2025-03-30T12:01:00.999+02:00","value":12}"#,
        #"{"type":"bodyMass",\#(start),"value":72.12345678901,"unit":"kg","source":"scale"}"#,
        #"{"type":"heartRate","start":"2016-12-31T23:59:60Z","value":0.1}"#,
        "{\"type\":\"heartRate\",\(start),\"value\":60}\r",
    ]

    /// Lines it leaves to the general reader: valid ones of other shapes, and lines in error.
    static let declined = [
        #"{"type":"heartRate",\#(start),"value":60,"unit":"count/s"}"#,  // a conversion
        #"{"type":"heartRate",\#(start),"value":6e1}"#,  // an exponent
        #"{"type":"heartRate",\#(start),"value":60,"subject":"alice"}"#,  // another field
        #"{"type":"heartRate",\#(start),"value":60,"source":"a\u0062"}"#,  // an escape
        #"{"type":"heartRate",\#(start),"value":60,"type":"heartRate"}"#,  // a key twice
        #"{"type":"sleepAnalysis",\#(start),"value":1}"#,  // a category
        #"{"type":"heartRate",\#(start),"value":60,"uuid":"0190c2a8-0000-7000-8000-000000000001"}"#,
        #"{"type":"heartRate","start":"2025-03-30T10:00:00","value":60}"#,  // no offset
        #"{"type":"heartRate",\#(start),"end":"2025-03-30T09:00:00Z","value":60}"#,  // end before start
        #"{"type":"heartRate",\#(start),"end":"2025-04-30T09:00:00Z","value":60}"#,  // too long
        #"{"type":"heartRate",\#(start),"value":"60"}"#,
        #"{"type":"heartRate",\#(start),"value":060}"#,
        #"{"type":"heartRate",\#(start),"value":1.}"#,
        #"{"type":"heartRate",\#(start)}"#,
        #"{"type":"nothing",\#(start),"value":60}"#,
        #"{"type":"heartRate",\#(start),"value":60} x"#,
        #"{"type":"heartRate",\#(start),"value":60,}"#,
        #"{"type":"heartRate",\#(start),"value":60"#,
        #"{"type":"heartRate",\#(start),"value":12345678901234567890.5}"#,
        "# a comment", "", "[]", "{}",
    ]

    static func fast(_ line: String, parser: inout FlatLineParser) -> FlatLineParser.Sample? {
        fast(Array(line.utf8), parser: &parser)
    }

    static func fast(_ line: [UInt8], parser: inout FlatLineParser) -> FlatLineParser.Sample? {
        line.withUnsafeBufferPointer { parser.sample($0, defaultSource: "default.source") }
    }

    @Test func theFastPathGivesTheGeneralReadersSample() throws {
        var parser = FlatLineParser()
        for line in Self.taken {
            let sample = try #require(Self.fast(line, parser: &parser), "\(line)")
            let parsed = try ImportSamplesCommand.sample(
                from: try #require(ImportReader.trimmed(Array(line.utf8)[...])), defaultSource: "default.source")
            guard case .quantity(let general, keepsID: false) = parsed else {
                Issue.record("\(line): \(parsed)")
                continue
            }
            #expect(parser.type == general.type, "\(line)")
            #expect(parser.source == general.source, "\(line)")
            #expect(sample.start == general.start.milliseconds, "\(line)")
            #expect(sample.end == general.end.milliseconds, "\(line)")
            #expect(sample.offset == general.startOffsetSeconds, "\(line)")
            #expect(sample.value.bitPattern == general.value.bitPattern, "\(line)")
        }
    }

    @Test func everyOtherLineGoesToTheGeneralReader() {
        var parser = FlatLineParser()
        for line in Self.declined {
            #expect(Self.fast(line, parser: &parser) == nil, "\(line)")
        }
    }

    /// Decimals read by the fast path are the doubles the general reader's parser gives, bit for bit.
    @Test func decimalsAreCorrectlyRounded() throws {
        var generator = SystemRandomNumberGenerator()
        var parser = FlatLineParser()
        for _ in 0..<2_000 {
            let digits = Int.random(in: 1...17, using: &generator)
            let mantissa = UInt64.random(in: 0..<UInt64(pow(10, Double(digits))), using: &generator)
            var text = String(mantissa)
            let fraction = Int.random(in: 1...min(text.count, 16), using: &generator)
            text.insert(".", at: text.index(text.endIndex, offsetBy: -fraction))
            if text.hasPrefix(".") { text = "0" + text }
            if Bool.random(using: &generator) { text = "-" + text }
            let line = #"{"type":"bodyMass",\#(Self.start),"value":\#(text)}"#
            guard let sample = Self.fast(line, parser: &parser) else { continue }  // beyond 2^53: declined
            let expected = try #require(Double(text))
            #expect(sample.value.bitPattern == expected.bitPattern, "\(text)")
        }
    }

    /// What the fast path made of `line`, checked against the general reader: `true` when it took the line, which
    /// it may only do when the general reader accepts it as a quantity sample without an id of its own and gives
    /// the same type, times, offset, value (bit for bit) and source, no device, subject or metadata.
    @discardableResult
    static func agrees(
        _ text: String, parser: inout FlatLineParser, sourceLocation: SourceLocation = #_sourceLocation
    ) -> Bool {
        agrees(Array(text.utf8), parser: &parser, sourceLocation: sourceLocation)
    }

    /// ``agrees(_:parser:sourceLocation:)`` for the bytes of a line as the file has them (UTF-8 or not).
    @discardableResult
    static func agrees(
        _ bytes: [UInt8], parser: inout FlatLineParser, sourceLocation: SourceLocation = #_sourceLocation
    ) -> Bool {
        let line = String(decoding: bytes, as: UTF8.self)
        guard let sample = fast(bytes, parser: &parser) else { return false }
        guard let text = ImportReader.trimmed(bytes[...]) else {
            Issue.record(
                "taken, but the general reader skips it: \(line.debugDescription)", sourceLocation: sourceLocation)
            return true
        }
        let parsed: ImportSamplesCommand.Parsed
        do throws(ImportSamplesCommand.LineError) {
            parsed = try ImportSamplesCommand.sample(from: text, defaultSource: "default.source")
        } catch {
            Issue.record(
                "taken, but the general reader refuses it (\(error.message)): \(line.debugDescription)",
                sourceLocation: sourceLocation)
            return true
        }
        guard case .quantity(let general, keepsID: false) = parsed else {
            Issue.record(
                "taken, but the general reader gives \(parsed): \(line.debugDescription)",
                sourceLocation: sourceLocation)
            return true
        }
        let same =
            parser.type == general.type && parser.source == general.source
            && sample.start == general.start.milliseconds && sample.end == general.end.milliseconds
            && sample.offset == general.startOffsetSeconds && sample.value.bitPattern == general.value.bitPattern
            && general.device == nil && general.subject == nil && general.metadata.isEmpty
        let fast = "\(sample) \(parser.type?.identifier ?? "-") \(parser.source?.identifier ?? "-")"
        #expect(same, "\(line.debugDescription): fast \(fast), general \(general)", sourceLocation: sourceLocation)
        return true
    }

    /// The edges, each taken (`true`) or declined (`false`); every one taken agrees with the general reader.
    static let edges: [(String, Bool?)] = [
        (#"{"type":"heartRate",\#(start),"value":-0}"#, true),  // an integer: +0, as the general reader has it
        (#"{"type":"heartRate",\#(start),"value":-0.0}"#, true),  // negative zero, kept
        (#"{"type":"heartRate",\#(start),"value":0.000}"#, true),
        (#"{"type":"heartRate",\#(start),"value":-1}"#, true),  // out of range: the store refuses it, either way
        (#"{"type":"heartRate",\#(start),"value":9223372036854775807}"#, true),  // Int64.max, rounded to a double
        (#"{"type":"heartRate",\#(start),"value":-9223372036854775808}"#, true),
        (#"{"type":"heartRate",\#(start),"value":9223372036854775808}"#, false),  // beyond Int64
        (#"{"type":"heartRate",\#(start),"value":123456789012345678901234}"#, false),
        (#"{"type":"heartRate",\#(start),"value":9007199254740993.0}"#, false),  // beyond 2^53 digits
        (#"{"type":"heartRate",\#(start),"value":0.1234567890123456789}"#, false),  // 20 digits
        (#"{"type":"heartRate",\#(start),"value":1E2}"#, false),
        (#"{"type":"heartRate",\#(start),"value":1.5e0}"#, false),
        (#"{"type":"heartRate",\#(start),"value":+1}"#, false),
        (#"{"type":"heartRate",\#(start),"value":.5}"#, false),
        (#"{"type":"heartRate",\#(start),"value":-}"#, false),
        (#"{"type":"heartRate",\#(start),"value":--1}"#, false),
        (#"{"type":"heartRate",\#(start),"value":1.5.5}"#, false),
        (#"{"type":"heartRate",\#(start),"value":-01}"#, false),
        (#"{"type":"heartRate",\#(start),"value":00.5}"#, false),
        (#"{"type":"heartRate",\#(start),"value":true}"#, false),
        (#"{"type":"heartRate",\#(start),"value":null}"#, false),
        (#"{"type":"heartRate",\#(start),"value":[60]}"#, false),
        (#"{"type":"heartRate",\#(start),"value":60,"unit":"count/min"}"#, true),
        (#"{"type":"heartRate",\#(start),"value":60,"unit":"Count/min"}"#, false),
        (#"{"type":"heartRate",\#(start),"value":60,"unit":"count/min "}"#, false),
        (#"{"type":"heartRate",\#(start),"value":60,"unit":""}"#, false),
        (#"{"type":"heartRate",\#(start),"value":60,"unit":"count\/min"}"#, false),
        (#"{"type":"heartRate",\#(start),"value":60,"unit":1}"#, false),
        (#"{"type":"bodyMass",\#(start),"value":72,"unit":"g"}"#, false),  // a conversion
        (#"{"type":"heartRate",\#(start),"value":60,"source":""}"#, true),  // empty: the general reader keeps it too
        (#"{"type":"heartRate",\#(start),"value":60,"source":"a b~\#u{7F}"}"#, true),  // DEL is no control in JSON
        ("{\"type\":\"heartRate\",\(start),\"value\":60,\"source\":\"a\u{01}b\"}", false),  // refused by JSON
        ("{\"type\":\"heartRate\",\(start),\"value\":60,\"source\":\"a\tb\"}", false),
        (#"{"type":"heartRate",\#(start),"value":60,"source":"\u0001"}"#, false),
        (#"{"type":"heartRate",\#(start),"value":60,"source":"café"}"#, false),  // not ASCII
        (#"{"type":"heartRate",\#(start),"value":60,"source":"\#(String(repeating: "s", count: 256))"}"#, true),
        (#"{"type":"heartRate",\#(start),"value":60,"source":"\#(String(repeating: "s", count: 257))"}"#, false),
        (#"{"type":"heartRate",\#(start),"value":60,"source":7}"#, false),
        (#"{"Type":"heartRate",\#(start),"value":60}"#, false),
        (#"{"TYPE":"heartRate",\#(start),"value":60}"#, false),
        (#"{"type":"HeartRate",\#(start),"value":60}"#, nil),  // whatever the catalog says, both agree
        (#"{"type ":"heartRate",\#(start),"value":60}"#, false),
        (#"{"typ\u0065":"heartRate",\#(start),"value":60}"#, false),
        (#"{"type":"heartbeatSeries",\#(start),"value":60}"#, false),
        (#"{"type":"bloodPressure",\#(start),"value":60}"#, false),
        (#"{"type":"workout",\#(start),"value":60}"#, false),
        (#"{"type":"biologicalSex",\#(start),"value":60}"#, false),
        (#"{"type":"heartRate",\#(start),"value":60,"value":61}"#, false),
        (#"{"type":"heartRate",\#(start),"value":60,"source":"a","source":"b"}"#, false),
        (#"{"type":"heartRate",\#(start),"value":60,"start":"2025-03-30T10:00:01Z"}"#, false),
        (#"{"type":"heartRate",\#(start),"value":60,"end":null,"end":null}"#, false),
        ("\u{FEFF}{\"type\":\"heartRate\",\(start),\"value\":60}", false),  // a byte order mark
        ("{\"type\":\"heartRate\",\(start),\"value\":60}\r", true),  // CRLF
        ("\r{\"type\":\"heartRate\",\(start),\"value\":60}\r\r", true),
        ("\t{\t\"type\"\t:\t\"heartRate\"\t,\t\(start)\t,\"value\"\r:\r60\t}\t", true),
        ("{\"type\":\"heartRate\",\(start),\"value\":60}\u{0C}", false),  // form feed is no JSON space
        ("{\"type\":\"heartRate\",\(start),\"value\":60}\u{A0}", false),
        ("{\"type\":\"heartRate\",\(start),\"value\":60}\u{0}", false),
        ("{\"type\":\"heartRate\",\(start),\"value\":6\u{0}0}", false),
        (#"{"type":"heartRate",\#(start),"value":60}}"#, false),
        (#"{"type":"heartRate",\#(start),"value":60},"#, false),
        (#"{"type":"heartRate",\#(start),"value":60 "unit":null}"#, false),
        (#"{"type":"heartRate",\#(start),"value":nul}"#, false),
        (#"{"type":"heartRate",\#(start),"value":nullx}"#, false),
        (#"{"type":"heartRate","start":"2025-03-30T10:00:00\u005A","value":60}"#, false),
        (#"{"type":"heartRate","start":"2025-03-30T10:00:00Z\","value":60}"#, false),
        (#"{"type":"heartRate","start":"2025-03-30T10:00:00.\#(String(repeating: "1", count: 30))Z","value":1}"#, true),
        (
            #"{"type":"heartRate","start":"2025-03-30T10:00:00.\#(String(repeating: "1", count: 43))Z","value":1}"#,
            false
        ),
        (
            #"{"type":"heartRate","start":"2025-03-30T10:00:00.0000000000000000000000000000000000000000000000000Z","value":1}"#,
            false
        ),
        (#"{"type":"heartRate","start":"0000-12-31T23:59:59Z","value":60}"#, false),
        (#"{"type":"heartRate","start":"9999-12-31T23:59:59.999-01:00","value":60}"#, false),
        (#"{"type":"heartRate","start":"0001-01-01T00:00:00+00:01","value":60}"#, false),
        (#"{"type":"heartRate","start":"2025-03-30T10:00:00+23:59","value":60}"#, true),
        (#"{"type":"heartRate","start":"2025-03-30T10:00:00-0000","value":60}"#, true),
        (#"{"type":"heartRate","start":"2025-03-30T10:00:00Z","end":"2025-03-31T10:00:00Z","value":60}"#, true),
        (#"{"type":"heartRate","start":"2025-03-30T10:00:00Z","end":"2025-03-31T10:00:00.001Z","value":60}"#, false),
        (#"{"type":"stepCount","start":"2025-03-30T10:00:00Z","end":"2025-04-06T10:00:00Z","value":60}"#, true),
        (#"{"type":"heartRate","start":"2025-03-30T10:00:00Z","end":"2025-03-30T09:59:59.999Z","value":60}"#, false),
        (#"{"type":"heartRate","start":"2025-03-30T12:00:00+02:00","end":"2025-03-30T10:00:00Z","value":60}"#, true),
        (#"{"type":"heartRate","start":2025,"value":60}"#, false),
        (#"{"type":"heartRate","value":60}"#, false),
    ]

    @Test func edgesAreTakenOnlyWhenTheGeneralReaderAgrees() {
        var parser = FlatLineParser()
        for (line, taken) in Self.edges {
            let took = Self.agrees(line, parser: &parser)
            if let taken { #expect(took == taken, "\(line.debugDescription)") }
        }
        // Again on a parser that has read every other line first: what it remembers of earlier lines changes nothing.
        for (line, taken) in Self.edges.reversed() {
            let took = Self.agrees(line, parser: &parser)
            if let taken { #expect(took == taken, "\(line.debugDescription)") }
        }
    }

    /// A line longer than the limit is the general reader's, which refuses it, even when it would be one sample.
    @Test func aLineOverTheLimitIsDeclined() {
        var parser = FlatLineParser()
        let line =
            #"{"type":"heartRate",\#(Self.start),"#
            + String(repeating: " ", count: ImportSamplesCommand.maximumLineBytes) + #""value":60}"#
        #expect(Self.fast(line, parser: &parser) == nil)
        #expect(throws: ImportSamplesCommand.LineError.self) {
            try ImportSamplesCommand.sample(from: line, defaultSource: "d")
        }
    }

    /// Random lines, valid and not, built from the pieces a flat line has and then mutated byte by byte: for every
    /// one, the fast path declines or gives exactly the general reader's sample. Seeded, so that a failure repeats.
    @Test(arguments: [UInt64(1), 2, 3, 0x5EED])
    func randomLinesAgreeWithTheGeneralReader(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        var parser = FlatLineParser()
        var taken = 0
        var generalOnly = 0
        let count = 6_000
        for _ in 0..<count {
            var line = Array(Self.randomLine(&random).utf8)
            if random.next() % 3 == 0 { line = Self.mutated(line, &random) }
            if Self.agrees(line, parser: &parser) {
                taken += 1
            } else if let text = ImportReader.trimmed(line[...]),
                (try? ImportSamplesCommand.sample(from: text, defaultSource: "default.source")) != nil
            {
                generalOnly += 1
            }
        }
        // The generator reaches both paths, and lines only the general reader takes.
        #expect(taken > count / 10, "\(taken) taken")
        #expect(generalOnly > count / 20, "\(generalOnly) for the general reader alone")
    }

    static func randomSpace(_ random: inout SplitMix64) -> String {
        switch random.next() % 64 {
        case 0: return random.pick(["\u{0C}", "\u{A0}", "\u{FEFF}", "\u{0}"])  // no JSON space
        case 1..<16: return random.pick([" ", "\t", "\r", "  ", " \t ", "\n"])
        default: return ""
        }
    }

    static func randomDigits(_ count: Int, _ random: inout SplitMix64) -> String {
        String((0..<count).map { _ in Character(String(random.next() % 10)) })
    }

    /// A time, valid three times in four; else with any of its parts odd.
    static func randomTime(_ random: inout SplitMix64) -> String {
        let clean = random.next() % 4 != 0
        func part(_ usual: [String], _ unusual: [String]) -> String {
            clean || random.next() % 3 != 0 ? random.pick(usual) : random.pick(unusual)
        }
        let year = part(["2025", "1970", "2024", "2000"], ["1969", "0001", "9999", "0000", "25"])
        let month = part(["03", "02", "12", "01"], ["13", "00", "1"])
        let day = part(["28", "29", "01", "15"], ["00", "32", "31", "30"])
        let separator = part(["T", "t", " "], ["_", "", "TT"])
        let hour = part(["10", "00", "23", "07"], ["24", "1"])
        let minute = part(["00", "59", "30"], ["60", "5"])
        let second = part([":00", ":59", "", ":07"], [":60", ":61", ":5"])
        let fraction =
            second.isEmpty || random.next() % 2 == 0
            ? "" : "." + randomDigits(clean ? Int(random.next() % 10) + 1 : Int(random.next() % 36), &random)
        let offset = part(
            ["Z", "z", "+02:00", "-05:30", "+0530", "+23:59", "-00:00"], ["+24:00", "", "+2", "Z ", "+02:60"])
        return year + "-" + month + "-" + day + separator + hour + ":" + minute + second + fraction + offset
    }

    /// A number mostly, integers and decimals of any size; else an odd number or not one.
    static func randomValue(_ random: inout SplitMix64) -> String {
        switch random.next() % 10 {
        case 0: return String(Int64(bitPattern: random.next()) >> (random.next() % 64))
        case 1, 2: return String(random.next() % 400)
        case 3, 4:
            let whole = String(random.next() % 1_000_000 >> (random.next() % 20))
            let fraction = randomDigits(Int(random.next() % 20) + 1, &random)
            return (random.next() % 4 == 0 ? "-" : "") + whole + "." + fraction
        case 5: return random.pick(["-0", "-0.0", "0", "0.0", "1e2", "1E-2", "1.5e+3", "-", "01", "1.", ".5", "+1"])
        case 6: return random.pick(["null", "true", "\"60\"", "[60]", "{}", "nul", "6 0"])
        case 7: return String(random.next()) + String(random.next() % 1000)
        default: return String(Double(random.next() % 100_000) / 100)
        }
    }

    static func randomLine(_ random: inout SplitMix64) -> String {
        // A type with its unit mostly, else one the fast path leaves (or no type at all).
        let (type, unit) = random.pick(
            [("heartRate", "count/min"), ("stepCount", "count"), ("bodyMass", "kg"), ("activeEnergyBurned", "kcal")],
            else: [
                ("sleepAnalysis", ""), ("heartbeatSeries", "ms"), ("bloodPressure", "mmHg"), ("HeartRate", "count/min"),
                ("Type", "count"), ("", ""), ("unknownType", "count"), ("heart\\u0052ate", "count/min"),
                ("heartRate", "count/s"), ("bodyMass", "g"), ("bodyMass", "lb"), ("stepCount", ""),
                ("heartRate", "Count/min"), ("heartRate", "count\\/min"),
            ])
        let source = random.pick(
            ["org.example.app", "", "default.source", "a", "b", "x\u{7F}", "with space"],
            else: ["caf\u{E9}", "a\\u0062", "a\u{01}", String(repeating: "s", count: 257), "tab\there"])
        var fields: [(String, String)] = []
        fields.append(("type", "\"\(type)\""))
        if random.next() % 12 != 0 { fields.append(("start", "\"\(randomTime(&random))\"")) }
        if random.next() % 3 == 0 {
            fields.append(("end", random.next() % 5 == 0 ? "null" : "\"\(randomTime(&random))\""))
        }
        if random.next() % 12 != 0 { fields.append(("value", randomValue(&random))) }
        if random.next() % 2 == 0 { fields.append(("unit", random.next() % 6 == 0 ? "null" : "\"\(unit)\"")) }
        if random.next() % 2 == 0 { fields.append(("source", random.next() % 6 == 0 ? "null" : "\"\(source)\"")) }
        if random.next() % 12 == 0 {
            fields.append(
                random.pick(
                    [
                        ("subject", "\"alice\""), ("metadata", "null"), ("device", "null"), ("uuid", "null"),
                        ("Type", "\"heartRate\""), ("value", "61"), ("source", "\"again\""),
                        ("source_version", "\"1\""),
                    ]))
        }
        // Shuffled: any order of keys.
        for index in fields.indices.reversed() where index > 0 {
            fields.swapAt(index, Int(random.next() % UInt64(index + 1)))
        }
        var line = randomSpace(&random) + "{"
        for (index, (key, value)) in fields.enumerated() {
            if index > 0 { line += randomSpace(&random) + "," }
            line += randomSpace(&random) + "\"\(key)\"" + randomSpace(&random) + ":" + randomSpace(&random) + value
        }
        line += randomSpace(&random) + "}" + randomSpace(&random)
        return line
    }

    /// `line` with one to three bytes deleted, replaced or inserted (bytes JSON treats specially among them).
    static func mutated(_ line: [UInt8], _ random: inout SplitMix64) -> [UInt8] {
        var bytes = line
        let special: [UInt8] =
            Array("{}[]:,\"\\ -+.0159eEZT\t\r\u{0}\u{7F}".utf8) + [0xEF, 0xBB, 0xBF, 0xC3, 0xA9, 0x80]
        for _ in 0..<(1 + random.next() % 3) where !bytes.isEmpty {
            let position = Int(random.next() % UInt64(bytes.count))
            switch random.next() % 3 {
            case 0: bytes.remove(at: position)
            case 1: bytes[position] = random.pick(special)
            default: bytes.insert(random.pick(special), at: position)
            }
        }
        return bytes
    }

    /// A file mixing both paths gives the batches the general reader alone gives: the same samples in the same
    /// order, with the line number of each.
    @Test func aMixedFileGivesTheSameBatches() throws {
        let lines =
            (0..<30).map { index in
                let second = String(format: "%02d", index)
                switch index % 5 {
                case 0: return #"{"type":"heartRate","start":"2025-03-30T10:00:\#(second)Z","value":\#(60 + index)}"#
                case 1:
                    return #"{"type":"heartRate","start":"2025-03-30T10:00:\#(second)+01:00","value":\#(index).5}"#
                case 2:
                    return
                        #"{"type":"heartRate","start":"2025-03-30T10:00:\#(second)Z","value":70,"subject":"alice"}"#
                case 3: return #"{"type":"stepCount","start":"2025-03-30T10:00:\#(second)Z","value":3,"source":"b"}"#
                default: return "# comment \(index)"
                }
            } + [#"{"type":"heartRate","start":"2025-03-30T11:00:00Z","value":61,"unit":"count/s"}"#]
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "wearhouse-flat-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("lines.ndjson").path
        try (lines.joined(separator: "\n") + "\n").write(toFile: path, atomically: true, encoding: .utf8)
        let descriptor = open(path, O_RDONLY)
        defer { close(descriptor) }
        let reader = ImportReader(
            lines: LineReader(descriptor: descriptor, maximumLineBytes: 1 << 20), defaultSource: "default.source",
            size: 0, progress: nil)
        let batch = try #require(try reader.next())
        var expected: [(QuantitySample, Int)] = []
        for (index, line) in lines.enumerated() {
            guard let text = ImportReader.trimmed(Array(line.utf8)[...]) else { continue }
            guard
                case .quantity(let sample, keepsID: false) = try ImportSamplesCommand.sample(
                    from: text, defaultSource: "default.source")
            else { continue }
            expected.append((sample, index + 1))
        }
        let samples = batch.samples
        #expect(samples.count == expected.count)
        for (position, (sample, (want, line))) in zip(samples, expected).enumerated() {
            #expect(sample.type == want.type && sample.source == want.source && sample.subject == want.subject)
            #expect(sample.start == want.start && sample.end == want.end && sample.value == want.value)
            #expect(sample.startOffsetSeconds == want.startOffsetSeconds)
            #expect(reader.line(ofBatchIndex: position) == line)
        }
        #expect(try reader.next() == nil)
    }

    /// Through the real binary: a file mixing lines of both paths (over more than one batch, with samples named
    /// twice and a stream broken by general lines) stores what the same file stores when every line goes to the
    /// general reader (each object opened with `"metadata":null`, which that reader reads as no metadata and the
    /// fast path declines), prints the same summaries (and again on a second import: all duplicates), and refuses
    /// a bad line with the same message.
    @Test func theBinaryImportsAMixedFileAsTheGeneralReaderAlone() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "wearhouse-flat-binary-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        var lines: [String] = []
        for index in 0..<12_500 {
            let time = isoUTC(1_743_328_800 + index / 3)
            switch index % 10 {
            case 0, 1, 2, 3:
                lines.append(#"{"type":"heartRate","start":"\#(time)","value":\#(50 + index % 70)}"#)
            case 4:
                lines.append(#"{"type":"heartRate","start":"\#(time)","value":1.25,"unit":"count/s"}"#)  // general
            case 5:
                let local = isoUTC(1_743_328_800 + index / 3 + 7_200).replacingOccurrences(of: "Z", with: "+02:00")
                lines.append(#"{"type":"stepCount","start":"\#(local)","value":\#(index % 9).5,"source":"b"}"#)
            case 6:
                lines.append(#"{"type":"heartRate","start":"\#(time)","value":61,"subject":"alice"}"#)  // general
            case 7:
                // The same natural key as case 0's line before it, a duplicate within the file.
                lines.append(#"{"type":"heartRate","start":"\#(isoUTC(1_743_328_800 + (index - 7) / 3))","value":75}"#)
            case 8:
                lines.append(#"  {"value":0.1,"type":"bodyMass","unit":"kg","start":"\#(time)","source":""}\#r"#)
            default:
                lines.append(
                    #"{"type":"sleepAnalysis","start":"\#(time)","end":"\#(time)","value":"asleepDeep","source":"s"}"#)
            }
        }
        func generalOnly(_ lines: [String]) -> [String] {
            lines.map { line in
                guard let brace = line.firstIndex(of: "{") else { return line }
                return line[...brace] + #""metadata":null,"# + line[line.index(after: brace)...]
            }
        }
        /// Imports `lines` twice into a new store of `name`, and what that printed and stored.
        func run(_ name: String, _ lines: [String]) throws -> [String] {
            let place = directory.appendingPathComponent(name)
            try FileManager.default.createDirectory(at: place, withIntermediateDirectories: true)
            let store = place.appendingPathComponent("health.db").path
            let file = place.appendingPathComponent("lines.ndjson")
            try (lines.joined(separator: "\n") + "\n").write(to: file, atomically: true, encoding: .utf8)
            var printed: [String] = []
            for _ in 0..<2 {
                let result = try WearhouseRunner.run(["import-samples", "--store", store, file.path])
                printed += [
                    "\(result.status)", result.stdout,
                    result.stderr.replacingOccurrences(of: place.path, with: "DIR"),
                ]
            }
            printed.append(try WearhouseRunner.run(["export", "--store", store, "--format", "ndjson"]).stdout)
            return printed
        }
        let mixed = try run("mixed", lines)
        #expect(mixed[0] == "0", "\(mixed[2])")
        #expect(mixed[1].hasPrefix("12500 samples: "), "\(mixed[1])")
        #expect(mixed[4].hasPrefix("12500 samples: 0 inserted, "), "\(mixed[4])")
        #expect(mixed[6].split(separator: "\n").count > 5_000)
        let general = try run("general", generalOnly(lines))
        #expect(mixed == general)

        // A value the store refuses on a fast line, then a line the parser refuses after fast lines.
        var refused = lines
        refused[10_234] = #"{"type":"heartRate","start":"2025-03-30T10:00:00Z","value":-1}"#
        let refusedMixed = try run("refused-mixed", refused)
        #expect(refusedMixed[0] == "65" && refusedMixed[2].contains("lines.ndjson:10235: "), "\(refusedMixed[2])")
        #expect(refusedMixed == (try run("refused-general", generalOnly(refused))))
        var bad = lines
        bad[12_000] = #"{"type":"heartRate","start":"2025-03-30T10:00:00Z","value":60,"unit":"furlongs"}"#
        let badMixed = try run("bad-mixed", bad)
        #expect(badMixed[0] == "65" && badMixed[2].contains("lines.ndjson:12001: "), "\(badMixed[2])")
        #expect(badMixed == (try run("bad-general", generalOnly(bad))))
    }
}

extension SplitMix64 {
    /// Mostly (three times in four) one of `usual`, else one of `unusual`.
    fileprivate mutating func pick<T>(_ usual: [T], else unusual: [T]) -> T {
        next() % 4 != 0 ? pick(usual) : pick(unusual)
    }
}
