import GATT
import Testing

/// Body Sensor Location 0x2A38, Sensor Location 0x2A5D, Heart Rate Control Point 0x2A39, Battery Level 0x2A19
/// and SC Control Point 0x2A55 (`docs/gatt-policy.md`, the sections of the same names).
@Suite struct LocationsAndControlPointTests {
    // MARK: Body Sensor Location

    static let bodySensorNames: [(UInt8, String)] = [
        (0, "other"), (1, "chest"), (2, "wrist"), (3, "finger"), (4, "hand"), (5, "ear_lobe"), (6, "foot"),
        (7, "reserved"), (8, "reserved"), (200, "reserved"), (255, "reserved"),
    ]

    @Test(arguments: bodySensorNames)
    func bodySensorLocation(_ raw: UInt8, _ name: String) throws {
        let value = try BodySensorLocation(decoding: [raw])
        #expect(value.rawValue == raw)
        #expect(value.name == name)
        #expect(value.isReserved == (raw >= 7))
        #expect(FieldValue.object(value.fields).json == #"{"value":\#(raw),"name":"\#(name)"}"#)
        #expect(value.encoded() == [raw])
    }

    @Test func bodySensorLocationConstantsAndNames() {
        #expect(BodySensorLocation.chest.rawValue == 1)
        #expect(BodySensorLocation.earLobe.rawValue == 5)
        #expect(BodySensorLocation.foot.rawValue == 6)
        #expect(BodySensorLocation(name: "chest") == .chest)
        #expect(BodySensorLocation(name: "ear-lobe") == .earLobe)
        #expect(BodySensorLocation(name: "Ear Lobe") == .earLobe)
        #expect(BodySensorLocation(name: "ear_lobe") == .earLobe)
        #expect(BodySensorLocation(name: "3") == .finger)
        #expect(BodySensorLocation(name: "9")?.isReserved == true)
        #expect(BodySensorLocation(name: "256") == nil)
        #expect(BodySensorLocation(name: "elbow") == nil)
        #expect(BodySensorLocation(name: "") == nil)
    }

    @Test(arguments: ["", "01 01", "01 00 00"])
    func bodySensorLocationOfTheWrongLengthIsRejected(_ hex: String) {
        #expect(throws: DecodeError.invalidLength(expected: 1, actual: h(hex).count)) {
            try BodySensorLocation(decoding: h(hex))
        }
    }

    // MARK: Sensor Location

    static let sensorNames: [(UInt8, String)] = [
        (0, "other"), (1, "top_of_shoe"), (2, "in_shoe"), (3, "hip"), (4, "front_wheel"), (5, "left_crank"),
        (6, "right_crank"), (7, "left_pedal"), (8, "right_pedal"), (9, "front_hub"), (10, "rear_dropout"),
        (11, "chainstay"), (12, "rear_wheel"), (13, "rear_hub"), (14, "chest"), (15, "spider"), (16, "chain_ring"),
        (17, "reserved"), (100, "reserved"), (255, "reserved"),
    ]

    @Test(arguments: sensorNames)
    func sensorLocation(_ raw: UInt8, _ name: String) throws {
        let value = try SensorLocation(decoding: [raw])
        #expect(value.rawValue == raw)
        #expect(value.name == name)
        #expect(value.isReserved == (raw >= 17))
        #expect(FieldValue.object(value.fields).json == #"{"value":\#(raw),"name":"\#(name)"}"#)
    }

    @Test func sensorLocationIsADifferentTableFromBodySensorLocation() throws {
        #expect(SensorLocation.chest.rawValue == 14)
        #expect(BodySensorLocation.chest.rawValue == 1)
        #expect(try SensorLocation(decoding: [1]).name == "top_of_shoe")
        #expect(try BodySensorLocation(decoding: [14]).name == "reserved")
        #expect(SensorLocation(name: "top-of-shoe") == .topOfShoe)
        #expect(SensorLocation(name: "IN_SHOE") == .inShoe)
        #expect(SensorLocation(name: "hip") == .hip)
        #expect(SensorLocation(name: "chain ring")?.rawValue == 16)
        #expect(SensorLocation(name: "wrist") == nil)
    }

    @Test(arguments: ["", "0c 00", "0c 0c 0c"])
    func sensorLocationOfTheWrongLengthIsRejected(_ hex: String) {
        // Nordic's test rejects a 2-byte Sensor Location.
        #expect(throws: DecodeError.invalidLength(expected: 1, actual: h(hex).count)) {
            try SensorLocation(decoding: h(hex))
        }
    }

    // MARK: Heart Rate Control Point

    @Test func heartRateControlPoint() throws {
        let reset = try HeartRateControlPoint(decoding: h("01"))
        #expect(reset == .resetEnergyExpended)
        #expect(reset.name == "reset_energy_expended")
        #expect(HeartRateControlPoint.resetEnergyExpended.encoded() == [0x01])
        #expect(FieldValue.object(reset.fields).json == #"{"op_code":1,"name":"reset_energy_expended"}"#)
        #expect(try HeartRateControlPoint(decoding: h("00")).name == "reserved")
        #expect(try HeartRateControlPoint(decoding: h("02")).name == "reserved")
        #expect(try HeartRateControlPoint(decoding: h("ff")).opCode == 0xFF)
    }

    @Test func miBandReadableControlPointIsTheWrongLength() {
        // The Mi Band 4 answers a read of 2A39 with `00 01`: a vendor channel, not the HRS control point.
        #expect(throws: DecodeError.invalidLength(expected: 1, actual: 2)) {
            try HeartRateControlPoint(decoding: h("00 01"))
        }
        #expect(throws: DecodeError.invalidLength(expected: 1, actual: 0)) { try HeartRateControlPoint(decoding: []) }
    }

    // MARK: Battery Level

    @Test(arguments: [UInt8(0), 1, 50, 99, 100])
    func batteryLevel(_ percent: UInt8) throws {
        let value = try BatteryLevel(decoding: [percent])
        #expect(value.percent == percent)
        #expect(value.encoded() == [percent])
        #expect(BatteryLevel(percent: percent) == value)
        #expect(FieldValue.object(value.fields).json == #"{"value":\#(percent),"battery_level":\#(percent)}"#)
        #expect(value.fields.allSatisfy { $0.unit == "%" })
    }

    @Test(arguments: [UInt8(101), 102, 200, 255])
    func batteryAboveHundredIsOutOfRange(_ raw: UInt8) {
        #expect(throws: DecodeError.outOfRange(field: "battery_level", offset: 0, value: Int(raw))) {
            try BatteryLevel(decoding: [raw])
        }
        #expect(decodeError(BatteryLevel.self, [raw])?.kind == "out_of_range")
        #expect(BatteryLevel(percent: raw) == nil)
    }

    @Test(arguments: ["", "64 00", "32 32 32"])
    func batteryOfTheWrongLengthIsRejected(_ hex: String) {
        // Length is checked before range: `ff ff` is the wrong length, not out of range.
        #expect(throws: DecodeError.invalidLength(expected: 1, actual: h(hex).count)) {
            try BatteryLevel(decoding: h(hex))
        }
        #expect(throws: DecodeError.invalidLength(expected: 1, actual: 2)) { try BatteryLevel(decoding: h("ff ff")) }
    }

    // MARK: SC Control Point

    static let requests: [(String, SCControlPoint)] = [
        ("01 10 27 00 00", .setCumulativeValue(10_000)),
        ("01 ff ff ff ff", .setCumulativeValue(0xFFFF_FFFF)),
        ("02", .startSensorCalibration),
        ("03 05", .updateSensorLocation(SensorLocation(rawValue: 5))),
        ("03 0e", .updateSensorLocation(.chest)),
        ("03 11", .updateSensorLocation(SensorLocation(rawValue: 17))),
        ("04", .requestSupportedSensorLocations),
        // Responses
        ("10 01 01", .response(requestOpCode: 1, value: .success, parameter: [])),
        ("10 04 01 01 02 0e", .response(requestOpCode: 4, value: .success, parameter: [1, 2, 14])),
        ("10 04 02", .response(requestOpCode: 4, value: .opCodeNotSupported, parameter: [])),
        ("10 03 03", .response(requestOpCode: 3, value: .invalidParameter, parameter: [])),
        ("10 02 04", .response(requestOpCode: 2, value: .operationFailed, parameter: [])),
        ("10 05 00", .response(requestOpCode: 5, value: SCControlPoint.ResponseValue(rawValue: 0), parameter: [])),
        // Reserved op codes are kept with their parameter.
        ("00", .reserved(opCode: 0, parameter: [])),
        ("05 aa bb", .reserved(opCode: 5, parameter: [0xAA, 0xBB])),
        ("0f", .reserved(opCode: 0x0F, parameter: [])),
        ("11 01", .reserved(opCode: 0x11, parameter: [1])),
        ("ff", .reserved(opCode: 0xFF, parameter: [])),
    ]

    @Test(arguments: requests)
    func scControlPoint(_ hex: String, _ expected: SCControlPoint) throws {
        let value = try SCControlPoint(decoding: h(hex))
        #expect(value == expected)
        #expect(expected.encoded() == h(hex))
        #expect(value.opCode == h(hex)[0])
    }

    @Test func opNames() throws {
        let names = try ["01 00 00 00 00", "02", "03 00", "04", "10 01 01", "07"].map {
            try SCControlPoint(decoding: h($0)).opName
        }
        #expect(
            names == [
                "set_cumulative_value", "start_sensor_calibration", "update_sensor_location",
                "request_supported_sensor_locations", "response_code", "reserved",
            ])
    }

    @Test(arguments: [
        (UInt8(0), "reserved"), (1, "success"), (2, "op_code_not_supported"), (3, "invalid_parameter"),
        (4, "operation_failed"), (5, "reserved"), (255, "reserved"),
    ])
    func responseValueNames(_ raw: UInt8, _ name: String) {
        #expect(SCControlPoint.ResponseValue(rawValue: raw).name == name)
    }

    @Test func supportedSensorLocations() throws {
        let value = try SCControlPoint(decoding: h("10 04 01 01 02 0e 11"))
        let locations = try #require(value.supportedSensorLocations)
        #expect(locations == [.topOfShoe, .inShoe, .chest, SensorLocation(rawValue: 17)])
        #expect(locations.map(\.name) == ["top_of_shoe", "in_shoe", "chest", "reserved"])
        #expect(
            FieldValue.object(value.fields).json == """
                {"op_code":16,"op_name":"response_code","request_op_code":4,"response_value":1,"response":"success",\
                "parameter":[1,2,14,17],"supported_sensor_locations":[{"value":1,"name":"top_of_shoe"},\
                {"value":2,"name":"in_shoe"},{"value":14,"name":"chest"},{"value":17,"name":"reserved"}]}
                """)
        // A successful op 4 with no parameter: an empty list, not "unknown".
        #expect(try SCControlPoint(decoding: h("10 04 01")).supportedSensorLocations == [])
    }

    @Test func supportedSensorLocationsOnlyForASuccessfulOp4() throws {
        // Wireshark checks the wrong byte here (docs/gatt-policy.md, "SC Control Point"); the request op code and the
        // value both matter.
        #expect(try SCControlPoint(decoding: h("10 04 02 01 02")).supportedSensorLocations == nil)
        #expect(try SCControlPoint(decoding: h("10 01 01 01 02")).supportedSensorLocations == nil)
        #expect(try SCControlPoint(decoding: h("04")).supportedSensorLocations == nil)
        let failed = try SCControlPoint(decoding: h("10 04 04"))
        #expect(!failed.fields.contains { $0.name == "supported_sensor_locations" })
    }

    @Test func requestFields() throws {
        #expect(
            FieldValue.object(try SCControlPoint(decoding: h("01 10 27 00 00")).fields).json
                == #"{"op_code":1,"op_name":"set_cumulative_value","cumulative_value":10000}"#)
        #expect(
            FieldValue.object(try SCControlPoint(decoding: h("03 05")).fields).json
                == #"{"op_code":3,"op_name":"update_sensor_location","sensor_location":{"value":5,"name":"left_crank"}}"#
        )
        #expect(
            FieldValue.object(try SCControlPoint(decoding: h("02")).fields).json
                == #"{"op_code":2,"op_name":"start_sensor_calibration"}"#)
        #expect(
            FieldValue.object(try SCControlPoint(decoding: h("20 01")).fields).json
                == #"{"op_code":32,"op_name":"reserved","parameter":[1]}"#)
    }

    static let controlPointErrors: [(String, DecodeError)] = [
        ("", .empty),
        ("01", .truncated(field: "cumulative_value", offset: 1, needed: 4, available: 0)),
        ("01 10 27", .truncated(field: "cumulative_value", offset: 1, needed: 4, available: 2)),
        ("03", .truncated(field: "sensor_location", offset: 1, needed: 1, available: 0)),
        ("10", .truncated(field: "request_op_code", offset: 1, needed: 1, available: 0)),
        ("10 04", .truncated(field: "response_value", offset: 2, needed: 1, available: 0)),
    ]

    @Test(arguments: controlPointErrors)
    func scControlPointRejects(_ hex: String, _ error: DecodeError) {
        #expect(throws: error) { try SCControlPoint(decoding: h(hex)) }
    }

    @Test func requestBytesAfterTheParameterAreIgnored() throws {
        #expect(try SCControlPoint(decoding: h("01 10 27 00 00 99")) == .setCumulativeValue(10_000))
        #expect(try SCControlPoint(decoding: h("02 ff")) == .startSensorCalibration)
        #expect(try SCControlPoint(decoding: h("03 05 99")) == .updateSensorLocation(SensorLocation(rawValue: 5)))
        #expect(try SCControlPoint(decoding: h("04 00")) == .requestSupportedSensorLocations)
    }

    @Test func catalogMetadata() {
        #expect(BodySensorLocation.uuid == BluetoothUUID(UInt16(0x2A38)))
        #expect(HeartRateControlPoint.uuid == BluetoothUUID(UInt16(0x2A39)))
        #expect(SensorLocation.uuid == BluetoothUUID(UInt16(0x2A5D)))
        #expect(SCControlPoint.uuid == BluetoothUUID(UInt16(0x2A55)))
        #expect(BatteryLevel.uuid == BluetoothUUID(UInt16(0x2A19)))
        #expect(
            [
                BodySensorLocation.name, HeartRateControlPoint.name, SensorLocation.name, SCControlPoint.name,
                BatteryLevel.name,
            ]
                == [
                    "body-sensor-location", "heart-rate-control-point", "sensor-location", "sc-control-point",
                    "battery-level",
                ])
    }
}
