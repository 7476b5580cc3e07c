// The Fitness Machine service (FTMS, 0x1826): treadmills, indoor bikes and rowers. Layouts, units and the
// sources they were checked against are in `docs/gatt-fitness-machines.md`.
//
// The data characteristics share a shape: a 16-bit flags field, then the fields the flags announce, in bit
// order. **Bit 0 ("More Data") is inverted**: 0 means the first field (instantaneous speed, or stroke rate and
// count for a rower) *is* present; a machine that splits a record over several notifications sets it on all but
// the last, whose first field is then absent. Multi-byte fields are little-endian; distances are uint24 metres,
// speeds uint16 in 0.01 km/h, energies uint16 kcal (0xFFFF, and 0xFF for the per-minute byte, "not available").

/// Fitness Machine Feature (0x2ACC, read): two 32-bit fields, exactly 8 bytes.
public struct FitnessMachineFeature: CharacteristicValue, Hashable {
    public static let uuid = BluetoothUUID.fitnessMachineFeature
    public static let name = "fitness-machine-feature"

    /// What the machine measures (the first uint32).
    public struct Machine: OptionSet, Hashable, Sendable {
        public var rawValue: UInt32
        public init(rawValue: UInt32) { self.rawValue = rawValue }
        public static let averageSpeed = Machine(rawValue: 1 << 0)
        public static let cadence = Machine(rawValue: 1 << 1)
        public static let totalDistance = Machine(rawValue: 1 << 2)
        public static let inclination = Machine(rawValue: 1 << 3)
        public static let elevationGain = Machine(rawValue: 1 << 4)
        public static let pace = Machine(rawValue: 1 << 5)
        public static let stepCount = Machine(rawValue: 1 << 6)
        public static let resistanceLevel = Machine(rawValue: 1 << 7)
        public static let strideCount = Machine(rawValue: 1 << 8)
        public static let expendedEnergy = Machine(rawValue: 1 << 9)
        public static let heartRateMeasurement = Machine(rawValue: 1 << 10)
        public static let metabolicEquivalent = Machine(rawValue: 1 << 11)
        public static let elapsedTime = Machine(rawValue: 1 << 12)
        public static let remainingTime = Machine(rawValue: 1 << 13)
        public static let powerMeasurement = Machine(rawValue: 1 << 14)
        public static let forceOnBeltAndPowerOutput = Machine(rawValue: 1 << 15)
        public static let userDataRetention = Machine(rawValue: 1 << 16)

        static let names: [String] = [
            "average_speed", "cadence", "total_distance", "inclination", "elevation_gain", "pace", "step_count",
            "resistance_level", "stride_count", "expended_energy", "heart_rate_measurement", "metabolic_equivalent",
            "elapsed_time", "remaining_time", "power_measurement", "force_on_belt_and_power_output",
            "user_data_retention",
        ]
    }

    /// Which targets the machine's control point accepts (the second uint32).
    public struct TargetSettings: OptionSet, Hashable, Sendable {
        public var rawValue: UInt32
        public init(rawValue: UInt32) { self.rawValue = rawValue }
        public static let speed = TargetSettings(rawValue: 1 << 0)
        public static let inclination = TargetSettings(rawValue: 1 << 1)
        public static let resistance = TargetSettings(rawValue: 1 << 2)
        public static let power = TargetSettings(rawValue: 1 << 3)
        public static let heartRate = TargetSettings(rawValue: 1 << 4)

        static let names: [String] = [
            "speed", "inclination", "resistance", "power", "heart_rate", "expended_energy", "step_number",
            "stride_number", "distance", "training_time", "time_in_two_heart_rate_zones",
            "time_in_three_heart_rate_zones", "time_in_five_heart_rate_zones", "indoor_bike_simulation",
            "wheel_circumference", "spin_down_control", "cadence",
        ]
    }

    public var machine: Machine
    public var targetSettings: TargetSettings

    public init(machine: Machine = [], targetSettings: TargetSettings = []) {
        self.machine = machine
        self.targetSettings = targetSettings
    }

    public init(decoding bytes: borrowing [UInt8]) throws(DecodeError) {
        try requireLength(bytes, 8)
        let (machine, targets) = try ByteReader.read(bytes) { (reader) throws(DecodeError) in
            (try reader.readUInt32("fitness_machine_features"), try reader.readUInt32("target_setting_features"))
        }
        self.init(machine: Machine(rawValue: machine), targetSettings: TargetSettings(rawValue: targets))
    }

    public func encoded() -> [UInt8] {
        var writer = ByteWriter(capacity: 8)
        writer.write(machine.rawValue)
        writer.write(targetSettings.rawValue)
        return writer.bytes
    }

    public var fields: [Field] {
        func bits(_ raw: UInt32, _ names: [String]) -> [Field] {
            names.enumerated().map { Field($0.element, .bool(raw & (1 << UInt32($0.offset)) != 0)) }
                + [Field("reserved_bits", .int(raw & ~(UInt32(1) << UInt32(names.count) - 1)))]
        }
        return [
            Field(
                "fitness_machine_features",
                .object([Field("value", .int(machine.rawValue))] + bits(machine.rawValue, Machine.names))),
            Field(
                "target_setting_features",
                .object(
                    [Field("value", .int(targetSettings.rawValue))]
                        + bits(targetSettings.rawValue, TargetSettings.names))),
        ]
    }
}

/// The Expended Energy group of the FTMS data characteristics: three fields under one flag.
public struct FitnessMachineEnergy: Equatable, Sendable {
    /// "Not available" in ``total`` and ``perHour``.
    public static let notAvailable: UInt16 = 0xFFFF
    /// "Not available" in ``perMinute``.
    public static let perMinuteNotAvailable: UInt8 = 0xFF

    /// kcal since the session started.
    public var total: UInt16
    /// kcal per hour.
    public var perHour: UInt16
    /// kcal per minute.
    public var perMinute: UInt8

    public init(total: UInt16, perHour: UInt16 = notAvailable, perMinute: UInt8 = perMinuteNotAvailable) {
        self.total = total
        self.perHour = perHour
        self.perMinute = perMinute
    }

    /// The total in kcal, `nil` when the machine says it is not available.
    public var totalKilocalories: Double? { total == Self.notAvailable ? nil : Double(total) }

    init(reading reader: inout ByteReader) throws(DecodeError) {
        total = try reader.readUInt16("total_energy")
        perHour = try reader.readUInt16("energy_per_hour")
        perMinute = try reader.readUInt8("energy_per_minute")
    }

    func write(to writer: inout ByteWriter) {
        writer.write(total)
        writer.write(perHour)
        writer.write(perMinute)
    }

    var fields: [Field] {
        [
            Field("total_energy", .optional(total == Self.notAvailable ? nil : total), unit: "kcal"),
            Field("energy_per_hour", .optional(perHour == Self.notAvailable ? nil : perHour), unit: "kcal/h"),
            Field(
                "energy_per_minute", .optional(perMinute == Self.perMinuteNotAvailable ? nil : perMinute),
                unit: "kcal/min"),
        ]
    }
}

/// The fields every FTMS data characteristic ends with, in this order: expended energy, heart rate, metabolic
/// equivalent, elapsed time, remaining time (each under a flag of its own).
public struct FitnessMachineCommon: Equatable, Sendable {
    public var energy: FitnessMachineEnergy?
    /// Beats per minute.
    public var heartRate: UInt8?
    /// 0.1 MET.
    public var metabolicEquivalent: UInt8?
    /// Seconds since the session started.
    public var elapsedTime: UInt16?
    /// Seconds.
    public var remainingTime: UInt16?

    public init(
        energy: FitnessMachineEnergy? = nil, heartRate: UInt8? = nil, metabolicEquivalent: UInt8? = nil,
        elapsedTime: UInt16? = nil, remainingTime: UInt16? = nil
    ) {
        self.energy = energy
        self.heartRate = heartRate
        self.metabolicEquivalent = metabolicEquivalent
        self.elapsedTime = elapsedTime
        self.remainingTime = remainingTime
    }

    /// Reads the fields whose flags are set; `firstBit` is the flag of expended energy.
    init(reading reader: inout ByteReader, flags: UInt16, firstBit: UInt16) throws(DecodeError) {
        energy = flags & 1 << firstBit == 0 ? nil : try FitnessMachineEnergy(reading: &reader)
        heartRate = flags & 1 << (firstBit + 1) == 0 ? nil : try reader.readUInt8("heart_rate")
        metabolicEquivalent = flags & 1 << (firstBit + 2) == 0 ? nil : try reader.readUInt8("metabolic_equivalent")
        elapsedTime = flags & 1 << (firstBit + 3) == 0 ? nil : try reader.readUInt16("elapsed_time")
        remainingTime = flags & 1 << (firstBit + 4) == 0 ? nil : try reader.readUInt16("remaining_time")
    }

    func flags(firstBit: UInt16) -> UInt16 {
        var flags: UInt16 = 0
        if energy != nil { flags |= 1 << firstBit }
        if heartRate != nil { flags |= 1 << (firstBit + 1) }
        if metabolicEquivalent != nil { flags |= 1 << (firstBit + 2) }
        if elapsedTime != nil { flags |= 1 << (firstBit + 3) }
        if remainingTime != nil { flags |= 1 << (firstBit + 4) }
        return flags
    }

    func write(to writer: inout ByteWriter) {
        energy?.write(to: &writer)
        if let heartRate { writer.write(heartRate) }
        if let metabolicEquivalent { writer.write(metabolicEquivalent) }
        if let elapsedTime { writer.write(elapsedTime) }
        if let remainingTime { writer.write(remainingTime) }
    }

    var fields: [Field] {
        (energy?.fields
            ?? [
                Field("total_energy", .null, unit: "kcal"), Field("energy_per_hour", .null, unit: "kcal/h"),
                Field("energy_per_minute", .null, unit: "kcal/min"),
            ]) + [
                Field("heart_rate", .optional(heartRate), unit: "count/min"),
                Field("metabolic_equivalent", .optional(metabolicEquivalent.map { Double($0) / 10 }), unit: "MET"),
                Field("elapsed_time", .optional(elapsedTime), unit: "s"),
                Field("remaining_time", .optional(remainingTime), unit: "s"),
            ]
    }
}

extension ByteReader {
    /// Reads a little-endian sint16 (two's complement).
    @inline(__always)
    mutating func readInt16(_ field: StaticString) throws(DecodeError) -> Int16 {
        Int16(bitPattern: try readUInt16(field))
    }
}

/// The largest uint24.
let uint24Max: UInt32 = 0xFF_FFFF

/// A speed in 0.01 km/h as m/s.
func kilometresPerHundredthHourToMetresPerSecond(_ value: UInt16) -> Double { Double(value) / 360 }

/// Treadmill Data (0x2ACD, notified about once a second while the belt runs).
///
/// ```
/// offset  size  field
/// 0       2     flags                 bit0 more data (0: instantaneous speed present), bit1 average speed,
///                                     bit2 total distance, bit3 inclination and ramp angle, bit4 elevation gain,
///                                     bit5 instantaneous pace, bit6 average pace, bit7 expended energy,
///                                     bit8 heart rate, bit9 metabolic equivalent, bit10 elapsed time,
///                                     bit11 remaining time, bit12 force on belt and power output, 13-15 reserved
/// +       0|2   instantaneous speed   uint16, 0.01 km/h              iff bit0 == 0
/// +       0|2   average speed         uint16, 0.01 km/h
/// +       0|3   total distance        uint24, m
/// +       0|4   inclination, ramp     sint16 0.1 %, sint16 0.1 degree
/// +       0|4   elevation gain        uint16 0.1 m positive, uint16 0.1 m negative
/// +       0|2   instantaneous pace    uint16 (see docs/gatt-fitness-machines.md on its width)
/// +       0|2   average pace          uint16
/// +       0|5   expended energy       uint16 kcal total, uint16 kcal/h, uint8 kcal/min
/// +       0|1   heart rate            uint8, 1/min
/// +       0|1   metabolic equivalent  uint8, 0.1
/// +       0|2   elapsed time          uint16, s
/// +       0|2   remaining time        uint16, s
/// +       0|4   force, power          sint16 N, sint16 W
/// ```
public struct TreadmillData: CharacteristicValue {
    public static let uuid = BluetoothUUID.treadmillData
    public static let name = "treadmill-data"

    public struct Incline: Equatable, Sendable {
        /// 0.1 %.
        public var inclination: Int16
        /// 0.1 degree.
        public var rampAngle: Int16
        public init(inclination: Int16, rampAngle: Int16) {
            self.inclination = inclination
            self.rampAngle = rampAngle
        }
    }

    public struct ElevationGain: Equatable, Sendable {
        /// 0.1 m.
        public var positive: UInt16
        /// 0.1 m.
        public var negative: UInt16
        public init(positive: UInt16, negative: UInt16) {
            self.positive = positive
            self.negative = negative
        }
    }

    public struct ForceAndPower: Equatable, Sendable {
        /// N.
        public var forceOnBelt: Int16
        /// W.
        public var powerOutput: Int16
        public init(forceOnBelt: Int16, powerOutput: Int16) {
            self.forceOnBelt = forceOnBelt
            self.powerOutput = powerOutput
        }
    }

    /// 0.01 km/h; `nil` when the flags' bit 0 (more data) is set.
    public var instantaneousSpeed: UInt16?
    /// 0.01 km/h.
    public var averageSpeed: UInt16?
    /// Metres since the session started (uint24).
    public var totalDistance: UInt32?
    public var incline: Incline?
    public var elevationGain: ElevationGain?
    public var instantaneousPace: UInt16?
    public var averagePace: UInt16?
    public var common: FitnessMachineCommon
    public var forceAndPower: ForceAndPower?
    /// Flags bits 13-15, reserved.
    public var reservedFlags: UInt16

    public init(
        instantaneousSpeed: UInt16? = nil, averageSpeed: UInt16? = nil, totalDistance: UInt32? = nil,
        incline: Incline? = nil, elevationGain: ElevationGain? = nil, instantaneousPace: UInt16? = nil,
        averagePace: UInt16? = nil, common: FitnessMachineCommon = FitnessMachineCommon(),
        forceAndPower: ForceAndPower? = nil, reservedFlags: UInt16 = 0
    ) {
        self.instantaneousSpeed = instantaneousSpeed
        self.averageSpeed = averageSpeed
        self.totalDistance = totalDistance.map { $0 & uint24Max }
        self.incline = incline
        self.elevationGain = elevationGain
        self.instantaneousPace = instantaneousPace
        self.averagePace = averagePace
        self.common = common
        self.forceAndPower = forceAndPower
        self.reservedFlags = reservedFlags & 0xE000
    }

    public init(decoding bytes: borrowing [UInt8]) throws(DecodeError) {
        guard !bytes.isEmpty else { throw .empty }
        self = try ByteReader.read(bytes) { (reader) throws(DecodeError) in try Self(reading: &reader) }
    }

    private init(reading reader: inout ByteReader) throws(DecodeError) {
        let flags = try reader.readUInt16("flags")
        instantaneousSpeed = flags & 0x0001 != 0 ? nil : try reader.readUInt16("instantaneous_speed")
        averageSpeed = flags & 0x0002 == 0 ? nil : try reader.readUInt16("average_speed")
        totalDistance = flags & 0x0004 == 0 ? nil : try reader.readUInt24("total_distance")
        if flags & 0x0008 != 0 {
            incline = Incline(
                inclination: try reader.readInt16("inclination"),
                rampAngle: try reader.readInt16("ramp_angle_setting"))
        } else {
            incline = nil
        }
        if flags & 0x0010 != 0 {
            elevationGain = ElevationGain(
                positive: try reader.readUInt16("positive_elevation_gain"),
                negative: try reader.readUInt16("negative_elevation_gain"))
        } else {
            elevationGain = nil
        }
        instantaneousPace = flags & 0x0020 == 0 ? nil : try reader.readUInt16("instantaneous_pace")
        averagePace = flags & 0x0040 == 0 ? nil : try reader.readUInt16("average_pace")
        common = try FitnessMachineCommon(reading: &reader, flags: flags, firstBit: 7)
        if flags & 0x1000 != 0 {
            forceAndPower = ForceAndPower(
                forceOnBelt: try reader.readInt16("force_on_belt"), powerOutput: try reader.readInt16("power_output"))
        } else {
            forceAndPower = nil
        }
        reservedFlags = flags & 0xE000
    }

    public var flags: UInt16 {
        var flags = reservedFlags & 0xE000 | common.flags(firstBit: 7)
        if instantaneousSpeed == nil { flags |= 0x0001 }
        if averageSpeed != nil { flags |= 0x0002 }
        if totalDistance != nil { flags |= 0x0004 }
        if incline != nil { flags |= 0x0008 }
        if elevationGain != nil { flags |= 0x0010 }
        if instantaneousPace != nil { flags |= 0x0020 }
        if averagePace != nil { flags |= 0x0040 }
        if forceAndPower != nil { flags |= 0x1000 }
        return flags
    }

    public func encoded() -> [UInt8] {
        var writer = ByteWriter(capacity: 34)
        writer.write(flags)
        if let instantaneousSpeed { writer.write(instantaneousSpeed) }
        if let averageSpeed { writer.write(averageSpeed) }
        if let totalDistance { writer.writeUInt24(totalDistance) }
        if let incline {
            writer.write(UInt16(bitPattern: incline.inclination))
            writer.write(UInt16(bitPattern: incline.rampAngle))
        }
        if let elevationGain {
            writer.write(elevationGain.positive)
            writer.write(elevationGain.negative)
        }
        if let instantaneousPace { writer.write(instantaneousPace) }
        if let averagePace { writer.write(averagePace) }
        common.write(to: &writer)
        if let forceAndPower {
            writer.write(UInt16(bitPattern: forceAndPower.forceOnBelt))
            writer.write(UInt16(bitPattern: forceAndPower.powerOutput))
        }
        return writer.bytes
    }

    /// The instantaneous speed in m/s.
    public var metresPerSecond: Double? { instantaneousSpeed.map(kilometresPerHundredthHourToMetresPerSecond) }
    /// The inclination as a fraction (0.05 for 5 %).
    public var inclinationFraction: Double? { incline.map { Double($0.inclination) / 1000 } }

    public var fields: [Field] {
        [
            Field("flags", .int(flags)),
            Field("more_data", .bool(instantaneousSpeed == nil)),
            Field("instantaneous_speed", .optional(instantaneousSpeed.map { Double($0) / 100 }), unit: "km/h"),
            Field("average_speed", .optional(averageSpeed.map { Double($0) / 100 }), unit: "km/h"),
            Field("total_distance", .optional(totalDistance), unit: "m"),
            Field("inclination", .optional(incline.map { Double($0.inclination) / 10 }), unit: "%"),
            Field("ramp_angle_setting", .optional(incline.map { Double($0.rampAngle) / 10 }), unit: "deg"),
            Field("positive_elevation_gain", .optional(elevationGain.map { Double($0.positive) / 10 }), unit: "m"),
            Field("negative_elevation_gain", .optional(elevationGain.map { Double($0.negative) / 10 }), unit: "m"),
            Field("instantaneous_pace", .optional(instantaneousPace)),
            Field("average_pace", .optional(averagePace)),
        ] + common.fields + [
            Field("force_on_belt", .optional(forceAndPower?.forceOnBelt), unit: "N"),
            Field("power_output", .optional(forceAndPower?.powerOutput), unit: "W"),
            Field("reserved_flags", .int(reservedFlags)),
        ]
    }
}

/// Indoor Bike Data (0x2AD2, notified by bike trainers and exercise bikes).
///
/// ```
/// offset  size  field
/// 0       2     flags                 bit0 more data (0: instantaneous speed present), bit1 average speed,
///                                     bit2 instantaneous cadence, bit3 average cadence, bit4 total distance,
///                                     bit5 resistance level, bit6 instantaneous power, bit7 average power,
///                                     bit8 expended energy, bit9 heart rate, bit10 metabolic equivalent,
///                                     bit11 elapsed time, bit12 remaining time, 13-15 reserved
/// +       0|2   instantaneous speed   uint16, 0.01 km/h             iff bit0 == 0
/// +       0|2   average speed         uint16, 0.01 km/h
/// +       0|2   instantaneous cadence uint16, 0.5 /min
/// +       0|2   average cadence       uint16, 0.5 /min
/// +       0|3   total distance        uint24, m
/// +       0|2   resistance level      sint16, unitless
/// +       0|2   instantaneous power   sint16, W
/// +       0|2   average power         sint16, W
/// +       0|5   expended energy       uint16 kcal total, uint16 kcal/h, uint8 kcal/min
/// +       0|1   heart rate            uint8, 1/min
/// +       0|1   metabolic equivalent  uint8, 0.1
/// +       0|2   elapsed time          uint16, s
/// +       0|2   remaining time        uint16, s
/// ```
public struct IndoorBikeData: CharacteristicValue {
    public static let uuid = BluetoothUUID.indoorBikeData
    public static let name = "indoor-bike-data"

    /// 0.01 km/h; `nil` when the flags' bit 0 (more data) is set.
    public var instantaneousSpeed: UInt16?
    public var averageSpeed: UInt16?
    /// 0.5 /min.
    public var instantaneousCadence: UInt16?
    /// 0.5 /min.
    public var averageCadence: UInt16?
    /// Metres since the session started (uint24).
    public var totalDistance: UInt32?
    public var resistanceLevel: Int16?
    /// W.
    public var instantaneousPower: Int16?
    /// W.
    public var averagePower: Int16?
    public var common: FitnessMachineCommon
    /// Flags bits 13-15, reserved.
    public var reservedFlags: UInt16

    public init(
        instantaneousSpeed: UInt16? = nil, averageSpeed: UInt16? = nil, instantaneousCadence: UInt16? = nil,
        averageCadence: UInt16? = nil, totalDistance: UInt32? = nil, resistanceLevel: Int16? = nil,
        instantaneousPower: Int16? = nil, averagePower: Int16? = nil,
        common: FitnessMachineCommon = FitnessMachineCommon(), reservedFlags: UInt16 = 0
    ) {
        self.instantaneousSpeed = instantaneousSpeed
        self.averageSpeed = averageSpeed
        self.instantaneousCadence = instantaneousCadence
        self.averageCadence = averageCadence
        self.totalDistance = totalDistance.map { $0 & uint24Max }
        self.resistanceLevel = resistanceLevel
        self.instantaneousPower = instantaneousPower
        self.averagePower = averagePower
        self.common = common
        self.reservedFlags = reservedFlags & 0xE000
    }

    public init(decoding bytes: borrowing [UInt8]) throws(DecodeError) {
        guard !bytes.isEmpty else { throw .empty }
        self = try ByteReader.read(bytes) { (reader) throws(DecodeError) in try Self(reading: &reader) }
    }

    private init(reading reader: inout ByteReader) throws(DecodeError) {
        let flags = try reader.readUInt16("flags")
        instantaneousSpeed = flags & 0x0001 != 0 ? nil : try reader.readUInt16("instantaneous_speed")
        averageSpeed = flags & 0x0002 == 0 ? nil : try reader.readUInt16("average_speed")
        instantaneousCadence = flags & 0x0004 == 0 ? nil : try reader.readUInt16("instantaneous_cadence")
        averageCadence = flags & 0x0008 == 0 ? nil : try reader.readUInt16("average_cadence")
        totalDistance = flags & 0x0010 == 0 ? nil : try reader.readUInt24("total_distance")
        resistanceLevel = flags & 0x0020 == 0 ? nil : try reader.readInt16("resistance_level")
        instantaneousPower = flags & 0x0040 == 0 ? nil : try reader.readInt16("instantaneous_power")
        averagePower = flags & 0x0080 == 0 ? nil : try reader.readInt16("average_power")
        common = try FitnessMachineCommon(reading: &reader, flags: flags, firstBit: 8)
        reservedFlags = flags & 0xE000
    }

    public var flags: UInt16 {
        var flags = reservedFlags & 0xE000 | common.flags(firstBit: 8)
        if instantaneousSpeed == nil { flags |= 0x0001 }
        if averageSpeed != nil { flags |= 0x0002 }
        if instantaneousCadence != nil { flags |= 0x0004 }
        if averageCadence != nil { flags |= 0x0008 }
        if totalDistance != nil { flags |= 0x0010 }
        if resistanceLevel != nil { flags |= 0x0020 }
        if instantaneousPower != nil { flags |= 0x0040 }
        if averagePower != nil { flags |= 0x0080 }
        return flags
    }

    public func encoded() -> [UInt8] {
        var writer = ByteWriter(capacity: 30)
        writer.write(flags)
        if let instantaneousSpeed { writer.write(instantaneousSpeed) }
        if let averageSpeed { writer.write(averageSpeed) }
        if let instantaneousCadence { writer.write(instantaneousCadence) }
        if let averageCadence { writer.write(averageCadence) }
        if let totalDistance { writer.writeUInt24(totalDistance) }
        for signed in [resistanceLevel, instantaneousPower, averagePower] {
            if let signed { writer.write(UInt16(bitPattern: signed)) }
        }
        common.write(to: &writer)
        return writer.bytes
    }

    /// The instantaneous speed in m/s.
    public var metresPerSecond: Double? { instantaneousSpeed.map(kilometresPerHundredthHourToMetresPerSecond) }
    /// The instantaneous cadence in revolutions per minute.
    public var cadencePerMinute: Double? { instantaneousCadence.map { Double($0) / 2 } }

    public var fields: [Field] {
        [
            Field("flags", .int(flags)),
            Field("more_data", .bool(instantaneousSpeed == nil)),
            Field("instantaneous_speed", .optional(instantaneousSpeed.map { Double($0) / 100 }), unit: "km/h"),
            Field("average_speed", .optional(averageSpeed.map { Double($0) / 100 }), unit: "km/h"),
            Field("instantaneous_cadence", .optional(cadencePerMinute), unit: "count/min"),
            Field("average_cadence", .optional(averageCadence.map { Double($0) / 2 }), unit: "count/min"),
            Field("total_distance", .optional(totalDistance), unit: "m"),
            Field("resistance_level", .optional(resistanceLevel)),
            Field("instantaneous_power", .optional(instantaneousPower), unit: "W"),
            Field("average_power", .optional(averagePower), unit: "W"),
        ] + common.fields + [Field("reserved_flags", .int(reservedFlags))]
    }
}

/// Rower Data (0x2AD1, notified by rowing machines).
///
/// ```
/// offset  size  field
/// 0       2     flags                 bit0 more data (0: stroke rate and count present), bit1 average stroke
///                                     rate, bit2 total distance, bit3 instantaneous pace, bit4 average pace,
///                                     bit5 instantaneous power, bit6 average power, bit7 resistance level,
///                                     bit8 expended energy, bit9 heart rate, bit10 metabolic equivalent,
///                                     bit11 elapsed time, bit12 remaining time, 13-15 reserved
/// +       0|3   stroke rate, count    uint8 0.5 /min, uint16        iff bit0 == 0
/// +       0|1   average stroke rate   uint8, 0.5 /min
/// +       0|3   total distance        uint24, m
/// +       0|2   instantaneous pace    uint16, s per 500 m
/// +       0|2   average pace          uint16, s per 500 m
/// +       0|2   instantaneous power   sint16, W
/// +       0|2   average power         sint16, W
/// +       0|2   resistance level      sint16, unitless
/// +       0|5   expended energy       uint16 kcal total, uint16 kcal/h, uint8 kcal/min
/// +       0|1   heart rate            uint8, 1/min
/// +       0|1   metabolic equivalent  uint8, 0.1
/// +       0|2   elapsed time          uint16, s
/// +       0|2   remaining time        uint16, s
/// ```
public struct RowerData: CharacteristicValue {
    public static let uuid = BluetoothUUID.rowerData
    public static let name = "rower-data"

    public struct Strokes: Equatable, Sendable {
        /// 0.5 /min.
        public var rate: UInt8
        /// Strokes since the session started.
        public var count: UInt16
        public init(rate: UInt8, count: UInt16) {
            self.rate = rate
            self.count = count
        }
    }

    /// `nil` when the flags' bit 0 (more data) is set.
    public var strokes: Strokes?
    /// 0.5 /min.
    public var averageStrokeRate: UInt8?
    /// Metres since the session started (uint24).
    public var totalDistance: UInt32?
    /// Seconds per 500 m.
    public var instantaneousPace: UInt16?
    /// Seconds per 500 m.
    public var averagePace: UInt16?
    public var instantaneousPower: Int16?
    public var averagePower: Int16?
    public var resistanceLevel: Int16?
    public var common: FitnessMachineCommon
    /// Flags bits 13-15, reserved.
    public var reservedFlags: UInt16

    public init(
        strokes: Strokes? = nil, averageStrokeRate: UInt8? = nil, totalDistance: UInt32? = nil,
        instantaneousPace: UInt16? = nil, averagePace: UInt16? = nil, instantaneousPower: Int16? = nil,
        averagePower: Int16? = nil, resistanceLevel: Int16? = nil,
        common: FitnessMachineCommon = FitnessMachineCommon(), reservedFlags: UInt16 = 0
    ) {
        self.strokes = strokes
        self.averageStrokeRate = averageStrokeRate
        self.totalDistance = totalDistance.map { $0 & uint24Max }
        self.instantaneousPace = instantaneousPace
        self.averagePace = averagePace
        self.instantaneousPower = instantaneousPower
        self.averagePower = averagePower
        self.resistanceLevel = resistanceLevel
        self.common = common
        self.reservedFlags = reservedFlags & 0xE000
    }

    public init(decoding bytes: borrowing [UInt8]) throws(DecodeError) {
        guard !bytes.isEmpty else { throw .empty }
        self = try ByteReader.read(bytes) { (reader) throws(DecodeError) in try Self(reading: &reader) }
    }

    private init(reading reader: inout ByteReader) throws(DecodeError) {
        let flags = try reader.readUInt16("flags")
        if flags & 0x0001 == 0 {
            strokes = Strokes(rate: try reader.readUInt8("stroke_rate"), count: try reader.readUInt16("stroke_count"))
        } else {
            strokes = nil
        }
        averageStrokeRate = flags & 0x0002 == 0 ? nil : try reader.readUInt8("average_stroke_rate")
        totalDistance = flags & 0x0004 == 0 ? nil : try reader.readUInt24("total_distance")
        instantaneousPace = flags & 0x0008 == 0 ? nil : try reader.readUInt16("instantaneous_pace")
        averagePace = flags & 0x0010 == 0 ? nil : try reader.readUInt16("average_pace")
        instantaneousPower = flags & 0x0020 == 0 ? nil : try reader.readInt16("instantaneous_power")
        averagePower = flags & 0x0040 == 0 ? nil : try reader.readInt16("average_power")
        resistanceLevel = flags & 0x0080 == 0 ? nil : try reader.readInt16("resistance_level")
        common = try FitnessMachineCommon(reading: &reader, flags: flags, firstBit: 8)
        reservedFlags = flags & 0xE000
    }

    public var flags: UInt16 {
        var flags = reservedFlags & 0xE000 | common.flags(firstBit: 8)
        if strokes == nil { flags |= 0x0001 }
        if averageStrokeRate != nil { flags |= 0x0002 }
        if totalDistance != nil { flags |= 0x0004 }
        if instantaneousPace != nil { flags |= 0x0008 }
        if averagePace != nil { flags |= 0x0010 }
        if instantaneousPower != nil { flags |= 0x0020 }
        if averagePower != nil { flags |= 0x0040 }
        if resistanceLevel != nil { flags |= 0x0080 }
        return flags
    }

    public func encoded() -> [UInt8] {
        var writer = ByteWriter(capacity: 30)
        writer.write(flags)
        if let strokes {
            writer.write(strokes.rate)
            writer.write(strokes.count)
        }
        if let averageStrokeRate { writer.write(averageStrokeRate) }
        if let totalDistance { writer.writeUInt24(totalDistance) }
        if let instantaneousPace { writer.write(instantaneousPace) }
        if let averagePace { writer.write(averagePace) }
        for signed in [instantaneousPower, averagePower, resistanceLevel] {
            if let signed { writer.write(UInt16(bitPattern: signed)) }
        }
        common.write(to: &writer)
        return writer.bytes
    }

    public var fields: [Field] {
        [
            Field("flags", .int(flags)),
            Field("more_data", .bool(strokes == nil)),
            Field("stroke_rate", .optional(strokes.map { Double($0.rate) / 2 }), unit: "count/min"),
            Field("stroke_count", .optional(strokes?.count), unit: "count"),
            Field("average_stroke_rate", .optional(averageStrokeRate.map { Double($0) / 2 }), unit: "count/min"),
            Field("total_distance", .optional(totalDistance), unit: "m"),
            Field("instantaneous_pace", .optional(instantaneousPace), unit: "s/500m"),
            Field("average_pace", .optional(averagePace), unit: "s/500m"),
            Field("instantaneous_power", .optional(instantaneousPower), unit: "W"),
            Field("average_power", .optional(averagePower), unit: "W"),
            Field("resistance_level", .optional(resistanceLevel)),
        ] + common.fields + [Field("reserved_flags", .int(reservedFlags))]
    }
}

/// Fitness Machine Status (0x2ADA, notified): an op code and its parameter.
///
/// Known op codes have a parameter of a fixed size: fewer bytes are truncated, more are ignored (as in every
/// variable-length value). A reserved op code keeps whatever follows it, so that it re-encodes as received.
public struct FitnessMachineStatus: CharacteristicValue {
    public static let uuid = BluetoothUUID.fitnessMachineStatus
    public static let name = "fitness-machine-status"

    public enum OpCode: UInt8, Sendable, CaseIterable {
        case reset = 0x01
        /// Parameter uint8: 1 stopped, 2 paused.
        case stoppedOrPausedByUser = 0x02
        case stoppedBySafetyKey = 0x03
        case startedOrResumedByUser = 0x04
        /// uint16, 0.01 km/h.
        case targetSpeedChanged = 0x05
        /// sint16, 0.1 %.
        case targetInclineChanged = 0x06
        /// uint8, 0.1.
        case targetResistanceLevelChanged = 0x07
        /// sint16, W.
        case targetPowerChanged = 0x08
        /// uint8, 1/min.
        case targetHeartRateChanged = 0x09
        /// uint16, cal.
        case targetedExpendedEnergyChanged = 0x0A
        case targetedNumberOfStepsChanged = 0x0B
        case targetedNumberOfStridesChanged = 0x0C
        /// uint24, m.
        case targetedDistanceChanged = 0x0D
        /// uint16, s.
        case targetedTrainingTimeChanged = 0x0E
        case targetedTimeInTwoHeartRateZonesChanged = 0x0F
        case targetedTimeInThreeHeartRateZonesChanged = 0x10
        case targetedTimeInFiveHeartRateZonesChanged = 0x11
        /// Wind speed sint16 0.001 m/s, grade sint16 0.01 %, rolling resistance uint8 0.0001, wind resistance
        /// uint8 0.01 kg/m.
        case indoorBikeSimulationParametersChanged = 0x12
        /// uint16, 0.1 mm.
        case wheelCircumferenceChanged = 0x13
        /// uint8: 1 spin down requested, 2 success, 3 error, 4 stop pedalling.
        case spinDownStatus = 0x14
        /// uint16, 0.5 /min.
        case targetedCadenceChanged = 0x15
        case controlPermissionLost = 0xFF

        /// The size of the op code's parameter.
        public var parameterLength: Int {
            switch self {
            case .reset, .stoppedBySafetyKey, .startedOrResumedByUser, .controlPermissionLost: 0
            case .stoppedOrPausedByUser, .targetResistanceLevelChanged, .targetHeartRateChanged, .spinDownStatus: 1
            case .targetSpeedChanged, .targetInclineChanged, .targetPowerChanged, .targetedExpendedEnergyChanged,
                .targetedNumberOfStepsChanged, .targetedNumberOfStridesChanged, .targetedTrainingTimeChanged,
                .wheelCircumferenceChanged, .targetedCadenceChanged:
                2
            case .targetedDistanceChanged: 3
            case .targetedTimeInTwoHeartRateZonesChanged: 4
            case .targetedTimeInThreeHeartRateZonesChanged, .indoorBikeSimulationParametersChanged: 6
            case .targetedTimeInFiveHeartRateZonesChanged: 10
            }
        }

        /// The snake_case name, as `wearhouse decode` prints it.
        public var label: String {
            var label = ""
            for character in String(describing: self) {
                if character.isUppercase {
                    label += "_" + character.lowercased()
                } else {
                    label.append(character)
                }
            }
            return label
        }
    }

    /// The op code as sent (a reserved one too).
    public var opCodeValue: UInt8
    public var parameter: [UInt8]

    /// A status; a known op code's parameter is cut or zero-padded to its size.
    public init(opCode: UInt8, parameter: [UInt8] = []) {
        opCodeValue = opCode
        if let known = OpCode(rawValue: opCode) {
            let length = known.parameterLength
            self.parameter =
                Array(parameter.prefix(length)) + [UInt8](repeating: 0, count: max(0, length - parameter.count))
        } else {
            self.parameter = parameter
        }
    }

    public init(_ opCode: OpCode, parameter: [UInt8] = []) {
        self.init(opCode: opCode.rawValue, parameter: parameter)
    }

    /// Stopped (`paused: false`) or paused by the user.
    public static func stoppedByUser(paused: Bool = false) -> FitnessMachineStatus {
        FitnessMachineStatus(.stoppedOrPausedByUser, parameter: [paused ? 2 : 1])
    }

    public init(decoding bytes: borrowing [UInt8]) throws(DecodeError) {
        guard !bytes.isEmpty else { throw .empty }
        (opCodeValue, parameter) = try ByteReader.read(bytes) { (reader) throws(DecodeError) in
            let code = try reader.readUInt8("op_code")
            guard let known = OpCode(rawValue: code) else { return (code, reader.readRemaining()) }
            return (code, try reader.readBytes("parameter", count: known.parameterLength))
        }
    }

    public var opCode: OpCode? { OpCode(rawValue: opCodeValue) }

    public func encoded() -> [UInt8] { [opCodeValue] + parameter }

    /// What the status means for a session on the machine.
    public enum SessionEvent: Equatable, Sendable {
        case started
        case paused
        case stopped
        case reset
    }

    /// The session event, `nil` for a status that is not one (a target changed, spin down, ...).
    public var sessionEvent: SessionEvent? {
        switch opCode {
        case .startedOrResumedByUser: .started
        case .stoppedOrPausedByUser: parameter.first == 2 ? .paused : .stopped
        case .stoppedBySafetyKey: .stopped
        case .reset: .reset
        default: nil
        }
    }

    private var uint16Parameter: UInt16? {
        guard parameter.count >= 2 else { return nil }
        return UInt16(parameter[0]) | UInt16(parameter[1]) << 8
    }

    public var fields: [Field] {
        var fields = [
            Field("op_code", .int(opCodeValue)),
            Field("status", .string(opCode?.label ?? "reserved")),
            Field("parameter", .list(parameter.map { .int($0) })),
        ]
        switch opCode {
        case .stoppedOrPausedByUser:
            fields.append(
                Field("control", .string(parameter.first == 2 ? "pause" : parameter.first == 1 ? "stop" : "reserved")))
        case .targetSpeedChanged:
            fields.append(Field("target_speed", .optional(uint16Parameter.map { Double($0) / 100 }), unit: "km/h"))
        case .targetInclineChanged:
            fields.append(
                Field(
                    "target_inclination", .optional(uint16Parameter.map { Double(Int16(bitPattern: $0)) / 10 }),
                    unit: "%"))
        case .targetPowerChanged:
            fields.append(Field("target_power", .optional(uint16Parameter.map { Int16(bitPattern: $0) }), unit: "W"))
        case .targetedDistanceChanged where parameter.count == 3:
            let metres = UInt32(parameter[0]) | UInt32(parameter[1]) << 8 | UInt32(parameter[2]) << 16
            fields.append(Field("targeted_distance", .int(metres), unit: "m"))
        default:
            break
        }
        return fields
    }
}
