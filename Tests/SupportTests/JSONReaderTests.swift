import Support
import Testing

/// ``JSONReader``: exact numbers, escapes and surrogate pairs, refusals that name the offset, the limits.
@Suite struct JSONReaderTests {
    static func read(_ text: String, limits: JSONLimits = JSONLimits()) throws(JSONSyntaxError) -> JSONValue {
        try JSONReader.value(Array(text.utf8), limits: limits)
    }

    /// The error `text` is refused with.
    static func refusal(_ text: String, limits: JSONLimits = JSONLimits()) -> JSONSyntaxError? {
        do throws(JSONSyntaxError) {
            _ = try read(text, limits: limits)
            return nil
        } catch {
            return error
        }
    }

    @Test func scalars() throws {
        #expect(try Self.read("null") == .null)
        #expect(try Self.read(" true ") == .bool(true))
        #expect(try Self.read("\tfalse\r\n") == .bool(false))
        #expect(try Self.read(#""text""#) == .string("text"))
        #expect(try Self.read(#""""#) == .string(""))
    }

    @Test func integersStayIntegers() throws {
        #expect(try Self.read("0") == .integer(0))
        #expect(try Self.read("-0") == .integer(0))
        #expect(try Self.read("42") == .integer(42))
        #expect(try Self.read("-1234567890123") == .integer(-1_234_567_890_123))
        #expect(try Self.read("9223372036854775807") == .integer(.max))
        #expect(try Self.read("-9223372036854775808") == .integer(.min))
        // Beyond Int64: the nearest double.
        #expect(try Self.read("9223372036854775808") == .double(9_223_372_036_854_775_808))
        #expect(try Self.read("123456789012345678901234") == .double(1.2345678901234568e23))
        // A fraction or an exponent makes a double, even when it is whole.
        #expect(try Self.read("5.0") == .double(5))
        #expect(try Self.read("1E3") == .double(1_000))
        #expect(try Self.read("-1.5e-3") == .double(-0.0015))
        #expect(try Self.read("2.5E+20") == .double(2.5e20))
    }

    @Test func doublesReadBackWithTheSameBits() throws {
        var random = SplitMix64(seed: 0x4A53_4F4E)
        var values: [Double] = [
            0.1, 1.0 / 3, -0.0, .leastNonzeroMagnitude, .leastNormalMagnitude, .greatestFiniteMagnitude,
            -.greatestFiniteMagnitude,
            9_007_199_254_740_994, 1016.6015625, 1e-7, 1e16,
        ]
        for _ in 0..<5_000 {
            let value = Double(bitPattern: random.next())
            if value.isFinite { values.append(value) }
        }
        for value in values {
            var writer = JSONWriter()
            writer.double(value)
            let read = try JSONReader.value(writer.bytes)
            guard case .double(let back) = read else {
                Issue.record("\(writer.text) read as \(read)")
                continue
            }
            #expect(back.bitPattern == value.bitPattern, "\(writer.text)")
        }
    }

    @Test func numbersJSONDoesNotHaveAreRefused() throws {
        let cases: [(String, Int, String)] = [
            ("01", 1, "does not start with 0"),
            ("-01", 2, "does not start with 0"),
            ("1.", 2, "fraction needs digits"),
            (".5", 0, "unexpected character"),
            ("1e", 2, "exponent needs digits"),
            ("1e+", 3, "exponent needs digits"),
            ("-", 1, "needs digits"),
            ("-x", 1, "needs digits"),
            ("+1", 0, "unexpected character"),
            ("1e400", 0, "beyond a double's range"),
            ("-1e400", 0, "beyond a double's range"),
            (String(repeating: "9", count: 400), 0, "beyond a double's range"),
            ("0x10", 1, "after the value"),
            ("NaN", 0, "unexpected character"),
            ("Infinity", 0, "unexpected character"),
        ]
        for (text, offset, reason) in cases {
            let error = Self.refusal(text)
            #expect(error?.offset == offset, "\(text): \(String(describing: error))")
            #expect(error?.reason.contains(reason) == true, "\(text): \(String(describing: error))")
        }
        // Underflow is no error: the nearest double is 0 or a subnormal.
        #expect(try Self.read("1e-400") == .double(0))
    }

    @Test func escapesAreDecoded() throws {
        #expect(try Self.read(#""\"\\\/\b\f\n\r\t""#) == .string("\"\\/\u{8}\u{c}\n\r\t"))
        #expect(try Self.read(#""\u0041\u00e9\u00E9\u20ac\u0000""#) == .string("Aéé€\u{0}"))
        #expect(try Self.read(#""before \n after""#) == .string("before \n after"))
        #expect(try Self.read("\"raw ünïcødé ❤️\"") == .string("raw ünïcødé ❤️"))
    }

    @Test func surrogatePairsAreOneCharacter() throws {
        #expect(try Self.read(#""\ud83c\udfc3""#) == .string("🏃"))
        #expect(try Self.read(#""\uD83C\uDFC3""#) == .string("🏃"))
        #expect(try Self.read(#""run \ud83c\udfc3 \u2764\ufe0f""#) == .string("run 🏃 ❤️"))
        #expect(try Self.read(#""\udbff\udfff""#) == .string("\u{10FFFF}"))
        #expect(try Self.read(#""\ud800\udc00""#) == .string("\u{10000}"))
    }

    /// Lone surrogates name no character: refused, at the backslash of the escape that is alone.
    @Test func loneSurrogatesAreRefused() {
        let cases: [(String, Int, String)] = [
            (#""\ud83c""#, 1, "high surrogate without a low one"),
            (#""\ud83cx""#, 1, "high surrogate without a low one"),
            (#""ab\ud83c\u0041""#, 3, "high surrogate without a low one"),
            (#""\ud83c\ud83c""#, 1, "high surrogate without a low one"),
            (#""\ud83c\n""#, 1, "high surrogate without a low one"),
            (#""\udfc3""#, 1, "low surrogate without a high one"),
            (#""x\udc00\ud800""#, 2, "low surrogate without a high one"),
            (#""\ud83c\udfc""#, 12, "bad hex digit"),
        ]
        for (text, offset, reason) in cases {
            let error = Self.refusal(text)
            #expect(error?.offset == offset, "\(text): \(String(describing: error))")
            #expect(error?.reason.contains(reason) == true, "\(text): \(String(describing: error))")
        }
    }

    @Test func badStringsAreRefused() {
        let cases: [(String, Int, String)] = [
            (#""abc"#, 4, "ends inside a string"),
            ("\"a\u{1}b\"", 2, "control character"),
            ("\"a\nb\"", 2, "control character"),
            (#""\x""#, 1, "unknown escape"),
            (#""\u12""#, 3, "short \\u escape"),
            (#""\u12g4""#, 5, "bad hex digit"),
            (#""\u+041""#, 3, "bad hex digit"),
            (#""\"#, 2, "ends inside an escape"),
        ]
        for (text, offset, reason) in cases {
            let error = Self.refusal(text)
            #expect(error?.offset == offset, "\(text): \(String(describing: error))")
            #expect(error?.reason.contains(reason) == true, "\(text): \(String(describing: error))")
        }
    }

    /// Bytes that are not UTF-8 (no writer here produces them) read as U+FFFD, escaped strings or not.
    @Test func bytesThatAreNotUTF8ReadAsReplacementCharacters() throws {
        let plain: [UInt8] = [0x22, 0x41, 0xFF, 0x42, 0x22]
        #expect(try JSONReader.value(plain) == .string("A\u{FFFD}B"))
        let escaped: [UInt8] = [0x22, 0x5C, 0x6E, 0xC3, 0x22]
        #expect(try JSONReader.value(escaped) == .string("\n\u{FFFD}"))
    }

    @Test func objectsKeepTheirOrderAndDuplicates() throws {
        let value = try Self.read(#" { "b" : 1 , "a" : [ ] , "b" : { "c" : null } } "#)
        #expect(
            value
                == .object([
                    JSONField(key: "b", value: .integer(1)), JSONField(key: "a", value: .array([])),
                    JSONField(key: "b", value: .object([JSONField(key: "c", value: .null)])),
                ]))
        #expect(value["b"]?["c"] == .null)
        #expect(value["a"] == .array([]))
        #expect(value["missing"] == nil)
        #expect(JSONValue.array([])["a"] == nil)
        #expect(try Self.read("{}") == .object([]))
        #expect(
            try Self.read("[1,[2,[3]],\"x\"]")
                == .array([.integer(1), .array([.integer(2), .array([.integer(3)])]), .string("x")]))
        #expect(try JSONReader.object(Array(#"{"k":true}"#.utf8)) == [JSONField(key: "k", value: .bool(true))])
    }

    @Test func accessors() throws {
        let value = try Self.read(#"{"s":"x","b":false,"i":3,"d":2.5,"n":null}"#)
        #expect(value["s"]?.string == "x")
        #expect(value["b"]?.bool == false)
        #expect(value["i"]?.number == 3)
        #expect(value["d"]?.number == 2.5)
        #expect(value["n"]?.number == nil)
        #expect(value["s"]?.bool == nil)
        #expect(value["i"]?.string == nil)
    }

    @Test func badStructureIsRefusedWithTheOffset() {
        let cases: [(String, Int, String)] = [
            ("", 0, "ends where a value was expected"),
            ("   ", 3, "ends where a value was expected"),
            ("[1,]", 3, "unexpected character where a value was expected"),
            ("[1 2]", 3, "expected ',' or ']'"),
            ("[1", 2, "ends inside an array"),
            (#"{"a":1,}"#, 7, "expected a key in double quotes"),
            (#"{"a" 1}"#, 5, "expected ':' after the key"),
            (#"{"a":1 "b":2}"#, 7, "expected ',' or '}'"),
            (#"{"a":1"#, 6, "ends inside an object"),
            (#"{"a""#, 4, "ends inside an object"),
            ("{a:1}", 1, "expected a key in double quotes"),
            ("tru", 0, "unknown literal"),
            ("nul", 0, "unknown literal"),
            ("true false", 5, "after the value"),
            ("{} x", 3, "after the value"),
            ("// comment\n1", 0, "unexpected character"),
        ]
        for (text, offset, reason) in cases {
            let error = Self.refusal(text)
            #expect(error?.offset == offset, "\(text): \(String(describing: error))")
            #expect(error?.reason.contains(reason) == true, "\(text): \(String(describing: error))")
        }
        #expect(throws: JSONSyntaxError(offset: 0, reason: "expected '{' at the start")) {
            try JSONReader.object(Array("[1]".utf8))
        }
        #expect(throws: JSONSyntaxError(offset: 3, reason: "unexpected text after the object")) {
            try JSONReader.object(Array("{} x".utf8))
        }
    }

    @Test func depthAndLengthAreBounded() throws {
        let limits = JSONLimits(maximumDepth: 3, maximumLength: 32)
        #expect(try Self.read("[[[1]]]", limits: limits) == .array([.array([.array([.integer(1)])])]))
        #expect(try Self.read(#"{"a":{"b":[]}}"#, limits: limits)["a"]?["b"] == .array([]))
        let deep = Self.refusal("[[[[1]]]]", limits: limits)
        #expect(deep == JSONSyntaxError(offset: 3, reason: "nested more than 3 levels"))
        #expect(Self.refusal(#"{"a":{"b":{"c":[1]}}}"#, limits: limits)?.offset == 15)
        // The default limits: 64 levels.
        #expect(Self.refusal(String(repeating: "[", count: 100_000))?.reason == "nested more than 64 levels")
        #expect(Self.refusal(String(repeating: "[", count: 64) + String(repeating: "]", count: 64)) == nil)

        let long = "\"" + String(repeating: "x", count: 40) + "\""
        #expect(
            Self.refusal(long, limits: limits)
                == JSONSyntaxError(offset: 32, reason: "the text is 42 bytes, more than the 32 read"))
        #expect(try Self.read(long) == .string(String(repeating: "x", count: 40)))
    }

    @Test func readsStrings() throws {
        #expect(try JSONReader.value(#"{"k":[1,"v"]}"#)["k"] == .array([.integer(1), .string("v")]))
        #expect(throws: JSONSyntaxError.self) { try JSONReader.value("{") }
    }

    /// What the writer writes, the reader reads back as the same value.
    @Test func randomValuesRoundTripThroughTheWriter() throws {
        var random = SplitMix64(seed: 0x524F_554E)
        let strings = ["", "a", "say \"hi\"", "back\\slash", "tab\tnew\nline\u{1}\u{1f}", "ünïcødé ❤️ 🏃", "/", "\u{7f}"]
        func value(_ depth: Int) -> JSONValue {
            switch Int.random(in: 0..<(depth > 3 ? 5 : 7), using: &random) {
            case 0: return .null
            case 1: return .bool(Bool.random(using: &random))
            case 2: return .integer(Int64(bitPattern: random.next()) >> Int.random(in: 0..<64, using: &random))
            case 3:
                let double = Double(bitPattern: random.next())
                return .double(double.isFinite ? double : 0.5)
            case 4: return .string(strings.randomElement(using: &random) ?? "")
            case 5: return .array((0..<Int.random(in: 0..<4, using: &random)).map { _ in value(depth + 1) })
            default:
                return .object(
                    (0..<Int.random(in: 0..<4, using: &random)).map { _ in
                        JSONField(key: strings.randomElement(using: &random) ?? "", value: value(depth + 1))
                    })
            }
        }
        for _ in 0..<2_000 {
            let original = value(0)
            var writer = JSONWriter()
            writer.value(original)
            #expect(try JSONReader.value(writer.bytes) == original, "\(writer.text)")
        }
    }

    @Test func randomBytesNeverTrapAndErrorsStayInsideTheText() {
        var random = SplitMix64(seed: 0x4259_5445)
        let alphabet = Array(#"{}[]",:0123456789-+.eEtrufalsn\ud83cdfc3x "#.utf8) + [0, 0x1F, 0x80, 0xFF]
        for _ in 0..<20_000 {
            let count = Int.random(in: 0...40, using: &random)
            let bytes = (0..<count).map { _ in alphabet.randomElement(using: &random) ?? 0 }
            do throws(JSONSyntaxError) {
                _ = try JSONReader.value(bytes)
            } catch {
                #expect(error.offset >= 0 && error.offset <= bytes.count, "\(bytes)")
            }
        }
    }
}
