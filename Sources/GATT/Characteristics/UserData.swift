/// User Index (0x2A9A, User Data Service 0x181C): which of a multi-user device's users the data belongs to.
/// One byte: 0-254 as the device's user list assigns them, 255 = unknown user. Weight, body composition and
/// blood pressure measurements embed the same byte as their user ID. `docs/gatt-health-devices.md`.
public struct UserIndex: CharacteristicValue, Hashable {
    public static let uuid = BluetoothUUID.userIndex
    public static let name = "user-index"

    /// 0xFF: the device does not know who stepped on or put the cuff on.
    public static let unknown: UInt8 = 0xFF

    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public init(decoding bytes: borrowing [UInt8]) throws(DecodeError) {
        rawValue = try decodeSingleByte(bytes)
    }

    public var isUnknown: Bool { rawValue == Self.unknown }
    public func encoded() -> [UInt8] { [rawValue] }
    public var fields: [Field] { [Field("value", .int(rawValue)), Field("unknown_user", .bool(isUnknown))] }
}

/// User Control Point (0x2A9F, User Data Service 0x181C, written with a response and indicated): how a collector
/// registers a user on a multi-user device, proves consent for one, and deletes users' data.
/// `docs/gatt-health-devices.md`.
///
/// ```
/// offset  size  field
/// 0       1     op code     1 register new user, 2 consent, 3 delete user data, 4 list all users,
///                           5 delete user(s), 0x20 response code; others reserved
/// 1       var   parameter   op code 1: consent code uint16 (0-9999); 2: user index uint8, consent code uint16;
///                           3, 4: none; 5: user index uint8; 0x20: request op code uint8, response value uint8
///                           (1 success, 2 op code not supported, 3 invalid parameter, 4 operation failed,
///                           5 user not authorized), then for a successful register new user the new user index
/// ```
///
/// What the layout does not define is kept as its bytes and re-encodes unchanged: the rest after a reserved op
/// code (``UCPParameter/other(_:)``), and a response's parameter other than the new user's index
/// (``DecodingPolicy/userControlPointParameters``). A defined parameter that ends early is truncated; bytes after
/// it are ignored (``DecodingPolicy/trailingBytes``). wearhouse only decodes and encodes it: the gateway runs no
/// User Data Service procedure.
public struct UserControlPoint: CharacteristicValue, Hashable {
    public static let uuid = BluetoothUUID.userControlPoint
    public static let name = "user-control-point"

    public enum OpCode: UInt8, Sendable {
        case registerNewUser = 0x01, consent, deleteUserData, listAllUsers, deleteUsers
        case responseCode = 0x20
    }

    public enum ResponseValue: UInt8, Sendable {
        case success = 0x01, opCodeNotSupported, invalidParameter, operationFailed, userNotAuthorized

        static let names = [
            "reserved", "success", "op_code_not_supported", "invalid_parameter", "operation_failed",
            "user_not_authorized",
        ]
    }

    /// The largest valid consent code (0-9999, four decimal digits).
    public static let maximumConsentCode: UInt16 = 9999

    /// The op code as sent (``opCode`` names it).
    public var opCodeValue: UInt8
    public var parameter: UCPParameter

    public init(opCode: UInt8, parameter: UCPParameter = .none) {
        self.opCodeValue = opCode
        self.parameter = parameter == .other([]) ? .none : parameter
    }

    public init(_ opCode: OpCode, _ parameter: UCPParameter = .none) {
        self.init(opCode: opCode.rawValue, parameter: parameter)
    }

    public static func registerNewUser(consentCode: UInt16) -> UserControlPoint {
        UserControlPoint(.registerNewUser, .consentCode(consentCode))
    }
    public static func consent(userIndex: UInt8, consentCode: UInt16) -> UserControlPoint {
        UserControlPoint(.consent, .consent(userIndex: userIndex, consentCode: consentCode))
    }
    public static let deleteUserData = UserControlPoint(.deleteUserData)
    public static let listAllUsers = UserControlPoint(.listAllUsers)
    public static func deleteUsers(userIndex: UInt8) -> UserControlPoint {
        UserControlPoint(.deleteUsers, .userIndex(userIndex))
    }

    /// The device's answer to a request with `request` op code (no parameter).
    public static func response(to request: OpCode, _ value: ResponseValue) -> UserControlPoint {
        UserControlPoint(.responseCode, .response(requestOpCode: request.rawValue, value: value.rawValue))
    }

    /// The device's answer to a successful register new user: the new user's index.
    public static func registered(userIndex: UInt8) -> UserControlPoint {
        UserControlPoint(
            .responseCode,
            .response(
                requestOpCode: OpCode.registerNewUser.rawValue, value: ResponseValue.success.rawValue,
                parameter: [userIndex]))
    }

    public var opCode: OpCode? { OpCode(rawValue: opCodeValue) }

    /// For a response code: the request's op code and the named result (`nil` for an undefined value).
    public var response: (request: UInt8, value: ResponseValue?)? {
        guard opCode == .responseCode, case .response(let request, let value, _) = parameter else { return nil }
        return (request, ResponseValue(rawValue: value))
    }

    /// The user index a successful register new user answers with.
    public var registeredUserIndex: UInt8? {
        guard opCode == .responseCode, case .response(let request, let value, let rest) = parameter,
            Self.isRegistration(request: request, value: value)
        else { return nil }
        return rest.first
    }

    /// Whether the consent code (op codes 1 and 2) is in 0-9999; `nil` when there is none. An out-of-range code
    /// decodes and is flagged (``DecodingPolicy/userControlPointParameters``).
    public var consentCodeIsValid: Bool? {
        switch parameter {
        case .consentCode(let code), .consent(_, let code): code <= Self.maximumConsentCode
        default: nil
        }
    }

    static func isRegistration(request: UInt8, value: UInt8) -> Bool {
        request == OpCode.registerNewUser.rawValue && value == ResponseValue.success.rawValue
    }

    public init(decoding bytes: borrowing [UInt8]) throws(DecodeError) {
        guard !bytes.isEmpty else { throw .empty }
        self = try ByteReader.read(bytes) { (reader) throws(DecodeError) in try Self(reading: &reader) }
    }

    private init(reading reader: inout ByteReader) throws(DecodeError) {
        opCodeValue = try reader.readUInt8("op_code")
        switch OpCode(rawValue: opCodeValue) {
        case .registerNewUser:
            parameter = .consentCode(try reader.readUInt16("consent_code"))
        case .consent:
            let user = try reader.readUInt8("user_index")
            parameter = .consent(userIndex: user, consentCode: try reader.readUInt16("consent_code"))
        case .deleteUserData, .listAllUsers:
            parameter = .none
        case .deleteUsers:
            parameter = .userIndex(try reader.readUInt8("user_index"))
        case .responseCode:
            let request = try reader.readUInt8("request_op_code")
            let value = try reader.readUInt8("response_value")
            let rest =
                Self.isRegistration(request: request, value: value)
                ? [try reader.readUInt8("user_index")] : reader.readRemaining()
            parameter = .response(requestOpCode: request, value: value, parameter: rest)
        case nil:
            let rest = reader.readRemaining()
            parameter = rest.isEmpty ? .none : .other(rest)
        }
    }

    public func encoded() -> [UInt8] {
        var writer = ByteWriter(capacity: 4)
        writer.write(opCodeValue)
        switch parameter {
        case .none: break
        case .consentCode(let code): writer.write(code)
        case .consent(let user, let code):
            writer.write(user)
            writer.write(code)
        case .userIndex(let user): writer.write(user)
        case .response(let request, let value, let rest):
            writer.write(request)
            writer.write(value)
            writer.write(contentsOf: rest)
        case .other(let bytes): writer.write(contentsOf: bytes)
        }
        return writer.bytes
    }

    static let opCodeNames = [
        "reserved", "register_new_user", "consent", "delete_user_data", "list_all_users", "delete_users",
    ]

    /// `register_new_user` ... `response_code`, or `reserved`.
    static func opCodeName(_ raw: UInt8) -> String {
        raw == OpCode.responseCode.rawValue ? "response_code" : enumerationName(raw, in: opCodeNames)
    }

    public var fields: [Field] {
        [
            Field("op_code", .string(Self.opCodeName(opCodeValue))),
            Field("op_code_value", .int(opCodeValue)),
            Field("parameter", parameter.fieldValue),
        ]
    }
}

/// What follows a User Control Point's op code.
public enum UCPParameter: Hashable, Sendable {
    case none
    /// Op code 1, register new user: the consent code the new user will prove consent with.
    case consentCode(UInt16)
    /// Op code 2, consent.
    case consent(userIndex: UInt8, consentCode: UInt16)
    /// Op code 5, delete user(s).
    case userIndex(UInt8)
    /// Op code 0x20: the request's op code, the response value, and what follows them: the new user's index
    /// (one byte) for a successful register new user, otherwise the bytes as sent (usually none).
    case response(requestOpCode: UInt8, value: UInt8, parameter: [UInt8] = [])
    /// What follows a reserved op code, as sent.
    case other([UInt8])

    var fieldValue: FieldValue {
        switch self {
        case .none: .null
        case .consentCode(let code):
            .object([
                Field("consent_code", .int(code)),
                Field("consent_code_valid", .bool(code <= UserControlPoint.maximumConsentCode)),
            ])
        case .consent(let user, let code):
            .object([
                Field("user_index", .int(user)), Field("consent_code", .int(code)),
                Field("consent_code_valid", .bool(code <= UserControlPoint.maximumConsentCode)),
            ])
        case .userIndex(let user): .object([Field("user_index", .int(user))])
        case .response(let request, let value, let rest):
            .object(
                [
                    Field("request_op_code", .string(UserControlPoint.opCodeName(request))),
                    Field(
                        "response_value",
                        .string(enumerationName(value, in: UserControlPoint.ResponseValue.names))),
                ]
                    + (UserControlPoint.isRegistration(request: request, value: value)
                        ? [Field("user_index", .optional(rest.first))]
                        : rest.isEmpty ? [] : [Field("response_parameter", .list(rest.map { .int($0) }))]))
        case .other(let bytes): .object([Field("bytes", .list(bytes.map { .int($0) }))])
        }
    }
}
