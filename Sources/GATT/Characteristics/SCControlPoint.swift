/// SC Control Point (0x2A55), shared by Running and Cycling Speed and Cadence: requests written by the
/// client, responses indicated by the sensor.
///
/// ```
/// request   op(uint8) [parameter]      1 set cumulative value (uint32: RSC 1/10 m, CSC wheel revolutions)
///                                      2 start sensor calibration, 3 update sensor location (uint8),
///                                      4 request supported sensor locations
/// response  0x10, request op(uint8), response value(uint8), [parameter]
///           (the supported locations, one byte each, after a successful op 4)
/// ```
public enum SCControlPoint: CharacteristicValue, Hashable {
    case setCumulativeValue(UInt32)
    case startSensorCalibration
    case updateSensorLocation(SensorLocation)
    case requestSupportedSensorLocations
    /// The sensor's answer to `requestOpCode`. `parameter` holds any bytes after the response value.
    case response(requestOpCode: UInt8, value: ResponseValue, parameter: [UInt8])
    /// An op code the specification reserves, with whatever followed it.
    case reserved(opCode: UInt8, parameter: [UInt8])

    public static let uuid = BluetoothUUID.scControlPoint
    public static let name = "sc-control-point"

    /// The response value of an SC Control Point indication.
    public struct ResponseValue: Hashable, Sendable {
        public var rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }
        public static let success = ResponseValue(rawValue: 1)
        public static let opCodeNotSupported = ResponseValue(rawValue: 2)
        public static let invalidParameter = ResponseValue(rawValue: 3)
        public static let operationFailed = ResponseValue(rawValue: 4)

        public var name: String {
            switch rawValue {
            case 1: "success"
            case 2: "op_code_not_supported"
            case 3: "invalid_parameter"
            case 4: "operation_failed"
            default: "reserved"
            }
        }
    }

    public init(decoding bytes: borrowing [UInt8]) throws(DecodeError) {
        guard !bytes.isEmpty else { throw .empty }
        self = try ByteReader.read(bytes) { (reader) throws(DecodeError) in try Self(reading: &reader) }
    }

    private init(reading reader: inout ByteReader) throws(DecodeError) {
        let opCode = try reader.readUInt8("op_code")
        switch opCode {
        case 0x01: self = .setCumulativeValue(try reader.readUInt32("cumulative_value"))
        case 0x02: self = .startSensorCalibration
        case 0x03: self = .updateSensorLocation(SensorLocation(rawValue: try reader.readUInt8("sensor_location")))
        case 0x04: self = .requestSupportedSensorLocations
        case 0x10:
            let request = try reader.readUInt8("request_op_code")
            let value = ResponseValue(rawValue: try reader.readUInt8("response_value"))
            self = .response(requestOpCode: request, value: value, parameter: reader.readRemaining())
        default:
            self = .reserved(opCode: opCode, parameter: reader.readRemaining())
        }
    }

    public var opCode: UInt8 {
        switch self {
        case .setCumulativeValue: 0x01
        case .startSensorCalibration: 0x02
        case .updateSensorLocation: 0x03
        case .requestSupportedSensorLocations: 0x04
        case .response: 0x10
        case .reserved(let opCode, _): opCode
        }
    }

    public var opName: String {
        switch self {
        case .setCumulativeValue: "set_cumulative_value"
        case .startSensorCalibration: "start_sensor_calibration"
        case .updateSensorLocation: "update_sensor_location"
        case .requestSupportedSensorLocations: "request_supported_sensor_locations"
        case .response: "response_code"
        case .reserved: "reserved"
        }
    }

    /// For a successful response to op 4, the locations the sensor supports.
    public var supportedSensorLocations: [SensorLocation]? {
        guard case .response(0x04, .success, let parameter) = self else { return nil }
        return parameter.map(SensorLocation.init(rawValue:))
    }

    public func encoded() -> [UInt8] {
        var writer = ByteWriter(capacity: 5)
        writer.write(opCode)
        switch self {
        case .setCumulativeValue(let value): writer.write(value)
        case .startSensorCalibration, .requestSupportedSensorLocations: break
        case .updateSensorLocation(let location): writer.write(location.rawValue)
        case .response(let request, let value, let parameter):
            writer.write(request)
            writer.write(value.rawValue)
            writer.write(contentsOf: parameter)
        case .reserved(_, let parameter): writer.write(contentsOf: parameter)
        }
        return writer.bytes
    }

    public var fields: [Field] {
        var fields = [Field("op_code", .int(opCode)), Field("op_name", .string(opName))]
        switch self {
        case .setCumulativeValue(let value):
            fields.append(Field("cumulative_value", .int(value)))
        case .startSensorCalibration, .requestSupportedSensorLocations:
            break
        case .updateSensorLocation(let location):
            fields.append(Field("sensor_location", .object(location.fields)))
        case .response(let request, let value, let parameter):
            fields.append(Field("request_op_code", .int(request)))
            fields.append(Field("response_value", .int(value.rawValue)))
            fields.append(Field("response", .string(value.name)))
            fields.append(Field("parameter", .list(parameter.map { .int($0) })))
            if let locations = supportedSensorLocations {
                fields.append(Field("supported_sensor_locations", .list(locations.map { .object($0.fields) })))
            }
        case .reserved(_, let parameter):
            fields.append(Field("parameter", .list(parameter.map { .int($0) })))
        }
        return fields
    }
}
