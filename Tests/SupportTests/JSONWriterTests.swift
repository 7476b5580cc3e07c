import Support
import Testing

/// ``JSONWriter``: commas, one way of escaping strings, exact numbers.
@Suite struct JSONWriterTests {
    static func written(_ body: (inout JSONWriter) -> Void) -> String {
        var writer = JSONWriter()
        body(&writer)
        return writer.text
    }

    @Test func commasGoInByThemselves() {
        let text = Self.written { json in
            json.beginObject()
            json.key("a")
            json.integer(1)
            json.key("list")
            json.beginArray()
            json.null()
            json.bool(true)
            json.beginObject()
            json.endObject()
            json.beginArray()
            json.endArray()
            json.string("x")
            json.endArray()
            json.key("nested")
            json.beginObject()
            json.key("b")
            json.bool(false)
            json.endObject()
            json.endObject()
        }
        #expect(text == #"{"a":1,"list":[null,true,{},[],"x"],"nested":{"b":false}}"#)
    }

    @Test func linesOfJSON() {
        var json = JSONWriter()
        json.beginObject()
        json.key("n")
        json.integer(1)
        json.endObject()
        json.endLine()
        json.beginArray()
        json.endArray()
        json.endLine()
        #expect(json.text == "{\"n\":1}\n[]\n")
    }

    /// The escapes every writer of the project used for the strings GATT decodes (docs/gatt-policy.md's device
    /// strings), the trace lines and the stored metadata.
    static let escapes: [(String, String)] = [
        ("plain", #""plain""#),
        ("say \"hi\"", #""say \"hi\"""#),
        ("back\\slash", #""back\\slash""#),
        ("line\nfeed", #""line\nfeed""#),
        ("carriage\rreturn", #""carriage\rreturn""#),
        ("tab\there", #""tab\there""#),
        ("\u{0}", #""\u0000""#),
        ("\u{1}\u{8}\u{c}\u{1f}", #""\u0001\u0008\u000c\u001f""#),
        ("\u{7f}", "\"\u{7f}\""),
        ("/", #""/""#),
        ("Pulsómetro ❤️ 🏃", "\"Pulsómetro ❤️ 🏃\""),
        ("\u{10FFFF}\u{FFFD}", "\"\u{10FFFF}\u{FFFD}\""),
        ("", #""""#),
    ]

    @Test(arguments: escapes)
    func stringsAndKeysAreEscapedOneWay(_ text: String, _ json: String) throws {
        #expect(Self.written { $0.string(text) } == json)
        #expect(Self.written { $0.value(.object([JSONField(key: text, value: .null)])) } == "{\(json):null}")
        #expect(try JSONReader.value(json) == .string(text))
    }

    @Test func numbers() {
        #expect(Self.written { $0.integer(0) } == "0")
        #expect(Self.written { $0.integer(-42) } == "-42")
        #expect(Self.written { $0.integer(.max) } == "9223372036854775807")
        #expect(Self.written { $0.integer(.min) } == "-9223372036854775808")
        #expect(Self.written { $0.double(5) } == "5.0")
        #expect(Self.written { $0.double(0.1) } == "0.1")
        #expect(Self.written { $0.double(-0.0) } == "-0.0")
        #expect(Self.written { $0.double(1e-7) } == "1e-07")
        #expect(Self.written { $0.double(2.5e20) } == "2.5e+20")
        #expect(Self.written { $0.double(.leastNonzeroMagnitude) } == "5e-324")
        #expect(Self.written { $0.double(1016.6015625) } == "1016.6015625")
        // Non-finite numbers have no JSON form.
        #expect(Self.written { $0.double(.infinity) } == "null")
        #expect(Self.written { $0.double(-.infinity) } == "null")
        #expect(Self.written { $0.double(.nan) } == "null")
        #expect(Self.written { $0.value(.array([.double(.nan), .integer(1)])) } == "[null,1]")
    }

    @Test func hexStrings() {
        #expect(Self.written { $0.hex([]) } == #""""#)
        #expect(Self.written { $0.hex([0x16, 0x3C, 0x00, 0xFF]) } == #""163c00ff""#)
    }

    @Test func values() {
        let value = JSONValue.object([
            JSONField(key: "s", value: .string("x")), JSONField(key: "i", value: .integer(-1)),
            JSONField(key: "d", value: .double(2.5)), JSONField(key: "a", value: .array([.bool(false), .null])),
            JSONField(key: "o", value: .object([])),
        ])
        #expect(Self.written { $0.value(value) } == #"{"s":"x","i":-1,"d":2.5,"a":[false,null],"o":{}}"#)
    }
}

/// ``JSONScanner``: the fast path's steps, which decline without moving rather than fail.
@Suite struct JSONScannerTests {
    static func scan<Result>(_ text: String, _ body: (inout JSONScanner) -> Result) -> (Result, Int) {
        Array(text.utf8).withUnsafeBufferPointer { bytes in
            var scanner = JSONScanner(bytes)
            let result = body(&scanner)
            return (result, scanner.index)
        }
    }

    @Test func integers() {
        let cases: [(String, Int64?, Int)] = [
            ("0", 0, 1), ("-0", 0, 2), ("7,", 7, 1), ("12345678", 12_345_678, 8), ("123456789012", 123_456_789_012, 12),
            ("9223372036854775807}", .max, 19), ("-9223372036854775808", .min, 20),
            ("9223372036854775808", nil, 0), ("-9223372036854775809", nil, 0), ("12345678901234567890", nil, 0),
            ("007", nil, 0), ("-01", nil, 0), ("1.5", nil, 0), ("1e3", nil, 0), ("2E3", nil, 0), ("-", nil, 0),
            ("x", nil, 0), ("", nil, 0),
        ]
        for (text, value, index) in cases {
            let (read, after) = Self.scan(text) { $0.integer() }
            #expect(read == value, "\(text)")
            #expect(after == index, "\(text)")
        }
    }

    /// Where the fast path reads an integer, the reader reads the same one.
    @Test func integersAgreeWithTheReader() throws {
        var random = SplitMix64(seed: 0x494E_5453)
        for _ in 0..<5_000 {
            let text = String(Int64(bitPattern: random.next()) >> Int.random(in: 0..<64, using: &random))
            let (fast, _) = Self.scan(text) { $0.integer() }
            #expect(try JSONReader.value(text) == .integer(try #require(fast)), "\(text)")
        }
    }

    @Test func strings() {
        #expect(Self.scan(#""kind":"#) { $0.plainString().map { Array($0) } } == (Array("kind".utf8), 6))
        #expect(Self.scan(#""""#) { $0.plainString()?.count } == (0, 2))
        #expect(Self.scan(#""a\"b""#) { $0.plainString()?.count } == (nil, 0))
        #expect(Self.scan("\"é\"") { $0.plainString()?.count } == (nil, 0))
        #expect(Self.scan("\"a\u{1}\"") { $0.plainString()?.count } == (nil, 0))
        #expect(Self.scan(#""open"#) { $0.plainString()?.count } == (nil, 0))
        #expect(Self.scan(#"x"a""#) { $0.plainString()?.count } == (nil, 0))
        // Unchecked: up to the next quote, whatever is in between.
        #expect(Self.scan(#""a\"b""#) { $0.rawString()?.count } == (2, 4))
        #expect(Self.scan("\"é\"") { $0.rawString()?.count } == (2, 4))
        #expect(Self.scan(#""open"#) { $0.rawString()?.count } == (nil, 0))
    }

    @Test func plainValuesAreSkipped() {
        let cases: [(String, Bool, Int)] = [
            (#""ünï",1"#, true, 7), ("true}", true, 4), ("false", true, 5), ("-12,", true, 3), ("null", false, 0),
            (#""a\nb""#, false, 0), ("\"a\u{1}\"", false, 0), ("1.5", false, 0), ("[1]", false, 0), ("tru", false, 0),
            ("", false, 0),
        ]
        for (text, skipped, index) in cases {
            #expect(Self.scan(text) { $0.skipPlainValue() } == (skipped, index), "\(text)")
        }
    }

    @Test func spaceLiteralsAndWords() {
        #expect(
            Self.scan(" \t\r\n x") { scanner -> UInt8? in
                scanner.skipSpace()
                return scanner.peek()
            } == (UInt8(ascii: "x"), 5))
        #expect(Self.scan("{}") { $0.take(UInt8(ascii: "{")) && $0.take(UInt8(ascii: "}")) && $0.atEnd } == (true, 2))
        #expect(Self.scan("{") { $0.take(UInt8(ascii: "}")) } == (false, 0))
        #expect(Self.scan("null") { $0.literal("null") } == (true, 4))
        #expect(Self.scan("nul") { $0.literal("null") } == (false, 0))
        #expect(Self.scan("\"kind\":1") { $0.word(at: 0) } == (0x313A_2264_6E69_6B22, 0))
        #expect(Self.scan("\"kind\":") { $0.word(at: 0) } == (nil, 0))
        #expect(Self.scan("\"kind\":12") { $0.word(at: 1) } == (0x3231_3A22_646E_696B, 0))
        #expect(
            Self.scan("abc") { scanner -> Bool in
                scanner.skip(10)
                return scanner.atEnd
            } == (true, 3))
    }
}
