import GATT
import Support
import Testing

/// Current Time 0x2A2B (Current Time Service 0x1805), User Index 0x2A9A and User Control Point 0x2A9F (User Data
/// Service 0x181C): `docs/gatt-health-devices.md`. The vectors are built by hand from the layouts there. The
/// generic properties (round trips, strict prefixes, random bytes) run over these types in ``PropertyTests``.
@Suite struct UserDataAndCurrentTimeTests {
    @Test func currentTimeVector() throws {
        // ea 07 = 2026, 0c = December, 02 = 2nd, 07 1e 05 = 07:30:05, 03 = Wednesday, 80 = 128/256 s,
        // 0d = manual time update (bit 0) + change of time zone (bit 2) + change of DST (bit 3).
        let value = try CurrentTime(decoding: h(UserDataVectors.currentTime))
        #expect(value.dateTime == DateTime(year: 2026, month: 12, day: 2, hours: 7, minutes: 30, seconds: 5))
        #expect(value.dayOfWeek == 3 && value.dayOfWeekName == "wednesday")
        #expect(value.fractions256 == 128 && value.fractionSeconds == 0.5)
        #expect(value.adjustReason == [.manualTimeUpdate, .changeOfTimeZone, .changeOfDST])
        #expect(value.adjustReason.reservedBits == 0)
        #expect(value.encoded() == h(UserDataVectors.currentTime))
        #expect(
            FieldValue.object(value.fields).json
                == #"{"date_time":"2026-12-02T07:30:05","complete":true,"day_of_week":"wednesday","#
                + #""day_of_week_value":3,"fractions256":128,"fraction":0.5,"adjust_reason":{"value":13,"#
                + #""set":["manual_time_update","change_of_time_zone","change_of_dst"]}}"#)
    }

    @Test func currentTimeKeepsUnknownAndReservedValues() throws {
        // 00 00 00 00 00 00 00 = unknown date, midnight; 09 = reserved day of week; ff = 255/256 s;
        // f2 = external reference time update (bit 1) + reserved bits 4-7. DecodingPolicy.currentTimeValues.
        let value = try CurrentTime(decoding: h(UserDataVectors.currentTimeReserved))
        #expect(value.dateTime.hasUnknownDate && !value.dateTime.isComplete)
        #expect(value.dayOfWeek == 9 && value.dayOfWeekName == "reserved")
        #expect(value.fractions256 == 255)
        #expect(value.adjustReason.contains(.externalReferenceTimeUpdate))
        #expect(value.adjustReason.reservedBits == 0xF0)
        #expect(
            value.adjustReason.names == [
                "external_reference_time_update", "reserved_bit_4", "reserved_bit_5", "reserved_bit_6",
                "reserved_bit_7",
            ])
        #expect(value.encoded() == h(UserDataVectors.currentTimeReserved))
        // Day 0 is "unknown", 7 is Sunday.
        #expect(CurrentTime(dateTime: value.dateTime).dayOfWeekName == "unknown")
        #expect(CurrentTime(dateTime: value.dateTime, dayOfWeek: 7).dayOfWeekName == "sunday")
    }

    @Test func currentTimeIsExactlyTenBytes() {
        // DecodingPolicy.trailingBytes: a fixed-size value must have its size.
        #expect(
            decodeError(CurrentTime.self, h("ea 07 0c 02 07 1e 05 03 80")) == .invalidLength(expected: 10, actual: 9))
        #expect(
            decodeError(CurrentTime.self, h(UserDataVectors.currentTime + " 00"))
                == .invalidLength(expected: 10, actual: 11))
        #expect(decodeError(CurrentTime.self, []) == .invalidLength(expected: 10, actual: 0))
    }

    @Test func userIndex() throws {
        // 03 = user 3; ff = unknown user.
        let three = try UserIndex(decoding: h("03"))
        #expect(three.rawValue == 3 && !three.isUnknown)
        let unknown = try UserIndex(decoding: h("ff"))
        #expect(unknown.isUnknown && unknown.rawValue == UserIndex.unknown)
        #expect(FieldValue.object(unknown.fields).json == #"{"value":255,"unknown_user":true}"#)
        #expect(decodeError(UserIndex.self, h("03 00")) == .invalidLength(expected: 1, actual: 2))
        #expect(decodeError(UserIndex.self, []) == .invalidLength(expected: 1, actual: 0))
    }

    @Test func userControlPointRequests() throws {
        // 01 = register new user, 0f 27 = consent code 9999 (0x270F), the largest valid one.
        let register = try UserControlPoint(decoding: h("01 0f 27"))
        #expect(register == .registerNewUser(consentCode: 9999))
        #expect(register.consentCodeIsValid == true)
        // 02 = consent, 03 = user 3, 2a 00 = consent code 42.
        let consent = try UserControlPoint(decoding: h("02 03 2a 00"))
        #expect(consent == .consent(userIndex: 3, consentCode: 42))
        // 03 = delete user data, 04 = list all users: no parameter.
        #expect(try UserControlPoint(decoding: h("03")) == .deleteUserData)
        #expect(try UserControlPoint(decoding: h("04")) == .listAllUsers)
        // 05 = delete user(s), 02 = user 2.
        let delete = try UserControlPoint(decoding: h("05 02"))
        #expect(delete == .deleteUsers(userIndex: 2) && delete.opCode == .deleteUsers)
        #expect(delete.consentCodeIsValid == nil)
        for sample in ["01 0f 27", "02 03 2a 00", "03", "04", "05 02"] {
            #expect(try UserControlPoint(decoding: h(sample)).encoded() == h(sample))
        }
        #expect(
            FieldValue.object(consent.fields).json
                == #"{"op_code":"consent","op_code_value":2,"parameter":{"user_index":3,"consent_code":42,"#
                + #""consent_code_valid":true}}"#)
    }

    @Test func aConsentCodeAbove9999IsFlaggedNotRejected() throws {
        // 01 = register new user, 10 27 = 10000. DecodingPolicy.userControlPointParameters.
        let value = try UserControlPoint(decoding: h("01 10 27"))
        #expect(value.parameter == .consentCode(10_000))
        #expect(value.consentCodeIsValid == false)
        #expect(value.encoded() == h("01 10 27"))
    }

    @Test func userControlPointResponses() throws {
        // 20 = response code, 01 = to register new user, 01 = success, 03 = the new user's index.
        let registered = try UserControlPoint(decoding: h("20 01 01 03"))
        #expect(registered == .registered(userIndex: 3))
        #expect(registered.registeredUserIndex == 3)
        #expect(registered.response?.request == 1 && registered.response?.value == .success)
        // 20, 02 = to consent, 05 = user not authorized.
        let refused = try UserControlPoint(decoding: h("20 02 05"))
        #expect(refused == .response(to: .consent, .userNotAuthorized))
        #expect(refused.registeredUserIndex == nil)
        #expect(
            FieldValue.object(refused.fields).json
                == #"{"op_code":"response_code","op_code_value":32,"parameter":{"request_op_code":"consent","#
                + #""response_value":"user_not_authorized"}}"#)
        // Every defined response value by name.
        let names = (1...5).map { (value: UInt8) in
            UserControlPoint(opCode: 0x20, parameter: .response(requestOpCode: 3, value: value))
        }.map { point -> FieldValue? in
            guard case .object(let fields) = point.fields[2].value else { return nil }
            return fields[1].value
        }
        #expect(
            names == [
                .string("success"), .string("op_code_not_supported"), .string("invalid_parameter"),
                .string("operation_failed"), .string("user_not_authorized"),
            ])
    }

    @Test func reservedOpCodesAndUndefinedValuesKeepTheirBytes() throws {
        // 10 = reserved op code, aa bb kept as sent.
        let reserved = try UserControlPoint(decoding: h("10 aa bb"))
        #expect(reserved.opCode == nil && reserved.parameter == .other([0xAA, 0xBB]))
        #expect(reserved.fields.first?.value == .string("reserved"))
        #expect(reserved.encoded() == h("10 aa bb"))
        // 00 alone: a reserved op code with nothing after it.
        #expect(try UserControlPoint(decoding: h("00")).parameter == .none)
        // 20 01 09: response value 9 is undefined; kept, named reserved, not read as a registration.
        let undefined = try UserControlPoint(decoding: h("20 01 09"))
        #expect(undefined.response?.request == 1 && undefined.response?.value == nil)
        #expect(undefined.registeredUserIndex == nil && undefined.encoded() == h("20 01 09"))
        // 20 07 02: op code 7 (reserved) not supported.
        let unsupported = try UserControlPoint(decoding: h("20 07 02"))
        #expect(unsupported != .response(to: .consent, .opCodeNotSupported))
        #expect(unsupported.parameter == .response(requestOpCode: 7, value: 2))
        // 20 04 01 02 00 01: list all users, success, then bytes whose layout the sources do not give: kept.
        let listed = try UserControlPoint(decoding: h("20 04 01 02 00 01"))
        #expect(listed.parameter == .response(requestOpCode: 4, value: 1, parameter: [2, 0, 1]))
        #expect(listed.encoded() == h("20 04 01 02 00 01"))
        // Bytes after a defined parameter are ignored (DecodingPolicy.trailingBytes).
        #expect(try UserControlPoint(decoding: h("05 02 ff")) == .deleteUsers(userIndex: 2))
        #expect(try UserControlPoint(decoding: h("20 01 01 03 ff")) == .registered(userIndex: 3))
    }

    @Test func truncatedUserControlPoints() {
        #expect(decodeError(UserControlPoint.self, []) == .empty)
        #expect(
            decodeError(UserControlPoint.self, h("01 0f"))
                == .truncated(field: "consent_code", offset: 1, needed: 2, available: 1))
        #expect(
            decodeError(UserControlPoint.self, h("02 03 2a"))
                == .truncated(field: "consent_code", offset: 2, needed: 2, available: 1))
        #expect(
            decodeError(UserControlPoint.self, h("02"))
                == .truncated(field: "user_index", offset: 1, needed: 1, available: 0))
        #expect(
            decodeError(UserControlPoint.self, h("05"))
                == .truncated(field: "user_index", offset: 1, needed: 1, available: 0))
        #expect(
            decodeError(UserControlPoint.self, h("20 01"))
                == .truncated(field: "response_value", offset: 2, needed: 1, available: 0))
        // A successful register new user without the new index is truncated, not a response without one.
        #expect(
            decodeError(UserControlPoint.self, h("20 01 01"))
                == .truncated(field: "user_index", offset: 3, needed: 1, available: 0))
    }

    @Test func catalogAndUUIDs() {
        #expect(BluetoothUUID.currentTimeService.shortValue == 0x1805)
        #expect(BluetoothUUID.userDataService.shortValue == 0x181C)
        #expect(CharacteristicCatalog.type(named: "2a2b") == CurrentTime.self)
        #expect(CharacteristicCatalog.type(named: "user index") == UserIndex.self)
        #expect(CharacteristicCatalog.type(named: "0x2A9F") == UserControlPoint.self)
    }
}

enum UserDataVectors {
    static let currentTime = "ea 07 0c 02 07 1e 05 03 80 0d"
    static let currentTimeReserved = "00 00 00 00 00 00 00 09 ff f2"
}

extension CurrentTime: TestableCharacteristic {
    static var canonicalSamples: [String] {
        [
            UserDataVectors.currentTime, UserDataVectors.currentTimeReserved, "00 00 00 00 00 00 00 00 00 00",
            "ff ff ff ff ff ff ff ff ff ff",
        ]
    }
    static var fixedLength: Int? { 10 }
    static func random(using rng: inout SplitMix64) -> CurrentTime {
        CurrentTime(
            dateTime: .random(using: &rng), dayOfWeek: rng.uint8(), fractions256: rng.uint8(),
            adjustReason: AdjustReason(rawValue: rng.uint8()))
    }
}

extension UserIndex: TestableCharacteristic {
    static var canonicalSamples: [String] { ["00", "03", "fe", "ff"] }
    static var fixedLength: Int? { 1 }
    static func random(using rng: inout SplitMix64) -> UserIndex { UserIndex(rawValue: rng.uint8()) }
}

extension UserControlPoint: TestableCharacteristic {
    static var canonicalSamples: [String] {
        [
            "01 0f 27", "01 10 27", "02 03 2a 00", "03", "04", "05 02", "20 01 01 03", "20 02 05", "20 01 09",
            "20 07 02", "20 04 01 02 00 01", "10 aa bb", "00", "ff 01",
        ]
    }

    static func random(using rng: inout SplitMix64) -> UserControlPoint {
        switch rng.next() % 8 {
        case 0: return .registerNewUser(consentCode: rng.uint16())
        case 1: return .consent(userIndex: rng.uint8(), consentCode: rng.uint16())
        case 2: return rng.bool() ? .deleteUserData : .listAllUsers
        case 3: return .deleteUsers(userIndex: rng.uint8())
        case 4: return .registered(userIndex: rng.uint8())
        case 5, 6:
            let request = rng.uint8()
            var value = rng.uint8()
            if request == 1 && value == 1 { value = 2 }
            return UserControlPoint(
                opCode: 0x20,
                parameter: .response(
                    requestOpCode: request, value: value, parameter: rng.bytes(count: Int(rng.next() % 4))))
        default:
            var opCode = rng.uint8()
            while (1...5).contains(opCode) || opCode == 0x20 { opCode = rng.uint8() }
            return UserControlPoint(opCode: opCode, parameter: .other(rng.bytes(count: Int(rng.next() % 4))))
        }
    }

    /// What the layout does not define is "the bytes there are": a prefix keeps fewer of them.
    static func isDocumentedShorterForm(_ shorter: Self, of full: Self) -> Bool {
        guard shorter.opCodeValue == full.opCodeValue, full.encoded().starts(with: shorter.encoded()) else {
            return false
        }
        switch (full.parameter, shorter.parameter) {
        case (.other, .none), (.other, .other): return true
        case (.response(let request, let value, let rest), .response(let shortRequest, let shortValue, _)):
            return request == shortRequest && value == shortValue && !rest.isEmpty && !(request == 1 && value == 1)
        default: return false
        }
    }
}
