import GATT
import Support
import TestSupport
import Testing

/// Device Information Service strings, System ID 0x2A23 and PnP ID 0x2A50 (`docs/gatt-policy.md`, Mi Band 4
/// values from its "Values seen on real devices").
@Suite struct DeviceInformationTests {
    static let miBandStrings: [(String, String)] = [
        ("56312e302e392e3730", "V1.0.9.70"),  // 2A28 Software Revision
        ("56302e32352e31392e35", "V0.25.19.5"),  // 2A27 Hardware Revision
        ("383663356466643565666638", "86c5dfd5eff8"),  // 2A25 Serial Number
        ("4d6920536d6172742042616e642034", "Mi Smart Band 4"),  // Device Name text, as a string value
    ]

    @Test(arguments: miBandStrings)
    func miBand4Strings(_ hex: String, _ text: String) throws {
        #expect(try SoftwareRevisionString(decoding: h(hex)).value == text)
        #expect(try HardwareRevisionString(decoding: h(hex)).value == text)
        #expect(try SerialNumberString(decoding: h(hex)).value == text)
        #expect(try ManufacturerNameString(decoding: h(hex)).value == text)
        #expect(try ModelNumberString(decoding: h(hex)).value == text)
        #expect(try FirmwareRevisionString(decoding: h(hex)).value == text)
        #expect(SerialNumberString(text).encoded() == h(hex))
    }

    static let policyCases: [(String, String)] = [
        ("", ""),  // "" is valid
        ("00", ""),
        ("00 41 42 43", ""),  // NUL first: empty, the rest is garbage
        ("50 6f 6c 61 72 00 00 00 00 00", "Polar"),  // fixed-size NUL padding
        ("48 31 30 00 ff fe 41", "H10"),  // garbage (even invalid UTF-8) after the NUL is never looked at
        ("41 ff 42", "A\u{FFFD}B"),  // invalid byte replaced
        ("e2 82 41", "\u{FFFD}A"),  // truncated 3-byte sequence: one maximal subpart, one U+FFFD
        ("f0 9f 98", "\u{FFFD}"),  // truncated 4-byte sequence at the end
        ("c0 af", "\u{FFFD}\u{FFFD}"),  // overlong: C0 is never valid, each byte replaced
        ("ed a0 80", "\u{FFFD}\u{FFFD}\u{FFFD}"),  // an encoded surrogate: three replacements
        ("80 80", "\u{FFFD}\u{FFFD}"),  // lone continuation bytes
        ("50 75 6c 73 c3 b3 6d 65 74 72 6f", "Pulsómetro"),
        ("e2 9d a4 ef b8 8f", "❤️"),
        ("20 20 20", "   "),  // spaces are kept (no trimming)
        ("0a 09", "\n\t"),  // control characters are kept
    ]

    @Test(arguments: policyCases)
    func stringPolicy(_ hex: String, _ text: String) throws {
        let value = try ManufacturerNameString(decoding: h(hex))
        #expect(value.value == text)
        #expect(Array(value.value.unicodeScalars) == Array(text.unicodeScalars))
    }

    @Test func stringsNeverThrow() {
        var rng = SplitMix64(seed: 0x5EED)
        for _ in 0..<2_000 {
            let bytes = rng.bytes(count: Int.random(in: 0...64, using: &rng))
            #expect(decodeError(ModelNumberString.self, bytes) == nil, "\(spaced(bytes))")
        }
    }

    @Test func stringFieldsAndEncoding() throws {
        let value = try FirmwareRevisionString(decoding: h("56312e302e392e3730"))
        #expect(value.fields == [Field("value", .string("V1.0.9.70"))])
        #expect(FieldValue.object(value.fields).json == #"{"value":"V1.0.9.70"}"#)
        #expect(
            FieldValue.object(ManufacturerNameString("Say \"hi\"\n").fields).json
                == #"{"value":"Say \"hi\"\n"}"#)
        #expect(ModelNumberString("").encoded() == [])
        #expect(ModelNumberString("❤").encoded() == h("e2 9d a4"))
    }

    @Test func stringTypesHaveTheirUUIDsAndNames() {
        let expected: [(any DeviceInformationString.Type, UInt16, String)] = [
            (ManufacturerNameString.self, 0x2A29, "manufacturer-name-string"),
            (ModelNumberString.self, 0x2A24, "model-number-string"),
            (SerialNumberString.self, 0x2A25, "serial-number-string"),
            (HardwareRevisionString.self, 0x2A27, "hardware-revision-string"),
            (FirmwareRevisionString.self, 0x2A26, "firmware-revision-string"),
            (SoftwareRevisionString.self, 0x2A28, "software-revision-string"),
        ]
        for (type, short, name) in expected {
            #expect(type.uuid == BluetoothUUID(short))
            #expect(type.uuid.shortValue == short)
            #expect(type.name == name)
        }
    }

    // MARK: System ID

    @Test func systemIDSpecificationExample() throws {
        // OUI 0x123456, company-assigned 0x9ABCDE -> 0x123456FFFE9ABCDE, wire `de bc 9a fe ff 56 34 12`.
        let value = try SystemID(decoding: h("de bc 9a fe ff 56 34 12"))
        #expect(value.manufacturerIdentifier == 0xFF_FE9A_BCDE)
        #expect(value.organizationallyUniqueIdentifier == 0x12_3456)
        #expect(value.value == 0x1234_56FF_FE9A_BCDE)
        #expect(
            FieldValue.object(value.fields).json == """
                {"manufacturer_identifier":\(0xFF_FE9A_BCDE as UInt64),"organizationally_unique_identifier":\
                \(0x12_3456 as UInt32),"value":"123456fffe9abcde"}
                """)
        #expect(
            SystemID(manufacturerIdentifier: 0xFF_FE9A_BCDE, organizationallyUniqueIdentifier: 0x12_3456).encoded()
                == h("de bc 9a fe ff 56 34 12"))
    }

    @Test func systemIDFromTheMiBand4IsNotRepaired() throws {
        // `e12c9ffffe0bf144`: the fffe filler arrives byte-swapped; decode strictly per layout.
        let value = try SystemID(decoding: h("e1 2c 9f ff fe 0b f1 44"))
        #expect(value.manufacturerIdentifier == 0xFE_FF9F_2CE1)
        #expect(value.organizationallyUniqueIdentifier == 0x44_F10B)
        #expect(value.value == 0x44F1_0BFE_FF9F_2CE1)
        #expect(value.fields.last?.value == .string("44f10bfeff9f2ce1"))
        #expect(value.encoded() == h("e1 2c 9f ff fe 0b f1 44"))
    }

    @Test func systemIDValueKeepsLeadingZeros() throws {
        let value = try SystemID(decoding: h("01 00 00 00 00 00 00 00"))
        #expect(value.fields.last?.value == .string("0000000000000001"))
    }

    @Test func systemIDInitializerMasksToFieldWidths() {
        let value = SystemID(manufacturerIdentifier: .max, organizationallyUniqueIdentifier: .max)
        #expect(value.manufacturerIdentifier == 0xFF_FFFF_FFFF)
        #expect(value.organizationallyUniqueIdentifier == 0xFF_FFFF)
        #expect(value.encoded() == h("ff ff ff ff ff ff ff ff"))
    }

    @Test(arguments: ["", "de", "de bc 9a fe ff 56 34", "de bc 9a fe ff 56 34 12 00"])
    func systemIDOfTheWrongLengthIsRejected(_ hex: String) {
        #expect(throws: DecodeError.invalidLength(expected: 8, actual: h(hex).count)) {
            try SystemID(decoding: h(hex))
        }
    }

    // MARK: PnP ID

    @Test func pnpIDFromTheMiBand4() throws {
        let value = try PnPID(decoding: h("01 57 01 24 00 01 01"))
        #expect(value == PnPID(vendorIDSource: 1, vendorID: 0x0157, productID: 0x0024, productVersion: 0x0101))
        #expect(value.vendorIDSourceName == "bluetooth_sig")
        #expect(
            FieldValue.object(value.fields).json == """
                {"vendor_id_source":1,"vendor_id_source_name":"bluetooth_sig","vendor_id":343,"product_id":36,\
                "product_version":257}
                """)
        #expect(value.encoded() == h("01 57 01 24 00 01 01"))
    }

    @Test(arguments: [(UInt8(0), "reserved"), (1, "bluetooth_sig"), (2, "usb_if"), (3, "reserved"), (255, "reserved")])
    func pnpVendorIDSource(_ source: UInt8, _ name: String) throws {
        // Reserved sources are kept and named, not rejected.
        let value = try PnPID(decoding: [source, 0x6B, 0x1D, 0x46, 0x02, 0x00, 0x01])
        #expect(value.vendorIDSource == source)
        #expect(value.vendorIDSourceName == name)
        #expect(value.vendorID == 0x1D6B)
        #expect(value.productID == 0x0246)
        #expect(value.productVersion == 0x0100)
    }

    @Test(arguments: ["", "01", "01 57 01 24 00 01", "01 57 01 24 00 01 01 00"])
    func pnpIDOfTheWrongLengthIsRejected(_ hex: String) {
        #expect(throws: DecodeError.invalidLength(expected: 7, actual: h(hex).count)) {
            try PnPID(decoding: h(hex))
        }
    }

    @Test func catalogMetadata() {
        #expect(SystemID.uuid.description == "00002a23-0000-1000-8000-00805f9b34fb")
        #expect(PnPID.uuid.description == "00002a50-0000-1000-8000-00805f9b34fb")
        #expect(SystemID.name == "system-id")
        #expect(PnPID.name == "pnp-id")
    }
}
