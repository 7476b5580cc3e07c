import GATT
import Support
import TestSupport
import Testing

/// Fitness Machine Feature 0x2ACC, Treadmill Data 0x2ACD, Indoor Bike Data 0x2AD2, Rower Data 0x2AD1 and Fitness
/// Machine Status 0x2ADA (`docs/gatt-fitness-machines.md`).
@Suite struct FitnessMachineTests {
    /// Speed 10 km/h, distance 1234 m, inclination 2.5 % and ramp 1.4°, energy 87 kcal (600 kcal/h, 10 kcal/min),
    /// elapsed 600 s.
    static let treadmill = "8c 04 e8 03 d2 04 00 19 00 0e 00 57 00 58 02 0a 58 02"

    @Test func treadmillData() throws {
        let value = try TreadmillData(decoding: h(Self.treadmill))
        #expect(value.instantaneousSpeed == 1000)
        #expect(value.metresPerSecond == 1000.0 / 360)
        #expect(value.totalDistance == 1234)
        #expect(value.incline == .init(inclination: 25, rampAngle: 14))
        #expect(value.inclinationFraction == 0.025)
        #expect(value.common.energy == FitnessMachineEnergy(total: 87, perHour: 600, perMinute: 10))
        #expect(value.common.elapsedTime == 600)
        #expect(value.common.heartRate == nil && value.averageSpeed == nil && value.forceAndPower == nil)
        #expect(value.encoded() == h(Self.treadmill))
    }

    @Test func moreDataBitZeroMeansTheSpeedIsAbsent() throws {
        // Bit 0 is inverted: clear, the speed is there; set, it is not (and the next field follows the flags).
        let withSpeed = try TreadmillData(decoding: h("00 00 e8 03"))
        #expect(withSpeed.instantaneousSpeed == 1000)
        let moreData = try TreadmillData(decoding: h("05 00 d2 04 00"))
        #expect(moreData.instantaneousSpeed == nil)
        #expect(moreData.totalDistance == 1234)
        #expect(moreData.flags == 0x0005)
        #expect(TreadmillData().encoded() == h("01 00"))
    }

    @Test func signedInclineAndUint24Distance() throws {
        let value = try TreadmillData(decoding: h("0d 00 ff ff ff ce ff 00 80"))
        #expect(value.totalDistance == 0xFF_FFFF)
        #expect(value.incline == .init(inclination: -50, rampAngle: Int16.min))
        #expect(TreadmillData(totalDistance: 0x0100_0001).totalDistance == 1)
    }

    @Test func treadmillEveryField() throws {
        let common = FitnessMachineCommon(
            energy: FitnessMachineEnergy(total: 1, perHour: 2, perMinute: 3), heartRate: 140,
            metabolicEquivalent: 85, elapsedTime: 61, remainingTime: 9)
        let value = TreadmillData(
            instantaneousSpeed: 1, averageSpeed: 2, totalDistance: 3, incline: .init(inclination: -1, rampAngle: 1),
            elevationGain: .init(positive: 4, negative: 5), instantaneousPace: 6, averagePace: 7, common: common,
            forceAndPower: .init(forceOnBelt: -8, powerOutput: 9))
        let bytes = value.encoded()
        #expect(
            bytes
                == h(
                    "fe 1f 01 00 02 00 03 00 00 ff ff 01 00 04 00 05 00 06 00 07 00 01 00 02 00 03 8c 55 3d 00 09 00 f8 ff 09 00"
                ))
        #expect(try TreadmillData(decoding: bytes) == value)
    }

    static let treadmillErrors: [(String, DecodeError)] = [
        ("", .empty),
        ("8c", .truncated(field: "flags", offset: 0, needed: 2, available: 1)),
        ("00 00 e8", .truncated(field: "instantaneous_speed", offset: 2, needed: 2, available: 1)),
        ("05 00 d2 04", .truncated(field: "total_distance", offset: 2, needed: 3, available: 2)),
        ("09 00 19 00", .truncated(field: "ramp_angle_setting", offset: 4, needed: 2, available: 0)),
        ("81 00 57 00 58 02", .truncated(field: "energy_per_minute", offset: 6, needed: 1, available: 0)),
        ("01 04 58", .truncated(field: "elapsed_time", offset: 2, needed: 2, available: 1)),
        ("01 10 f8 ff", .truncated(field: "power_output", offset: 4, needed: 2, available: 0)),
    ]

    @Test(arguments: treadmillErrors)
    func treadmillRejects(_ hex: String, _ error: DecodeError) {
        #expect(throws: error) { try TreadmillData(decoding: h(hex)) }
    }

    @Test func energyNotAvailable() throws {
        let value = try TreadmillData(decoding: h("81 00 ff ff ff ff ff"))
        #expect(value.common.energy?.totalKilocalories == nil)
        #expect(FieldValue.object(value.fields).json.contains(#""total_energy":null"#))
        #expect(try TreadmillData(decoding: h("81 00 57 00 ff ff ff")).common.energy?.totalKilocalories == 87)
    }

    // MARK: Indoor bike

    /// Speed 30 km/h, cadence 90/min, distance 5000 m, power 200 W.
    static let bike = "54 00 b8 0b b4 00 88 13 00 c8 00"

    @Test func indoorBikeData() throws {
        let value = try IndoorBikeData(decoding: h(Self.bike))
        #expect(value.instantaneousSpeed == 3000)
        #expect(value.cadencePerMinute == 90)
        #expect(value.totalDistance == 5000)
        #expect(value.instantaneousPower == 200)
        #expect(value.encoded() == h(Self.bike))
        let json = FieldValue.object(value.fields).json
        #expect(json.contains(#""instantaneous_speed":30.0"#) && json.contains(#""instantaneous_cadence":90.0"#))
    }

    @Test func indoorBikeCommonFieldsStartAtBitEight() throws {
        // Energy 0x0100 flag, heart rate 0x0200, elapsed time 0x0800 on a "more data" record (no speed).
        let value = try IndoorBikeData(decoding: h("01 0b 2a 00 ff ff ff 8c 3c 00"))
        #expect(value.common.energy?.total == 42)
        #expect(value.common.heartRate == 140)
        #expect(value.common.elapsedTime == 60)
        #expect(value.instantaneousSpeed == nil)
    }

    static let bikeErrors: [(String, DecodeError)] = [
        ("", .empty),
        ("54 00 b8 0b b4 00 88 13", .truncated(field: "total_distance", offset: 6, needed: 3, available: 2)),
        ("54 00 b8 0b b4 00 88 13 00 c8", .truncated(field: "instantaneous_power", offset: 9, needed: 2, available: 1)),
        ("21 00", .truncated(field: "resistance_level", offset: 2, needed: 2, available: 0)),
        ("01 10 3c", .truncated(field: "remaining_time", offset: 2, needed: 2, available: 1)),
    ]

    @Test(arguments: bikeErrors)
    func indoorBikeRejects(_ hex: String, _ error: DecodeError) {
        #expect(throws: error) { try IndoorBikeData(decoding: h(hex)) }
    }

    // MARK: Rower

    /// 24 strokes/min, 100 strokes, 500 m, 150 W.
    static let rower = "24 00 30 64 00 f4 01 00 96 00"

    @Test func rowerData() throws {
        let value = try RowerData(decoding: h(Self.rower))
        #expect(value.strokes == .init(rate: 48, count: 100))
        #expect(value.totalDistance == 500)
        #expect(value.instantaneousPower == 150)
        #expect(value.encoded() == h(Self.rower))
        #expect(try RowerData(decoding: h("01 00")).strokes == nil)
    }

    static let rowerErrors: [(String, DecodeError)] = [
        ("", .empty),
        ("00 00 30 64", .truncated(field: "stroke_count", offset: 3, needed: 2, available: 1)),
        ("03 00", .truncated(field: "average_stroke_rate", offset: 2, needed: 1, available: 0)),
        ("81 00 01", .truncated(field: "resistance_level", offset: 2, needed: 2, available: 1)),
    ]

    @Test(arguments: rowerErrors)
    func rowerRejects(_ hex: String, _ error: DecodeError) {
        #expect(throws: error) { try RowerData(decoding: h(hex)) }
    }

    // MARK: Feature

    @Test func feature() throws {
        let value = try FitnessMachineFeature(decoding: h("0c 12 00 00 03 00 00 00"))
        #expect(value.machine == [.totalDistance, .inclination, .expendedEnergy, .elapsedTime])
        #expect(value.targetSettings == [.speed, .inclination])
        #expect(value.encoded() == h("0c 12 00 00 03 00 00 00"))
        let json = FieldValue.object(value.fields).json
        #expect(json.contains(#""total_distance":true"#))
        #expect(json.contains(#""reserved_bits":0"#))
    }

    @Test(arguments: ["", "0c 12 00 00", "0c 12 00 00 03 00 00", "0c 12 00 00 03 00 00 00 00"])
    func featureOfTheWrongLengthIsRejected(_ hex: String) {
        #expect(throws: DecodeError.invalidLength(expected: 8, actual: h(hex).count)) {
            try FitnessMachineFeature(decoding: h(hex))
        }
    }

    // MARK: Status

    @Test func statusSessionEvents() throws {
        #expect(try FitnessMachineStatus(decoding: h("04")).sessionEvent == .started)
        #expect(try FitnessMachineStatus(decoding: h("02 01")).sessionEvent == .stopped)
        #expect(try FitnessMachineStatus(decoding: h("02 02")).sessionEvent == .paused)
        #expect(try FitnessMachineStatus(decoding: h("03")).sessionEvent == .stopped)
        #expect(try FitnessMachineStatus(decoding: h("01")).sessionEvent == .reset)
        #expect(try FitnessMachineStatus(decoding: h("05 e8 03")).sessionEvent == nil)
        #expect(FitnessMachineStatus.stoppedByUser(paused: true).encoded() == h("02 02"))
    }

    @Test func statusParameters() throws {
        let speed = try FitnessMachineStatus(decoding: h("05 e8 03 ff"))
        #expect(speed.opCode == .targetSpeedChanged)
        #expect(speed.parameter == [0xE8, 0x03])
        #expect(speed.encoded() == h("05 e8 03"))
        #expect(FieldValue.object(speed.fields).json.contains(#""target_speed":10.0"#))
        let distance = try FitnessMachineStatus(decoding: h("0d 10 27 00"))
        #expect(FieldValue.object(distance.fields).json.contains(#""targeted_distance":10000"#))
        let reserved = try FitnessMachineStatus(decoding: h("7f 01 02"))
        #expect(reserved.opCode == nil && reserved.parameter == [1, 2])
        #expect(FieldValue.object(reserved.fields).json.contains(#""status":"reserved""#))
        #expect(
            FitnessMachineStatus.OpCode.targetedTimeInFiveHeartRateZonesChanged.label
                == "targeted_time_in_five_heart_rate_zones_changed")
    }

    static let statusErrors: [(String, DecodeError)] = [
        ("", .empty),
        ("02", .truncated(field: "parameter", offset: 1, needed: 1, available: 0)),
        ("0d 10 27", .truncated(field: "parameter", offset: 1, needed: 3, available: 2)),
        ("12 00 00 00 00 00", .truncated(field: "parameter", offset: 1, needed: 6, available: 5)),
    ]

    @Test(arguments: statusErrors)
    func statusRejects(_ hex: String, _ error: DecodeError) {
        #expect(throws: error) { try FitnessMachineStatus(decoding: h(hex)) }
    }

    @Test func catalogMetadata() {
        #expect(TreadmillData.uuid == BluetoothUUID(UInt16(0x2ACD)))
        #expect(IndoorBikeData.uuid == BluetoothUUID(UInt16(0x2AD2)))
        #expect(RowerData.uuid == BluetoothUUID(UInt16(0x2AD1)))
        #expect(FitnessMachineFeature.uuid == BluetoothUUID(UInt16(0x2ACC)))
        #expect(FitnessMachineStatus.uuid == BluetoothUUID(UInt16(0x2ADA)))
        #expect(BluetoothUUID.fitnessMachineService == BluetoothUUID(UInt16(0x1826)))
        #expect(CharacteristicCatalog.type(named: "treadmill-data") == TreadmillData.self)
    }
}

// MARK: - Samples for PropertyTests

extension FitnessMachineCommon {
    static func random(using rng: inout SplitMix64) -> FitnessMachineCommon {
        FitnessMachineCommon(
            energy: rng.maybe { FitnessMachineEnergy(total: $0.uint16(), perHour: $0.uint16(), perMinute: $0.uint8()) },
            heartRate: rng.maybe { $0.uint8() }, metabolicEquivalent: rng.maybe { $0.uint8() },
            elapsedTime: rng.maybe { $0.uint16() }, remainingTime: rng.maybe { $0.uint16() })
    }
}

extension SplitMix64 {
    mutating func int16() -> Int16 { Int16(bitPattern: uint16()) }
    mutating func uint24() -> UInt32 { uint32() & 0xFF_FFFF }
}

extension TreadmillData: TestableCharacteristic {
    static var canonicalSamples: [String] {
        [FitnessMachineTests.treadmill, "00 00 e8 03", "01 00", "05 00 d2 04 00", "81 00 ff ff ff ff ff", "01 e0"]
    }

    static func random(using rng: inout SplitMix64) -> TreadmillData {
        TreadmillData(
            instantaneousSpeed: rng.maybe { $0.uint16() }, averageSpeed: rng.maybe { $0.uint16() },
            totalDistance: rng.maybe { $0.uint24() },
            incline: rng.maybe { Incline(inclination: $0.int16(), rampAngle: $0.int16()) },
            elevationGain: rng.maybe { ElevationGain(positive: $0.uint16(), negative: $0.uint16()) },
            instantaneousPace: rng.maybe { $0.uint16() }, averagePace: rng.maybe { $0.uint16() },
            common: .random(using: &rng),
            forceAndPower: rng.maybe { ForceAndPower(forceOnBelt: $0.int16(), powerOutput: $0.int16()) },
            reservedFlags: rng.uint16())
    }
}

extension IndoorBikeData: TestableCharacteristic {
    static var canonicalSamples: [String] {
        [FitnessMachineTests.bike, "01 0b 2a 00 ff ff ff 8c 3c 00", "01 00", "00 00 00 00", "21 e0 00 80"]
    }

    static func random(using rng: inout SplitMix64) -> IndoorBikeData {
        IndoorBikeData(
            instantaneousSpeed: rng.maybe { $0.uint16() }, averageSpeed: rng.maybe { $0.uint16() },
            instantaneousCadence: rng.maybe { $0.uint16() }, averageCadence: rng.maybe { $0.uint16() },
            totalDistance: rng.maybe { $0.uint24() }, resistanceLevel: rng.maybe { $0.int16() },
            instantaneousPower: rng.maybe { $0.int16() }, averagePower: rng.maybe { $0.int16() },
            common: .random(using: &rng), reservedFlags: rng.uint16())
    }
}

extension RowerData: TestableCharacteristic {
    static var canonicalSamples: [String] { [FitnessMachineTests.rower, "01 00", "00 00 30 64 00", "01 e0"] }

    static func random(using rng: inout SplitMix64) -> RowerData {
        RowerData(
            strokes: rng.maybe { Strokes(rate: $0.uint8(), count: $0.uint16()) },
            averageStrokeRate: rng.maybe { $0.uint8() }, totalDistance: rng.maybe { $0.uint24() },
            instantaneousPace: rng.maybe { $0.uint16() }, averagePace: rng.maybe { $0.uint16() },
            instantaneousPower: rng.maybe { $0.int16() }, averagePower: rng.maybe { $0.int16() },
            resistanceLevel: rng.maybe { $0.int16() }, common: .random(using: &rng), reservedFlags: rng.uint16())
    }
}

extension FitnessMachineFeature: TestableCharacteristic {
    static var canonicalSamples: [String] {
        ["00 00 00 00 00 00 00 00", "0c 12 00 00 03 00 00 00", "ff ff ff ff ff ff ff ff"]
    }
    static var fixedLength: Int? { 8 }

    static func random(using rng: inout SplitMix64) -> FitnessMachineFeature {
        FitnessMachineFeature(
            machine: Machine(rawValue: rng.uint32()), targetSettings: TargetSettings(rawValue: rng.uint32()))
    }
}

extension FitnessMachineStatus: TestableCharacteristic {
    static var canonicalSamples: [String] {
        ["01", "02 01", "02 02", "04", "05 e8 03", "0d 10 27 00", "ff", "7f 01 02", "00"]
    }

    static func random(using rng: inout SplitMix64) -> FitnessMachineStatus {
        let code = rng.uint8()
        let length = OpCode(rawValue: code)?.parameterLength ?? Int.random(in: 0...6, using: &rng)
        return FitnessMachineStatus(opCode: code, parameter: rng.bytes(count: length))
    }

    /// A reserved op code keeps what follows it: a prefix is the same op code with less of its parameter.
    static func isDocumentedShorterForm(_ shorter: FitnessMachineStatus, of full: FitnessMachineStatus) -> Bool {
        full.opCode == nil && shorter.opCodeValue == full.opCodeValue
            && full.parameter.starts(with: shorter.parameter)
    }
}
