import GATT
import Support
import Testing

/// ``FieldValue/json``: the compact JSON that `wearhouse decode`, traces and logs print.
@Suite struct JSONTests {
    @Test func scalars() {
        #expect(FieldValue.null.json == "null")
        #expect(FieldValue.bool(true).json == "true")
        #expect(FieldValue.bool(false).json == "false")
        #expect(FieldValue.integer(0).json == "0")
        #expect(FieldValue.integer(-42).json == "-42")
        #expect(FieldValue.integer(.max).json == "9223372036854775807")
        #expect(FieldValue.integer(.min).json == "-9223372036854775808")
        #expect(FieldValue.int(UInt32.max).json == "4294967295")
        #expect(FieldValue.int(UInt8(7)) == .integer(7))
    }

    @Test func doubles() {
        #expect(FieldValue.double(5).json == "5.0")
        #expect(FieldValue.double(0.1).json == "0.1")
        #expect(FieldValue.double(1_684_275.1).json == "1684275.1")
        #expect(FieldValue.double(-2.5).json == "-2.5")
        #expect(FieldValue.double(1016.6015625).json == "1016.6015625")
        // Non-finite values have no JSON form.
        #expect(FieldValue.double(.infinity).json == "null")
        #expect(FieldValue.double(-.infinity).json == "null")
        #expect(FieldValue.double(.nan).json == "null")
        #expect(isJSONObject(FieldValue.object([Field("x", .double(1e300)), Field("y", .double(1e-7))]).json))
    }

    @Test func absentOptionalsPrintNull() {
        #expect(FieldValue.optional(UInt16?.none) == .null)
        #expect(FieldValue.optional(Double?.none) == .null)
        #expect(FieldValue.optional(UInt16?.some(3)) == .integer(3))
        #expect(FieldValue.optional(Double?.some(1.5)) == .double(1.5))
        let object = FieldValue.object([
            Field("energy_expended", .optional(UInt16?.none), unit: "kJ"), Field("stride", .optional(Double?.none)),
        ])
        #expect(object.json == #"{"energy_expended":null,"stride":null}"#)
    }

    /// Strings are Support's JSONWriter's (its escapes are tested in Tests/SupportTests/JSONWriterTests.swift):
    /// here only that a field's value and name go through it.
    @Test(arguments: ["plain", "say \"hi\"", "line\nfeed", "\u{0}\u{1f}", "Pulsómetro ❤️ 🏃", ""])
    func stringsAreTheWritersStrings(_ text: String) {
        var writer = JSONWriter()
        writer.string(text)
        #expect(FieldValue.string(text).json == writer.text)
        #expect(FieldValue.object([Field(text, .string(text))]).json == "{\(writer.text):\(writer.text)}")
    }

    @Test func fieldNamesAreEscapedToo() {
        let object = FieldValue.object([Field("a\"b", .integer(1)), Field("c\nd", .null)])
        #expect(object.json == #"{"a\"b":1,"c\nd":null}"#)
        #expect(isJSONObject(object.json))
    }

    @Test func listsAndNestedObjects() {
        #expect(FieldValue.list([]).json == "[]")
        #expect(FieldValue.object([]).json == "{}")
        #expect(FieldValue.list([.integer(1), .null, .bool(true), .string("x")]).json == #"[1,null,true,"x"]"#)
        let nested = FieldValue.object([
            Field("locations", .list([.object([Field("value", .integer(1)), Field("name", .string("chest"))])])),
            Field("empty", .list([])),
        ])
        #expect(nested.json == #"{"locations":[{"value":1,"name":"chest"}],"empty":[]}"#)
    }

    @Test func unitsAreNotPartOfTheJSON() {
        let object = FieldValue.object([Field("heart_rate", .integer(60), unit: "count/min")])
        #expect(object.json == #"{"heart_rate":60}"#)
    }

    @Test func decodedStringsWithControlCharactersAndInvalidUTF8RenderValidJSON() throws {
        let value = try ManufacturerNameString(decoding: h("22 5c 0a 01 ff 41"))
        let json = FieldValue.object(value.fields).json
        #expect(json == #"{"value":"\"\\\n\u0001"# + "\u{FFFD}" + #"A"}"#)
        #expect(isJSONObject(json))
    }
}
