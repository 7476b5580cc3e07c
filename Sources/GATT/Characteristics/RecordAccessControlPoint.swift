/// Record Access Control Point (0x2A52, written with a response and indicated): how a collector asks a meter for
/// its stored records (Glucose service 0x1808, and other services that store records). `docs/gatt-glucose.md`.
///
/// ```
/// offset  size  field
/// 0       1     op code     1 report stored records, 2 delete stored records, 3 abort operation,
///                           4 report number of stored records, 5 number of stored records response,
///                           6 response code
/// 1       1     operator    0 null, 1 all records, 2 less than or equal to, 3 greater than or equal to,
///                           4 within range of (inclusive), 5 first record, 6 last record
/// 2       var   operand     op codes 1, 2, 4 with operators 2 and 3: filter type (1 sequence number, 2 user
///                           facing time) and a value (uint16 or Date Time); with operator 4: filter type, min,
///                           max; op code 5: uint16 number of records; op code 6: request op code, response code
/// ```
///
/// An operand the layout does not define (another op code, operator or filter type) is kept as its bytes
/// (``RACPOperand/other(_:)``, ``DecodingPolicy/racpOperands``); bytes after a defined operand are ignored
/// (``DecodingPolicy/trailingBytes``).
public struct RecordAccessControlPoint: CharacteristicValue {
    public static let uuid = BluetoothUUID.recordAccessControlPoint
    public static let name = "record-access-control-point"

    public enum OpCode: UInt8, Sendable {
        case reportStoredRecords = 1, deleteStoredRecords, abortOperation, reportNumberOfStoredRecords
        case numberOfStoredRecordsResponse, responseCode
    }

    public enum Operator: UInt8, Sendable {
        case null = 0, allRecords, lessThanOrEqualTo, greaterThanOrEqualTo, withinRangeOf, firstRecord, lastRecord
    }

    public enum ResponseCode: UInt8, Sendable {
        case success = 1, opCodeNotSupported, invalidOperator, operatorNotSupported, invalidOperand, noRecordsFound
        case abortUnsuccessful, procedureNotCompleted, operandNotSupported

        static let names = [
            "reserved", "success", "op_code_not_supported", "invalid_operator", "operator_not_supported",
            "invalid_operand", "no_records_found", "abort_unsuccessful", "procedure_not_completed",
            "operand_not_supported",
        ]
        public var name: String { Self.names[Int(rawValue)] }
    }

    /// The op code as sent (``opCode`` names it).
    public var opCodeValue: UInt8
    /// The operator as sent (``filterOperator`` names it).
    public var operatorValue: UInt8
    public var operand: RACPOperand

    public init(opCode: UInt8, operator: UInt8, operand: RACPOperand = .none) {
        self.opCodeValue = opCode
        self.operatorValue = `operator`
        self.operand = operand == .other([]) ? .none : operand
    }

    public init(_ opCode: OpCode, _ operator: Operator, _ operand: RACPOperand = .none) {
        self.init(opCode: opCode.rawValue, operator: `operator`.rawValue, operand: operand)
    }

    /// Report stored records: all of them.
    public static let reportAllRecords = RecordAccessControlPoint(.reportStoredRecords, .allRecords)
    /// Report stored records with a sequence number of `first` or more.
    public static func reportRecords(from first: UInt16) -> RecordAccessControlPoint {
        RecordAccessControlPoint(.reportStoredRecords, .greaterThanOrEqualTo, .sequenceNumber(first))
    }
    public static let abort = RecordAccessControlPoint(.abortOperation, .null)
    public static let reportNumberOfAllRecords = RecordAccessControlPoint(.reportNumberOfStoredRecords, .allRecords)

    /// The meter's answer to a request with `request` op code.
    public static func response(to request: OpCode, _ code: ResponseCode) -> RecordAccessControlPoint {
        RecordAccessControlPoint(.responseCode, .null, .response(requestOpCode: request.rawValue, code: code.rawValue))
    }

    public var opCode: OpCode? { OpCode(rawValue: opCodeValue) }
    public var filterOperator: Operator? { Operator(rawValue: operatorValue) }

    /// For a response code: the request's op code and the named result (`nil` for a reserved code).
    public var responseCode: (request: UInt8, code: ResponseCode?)? {
        guard opCode == .responseCode, case .response(let request, let code) = operand else { return nil }
        return (request, ResponseCode(rawValue: code))
    }

    public init(decoding bytes: borrowing [UInt8]) throws(DecodeError) {
        guard !bytes.isEmpty else { throw .empty }
        self = try ByteReader.read(bytes) { (reader) throws(DecodeError) in try Self(reading: &reader) }
    }

    private init(reading reader: inout ByteReader) throws(DecodeError) {
        opCodeValue = try reader.readUInt8("op_code")
        operatorValue = try reader.readUInt8("operator")
        switch (OpCode(rawValue: opCodeValue), Operator(rawValue: operatorValue)) {
        case (.numberOfStoredRecordsResponse, _):
            operand = .numberOfRecords(try reader.readUInt16("number_of_records"))
        case (.responseCode, _):
            let request = try reader.readUInt8("request_op_code")
            operand = .response(requestOpCode: request, code: try reader.readUInt8("response_code"))
        case (.reportStoredRecords, let op?), (.deleteStoredRecords, let op?), (.reportNumberOfStoredRecords, let op?):
            operand = try Self.filter(after: op, &reader)
        default:
            let rest = reader.readRemaining()
            operand = rest.isEmpty ? .none : .other(rest)
        }
    }

    private static func filter(after op: Operator, _ reader: inout ByteReader) throws(DecodeError) -> RACPOperand {
        switch op {
        case .lessThanOrEqualTo, .greaterThanOrEqualTo, .withinRangeOf:
            let range = op == .withinRangeOf
            let type = try reader.readUInt8("filter_type")
            switch type {
            case 1:
                let first = try reader.readUInt16("filter_value")
                return range
                    ? .sequenceNumberRange(first, try reader.readUInt16("filter_maximum")) : .sequenceNumber(first)
            case 2:
                let first = try DateTime(reading: &reader, field: "filter_value")
                return range
                    ? .userFacingTimeRange(first, try DateTime(reading: &reader, field: "filter_maximum"))
                    : .userFacingTime(first)
            default:
                return .other([type] + reader.readRemaining())
            }
        case .null, .allRecords, .firstRecord, .lastRecord:
            return .none
        }
    }

    public func encoded() -> [UInt8] {
        var writer = ByteWriter(capacity: 17)
        writer.write(opCodeValue)
        writer.write(operatorValue)
        switch operand {
        case .none: break
        case .sequenceNumber(let value):
            writer.write(UInt8(1))
            writer.write(value)
        case .sequenceNumberRange(let low, let high):
            writer.write(UInt8(1))
            writer.write(low)
            writer.write(high)
        case .userFacingTime(let time):
            writer.write(UInt8(2))
            time.write(to: &writer)
        case .userFacingTimeRange(let low, let high):
            writer.write(UInt8(2))
            low.write(to: &writer)
            high.write(to: &writer)
        case .numberOfRecords(let count): writer.write(count)
        case .response(let request, let code):
            writer.write(request)
            writer.write(code)
        case .other(let bytes): writer.write(contentsOf: bytes)
        }
        return writer.bytes
    }

    static let opCodeNames = [
        "reserved", "report_stored_records", "delete_stored_records", "abort_operation",
        "report_number_of_stored_records", "number_of_stored_records_response", "response_code",
    ]
    static let operatorNames = [
        "null", "all_records", "less_than_or_equal_to", "greater_than_or_equal_to", "within_range_of",
        "first_record", "last_record",
    ]

    public var fields: [Field] {
        [
            Field("op_code", .string(enumerationName(opCodeValue, in: Self.opCodeNames))),
            Field("operator", .string(enumerationName(operatorValue, in: Self.operatorNames))),
            Field("operand", operand.fieldValue),
        ]
    }
}

/// What follows a Record Access Control Point's op code and operator.
public enum RACPOperand: Hashable, Sendable {
    case none
    /// Filter type 1 with operator "less than or equal to" or "greater than or equal to".
    case sequenceNumber(UInt16)
    /// Filter type 1 with operator "within range of" (both inclusive).
    case sequenceNumberRange(UInt16, UInt16)
    /// Filter type 2 (user facing time: base time plus time offset).
    case userFacingTime(DateTime)
    case userFacingTimeRange(DateTime, DateTime)
    /// Op code 5.
    case numberOfRecords(UInt16)
    /// Op code 6: the request's op code and the response code value.
    case response(requestOpCode: UInt8, code: UInt8)
    /// An operand this layout does not define, as sent.
    case other([UInt8])

    var fieldValue: FieldValue {
        switch self {
        case .none: .null
        case .sequenceNumber(let value): .object([Field("sequence_number", .int(value))])
        case .sequenceNumberRange(let low, let high):
            .object([Field("sequence_number_minimum", .int(low)), Field("sequence_number_maximum", .int(high))])
        case .userFacingTime(let time): .object([Field("user_facing_time", .string(time.description))])
        case .userFacingTimeRange(let low, let high):
            .object([
                Field("user_facing_time_minimum", .string(low.description)),
                Field("user_facing_time_maximum", .string(high.description)),
            ])
        case .numberOfRecords(let count): .object([Field("number_of_records", .int(count))])
        case .response(let request, let code):
            .object([
                Field(
                    "request_op_code",
                    .string(enumerationName(request, in: RecordAccessControlPoint.opCodeNames))),
                Field(
                    "response_code",
                    .string(enumerationName(code, in: RecordAccessControlPoint.ResponseCode.names))),
            ])
        case .other(let bytes): .object([Field("bytes", .list(bytes.map { .int($0) }))])
        }
    }
}
