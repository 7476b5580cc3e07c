/// Cycling Power Measurement (0x2A63), notified by power meters and bike trainers (Cycling Power service 0x1818).
///
/// ```
/// offset  size  field
/// 0       2     flags                    bit0 pedal power balance present, bit1 balance reference is left,
///                                        bit2 accumulated torque present, bit3 torque source is crank (else wheel),
///                                        bit4 wheel data, bit5 crank data, bit6 extreme forces, bit7 extreme
///                                        torques, bit8 extreme angles, bit9 top dead spot, bit10 bottom dead spot,
///                                        bit11 accumulated energy, bit12 offset compensation indicator, 13-15 reserved
/// 2       2     instantaneous power      sint16, W (mandatory)
/// +       0|1   pedal power balance      uint8, 1/2 %                        iff bit0
/// +       0|2   accumulated torque       uint16, 1/32 N·m                    iff bit2
/// +       0|4   wheel revolutions        uint32                              } iff bit4
/// +       0|2   last wheel event time    uint16, 1/2048 s (not CSC's 1/1024) }
/// +       0|2   crank revolutions        uint16                              } iff bit5
/// +       0|2   last crank event time    uint16, 1/1024 s                    }
/// +       0|4   maximum, minimum force   sint16 each, N                      iff bit6
/// +       0|4   maximum, minimum torque  sint16 each, 1/32 N·m               iff bit7
/// +       0|3   maximum, minimum angle   uint12 each, degrees (maximum in the low 12 bits)  iff bit8
/// +       0|2   top dead spot angle      uint16, degrees                     iff bit9
/// +       0|2   bottom dead spot angle   uint16, degrees                     iff bit10
/// +       0|2   accumulated energy       uint16, kJ, cumulative              iff bit11
/// ```
///
/// The layout and its units are in `docs/gatt-fitness-machines.md`. Flags bits 1 and 3 qualify a field but are
/// kept whether or not it is present, so that every value re-encodes to its own bytes.
public struct CyclingPowerMeasurement: CharacteristicValue {
    public static let uuid = BluetoothUUID.cyclingPowerMeasurement
    public static let name = "cycling-power-measurement"

    public struct WheelData: Equatable, Sendable {
        public var cumulativeRevolutions: UInt32
        /// 1/2048 s, wraps every 32 s.
        public var lastEventTime: UInt16
        public init(cumulativeRevolutions: UInt32, lastEventTime: UInt16) {
            self.cumulativeRevolutions = cumulativeRevolutions
            self.lastEventTime = lastEventTime
        }
    }

    /// A maximum and a minimum of a signed quantity (force in N, torque in 1/32 N·m).
    public struct Extremes: Equatable, Sendable {
        public var maximum: Int16
        public var minimum: Int16
        public init(maximum: Int16, minimum: Int16) {
            self.maximum = maximum
            self.minimum = minimum
        }
    }

    /// The crank angles at the maximum and minimum force or torque, 12 bits each, degrees.
    public struct Angles: Equatable, Sendable {
        public var maximum: UInt16
        public var minimum: UInt16
        /// Keeps the low 12 bits of each (the wire holds no more).
        public init(maximum: UInt16, minimum: UInt16) {
            self.maximum = maximum & 0x0FFF
            self.minimum = minimum & 0x0FFF
        }
    }

    /// Watts; negative when the rider brakes against a trainer's motor.
    public var instantaneousPower: Int16
    /// The share of the pedal named by ``balanceReferenceIsLeft`` in 1/2 %.
    public var pedalPowerBalance: UInt8?
    /// Flags bit 1: the balance is the left pedal's (else the reference is unknown).
    public var balanceReferenceIsLeft: Bool
    /// 1/32 N·m, cumulative, wraps at 2^16.
    public var accumulatedTorque: UInt16?
    /// Flags bit 3: torque measured at the crank (else at the wheel).
    public var torqueSourceIsCrank: Bool
    public var wheel: WheelData?
    /// Crank revolutions and event time in 1/1024 s, as in CSC.
    public var crank: CSCMeasurement.CrankData?
    public var extremeForces: Extremes?
    public var extremeTorques: Extremes?
    public var extremeAngles: Angles?
    public var topDeadSpotAngle: UInt16?
    public var bottomDeadSpotAngle: UInt16?
    /// kJ since the sensor's last reset, wraps at 2^16.
    public var accumulatedEnergy: UInt16?
    /// Flags bit 12.
    public var offsetCompensationIndicator: Bool
    /// Flags bits 13-15, reserved.
    public var reservedFlags: UInt16

    public init(
        instantaneousPower: Int16, pedalPowerBalance: UInt8? = nil, balanceReferenceIsLeft: Bool = false,
        accumulatedTorque: UInt16? = nil, torqueSourceIsCrank: Bool = false, wheel: WheelData? = nil,
        crank: CSCMeasurement.CrankData? = nil, extremeForces: Extremes? = nil, extremeTorques: Extremes? = nil,
        extremeAngles: Angles? = nil, topDeadSpotAngle: UInt16? = nil, bottomDeadSpotAngle: UInt16? = nil,
        accumulatedEnergy: UInt16? = nil, offsetCompensationIndicator: Bool = false, reservedFlags: UInt16 = 0
    ) {
        self.instantaneousPower = instantaneousPower
        self.pedalPowerBalance = pedalPowerBalance
        self.balanceReferenceIsLeft = balanceReferenceIsLeft
        self.accumulatedTorque = accumulatedTorque
        self.torqueSourceIsCrank = torqueSourceIsCrank
        self.wheel = wheel
        self.crank = crank
        self.extremeForces = extremeForces
        self.extremeTorques = extremeTorques
        self.extremeAngles = extremeAngles
        self.topDeadSpotAngle = topDeadSpotAngle
        self.bottomDeadSpotAngle = bottomDeadSpotAngle
        self.accumulatedEnergy = accumulatedEnergy
        self.offsetCompensationIndicator = offsetCompensationIndicator
        self.reservedFlags = reservedFlags & 0xE000
    }

    public init(decoding bytes: borrowing [UInt8]) throws(DecodeError) {
        guard !bytes.isEmpty else { throw .empty }
        self = try ByteReader.read(bytes) { (reader) throws(DecodeError) in try Self(reading: &reader) }
    }

    private init(reading reader: inout ByteReader) throws(DecodeError) {
        let flags = try reader.readUInt16("flags")
        instantaneousPower = Int16(bitPattern: try reader.readUInt16("instantaneous_power"))
        pedalPowerBalance = flags & 0x0001 == 0 ? nil : try reader.readUInt8("pedal_power_balance")
        balanceReferenceIsLeft = flags & 0x0002 != 0
        accumulatedTorque = flags & 0x0004 == 0 ? nil : try reader.readUInt16("accumulated_torque")
        torqueSourceIsCrank = flags & 0x0008 != 0
        if flags & 0x0010 != 0 {
            wheel = WheelData(
                cumulativeRevolutions: try reader.readUInt32("cumulative_wheel_revolutions"),
                lastEventTime: try reader.readUInt16("last_wheel_event_time"))
        } else {
            wheel = nil
        }
        if flags & 0x0020 != 0 {
            crank = CSCMeasurement.CrankData(
                cumulativeRevolutions: try reader.readUInt16("cumulative_crank_revolutions"),
                lastEventTime: try reader.readUInt16("last_crank_event_time"))
        } else {
            crank = nil
        }
        if flags & 0x0040 != 0 {
            extremeForces = Extremes(
                maximum: Int16(bitPattern: try reader.readUInt16("maximum_force_magnitude")),
                minimum: Int16(bitPattern: try reader.readUInt16("minimum_force_magnitude")))
        } else {
            extremeForces = nil
        }
        if flags & 0x0080 != 0 {
            extremeTorques = Extremes(
                maximum: Int16(bitPattern: try reader.readUInt16("maximum_torque_magnitude")),
                minimum: Int16(bitPattern: try reader.readUInt16("minimum_torque_magnitude")))
        } else {
            extremeTorques = nil
        }
        if flags & 0x0100 != 0 {
            let packed = try reader.readUInt24("extreme_angles")
            extremeAngles = Angles(
                maximum: UInt16(truncatingIfNeeded: packed & 0x0FFF),
                minimum: UInt16(truncatingIfNeeded: packed >> 12))
        } else {
            extremeAngles = nil
        }
        topDeadSpotAngle = flags & 0x0200 == 0 ? nil : try reader.readUInt16("top_dead_spot_angle")
        bottomDeadSpotAngle = flags & 0x0400 == 0 ? nil : try reader.readUInt16("bottom_dead_spot_angle")
        accumulatedEnergy = flags & 0x0800 == 0 ? nil : try reader.readUInt16("accumulated_energy")
        offsetCompensationIndicator = flags & 0x1000 != 0
        reservedFlags = flags & 0xE000
    }

    public var flags: UInt16 {
        var flags = reservedFlags & 0xE000
        if pedalPowerBalance != nil { flags |= 0x0001 }
        if balanceReferenceIsLeft { flags |= 0x0002 }
        if accumulatedTorque != nil { flags |= 0x0004 }
        if torqueSourceIsCrank { flags |= 0x0008 }
        if wheel != nil { flags |= 0x0010 }
        if crank != nil { flags |= 0x0020 }
        if extremeForces != nil { flags |= 0x0040 }
        if extremeTorques != nil { flags |= 0x0080 }
        if extremeAngles != nil { flags |= 0x0100 }
        if topDeadSpotAngle != nil { flags |= 0x0200 }
        if bottomDeadSpotAngle != nil { flags |= 0x0400 }
        if accumulatedEnergy != nil { flags |= 0x0800 }
        if offsetCompensationIndicator { flags |= 0x1000 }
        return flags
    }

    public func encoded() -> [UInt8] {
        var writer = ByteWriter(capacity: 34)
        writer.write(flags)
        writer.write(UInt16(bitPattern: instantaneousPower))
        if let pedalPowerBalance { writer.write(pedalPowerBalance) }
        if let accumulatedTorque { writer.write(accumulatedTorque) }
        if let wheel {
            writer.write(wheel.cumulativeRevolutions)
            writer.write(wheel.lastEventTime)
        }
        if let crank {
            writer.write(crank.cumulativeRevolutions)
            writer.write(crank.lastEventTime)
        }
        for extremes in [extremeForces, extremeTorques] {
            guard let extremes else { continue }
            writer.write(UInt16(bitPattern: extremes.maximum))
            writer.write(UInt16(bitPattern: extremes.minimum))
        }
        if let extremeAngles {
            writer.writeUInt24(UInt32(extremeAngles.maximum & 0x0FFF) | UInt32(extremeAngles.minimum & 0x0FFF) << 12)
        }
        if let topDeadSpotAngle { writer.write(topDeadSpotAngle) }
        if let bottomDeadSpotAngle { writer.write(bottomDeadSpotAngle) }
        if let accumulatedEnergy { writer.write(accumulatedEnergy) }
        return writer.bytes
    }

    /// The pedal power balance in percent.
    public var pedalPowerBalancePercent: Double? { pedalPowerBalance.map { Double($0) / 2 } }

    public var fields: [Field] {
        [
            Field("flags", .int(flags)),
            Field("instantaneous_power", .int(instantaneousPower), unit: "W"),
            Field("pedal_power_balance", .optional(pedalPowerBalancePercent), unit: "%"),
            Field("pedal_power_balance_reference", .string(balanceReferenceIsLeft ? "left" : "unknown")),
            Field("accumulated_torque", .optional(accumulatedTorque.map { Double($0) / 32 }), unit: "N.m"),
            Field("accumulated_torque_source", .string(torqueSourceIsCrank ? "crank" : "wheel")),
            Field("cumulative_wheel_revolutions", .optional(wheel?.cumulativeRevolutions), unit: "count"),
            Field("last_wheel_event_time", .optional(wheel?.lastEventTime), unit: "1/2048 s"),
            Field("cumulative_crank_revolutions", .optional(crank?.cumulativeRevolutions), unit: "count"),
            Field("last_crank_event_time", .optional(crank?.lastEventTime), unit: "1/1024 s"),
            Field("maximum_force_magnitude", .optional(extremeForces?.maximum), unit: "N"),
            Field("minimum_force_magnitude", .optional(extremeForces?.minimum), unit: "N"),
            Field(
                "maximum_torque_magnitude", .optional(extremeTorques.map { Double($0.maximum) / 32 }), unit: "N.m"),
            Field(
                "minimum_torque_magnitude", .optional(extremeTorques.map { Double($0.minimum) / 32 }), unit: "N.m"),
            Field("maximum_angle", .optional(extremeAngles?.maximum), unit: "deg"),
            Field("minimum_angle", .optional(extremeAngles?.minimum), unit: "deg"),
            Field("top_dead_spot_angle", .optional(topDeadSpotAngle), unit: "deg"),
            Field("bottom_dead_spot_angle", .optional(bottomDeadSpotAngle), unit: "deg"),
            Field("accumulated_energy", .optional(accumulatedEnergy), unit: "kJ"),
            Field("offset_compensation_indicator", .bool(offsetCompensationIndicator)),
            Field("reserved_flags", .int(reservedFlags)),
        ]
    }
}

/// Cycling Power Feature (0x2A65, read): 32 bits, exactly 4 bytes.
///
/// Bits 20-21 are a two-bit field (distributed system support: 0 unspecified, 1 not for distributed systems,
/// 2 for distributed systems, 3 reserved); bits 22-31 are reserved.
public struct CyclingPowerFeature: CharacteristicValue, OptionSet, Hashable {
    public static let uuid = BluetoothUUID.cyclingPowerFeature
    public static let name = "cycling-power-feature"

    public static let pedalPowerBalanceSupported = CyclingPowerFeature(rawValue: 1 << 0)
    public static let accumulatedTorqueSupported = CyclingPowerFeature(rawValue: 1 << 1)
    public static let wheelRevolutionDataSupported = CyclingPowerFeature(rawValue: 1 << 2)
    public static let crankRevolutionDataSupported = CyclingPowerFeature(rawValue: 1 << 3)
    public static let extremeMagnitudesSupported = CyclingPowerFeature(rawValue: 1 << 4)
    public static let extremeAnglesSupported = CyclingPowerFeature(rawValue: 1 << 5)
    public static let deadSpotAnglesSupported = CyclingPowerFeature(rawValue: 1 << 6)
    public static let accumulatedEnergySupported = CyclingPowerFeature(rawValue: 1 << 7)
    public static let offsetCompensationIndicatorSupported = CyclingPowerFeature(rawValue: 1 << 8)
    public static let offsetCompensationSupported = CyclingPowerFeature(rawValue: 1 << 9)
    public static let contentMaskingSupported = CyclingPowerFeature(rawValue: 1 << 10)
    public static let multipleSensorLocationsSupported = CyclingPowerFeature(rawValue: 1 << 11)
    public static let crankLengthAdjustmentSupported = CyclingPowerFeature(rawValue: 1 << 12)
    public static let chainLengthAdjustmentSupported = CyclingPowerFeature(rawValue: 1 << 13)
    public static let chainWeightAdjustmentSupported = CyclingPowerFeature(rawValue: 1 << 14)
    public static let spanLengthAdjustmentSupported = CyclingPowerFeature(rawValue: 1 << 15)
    /// Set: the sensor measures torque (else force).
    public static let measurementContextIsTorque = CyclingPowerFeature(rawValue: 1 << 16)
    public static let instantaneousMeasurementDirectionSupported = CyclingPowerFeature(rawValue: 1 << 17)
    public static let factoryCalibrationDateSupported = CyclingPowerFeature(rawValue: 1 << 18)
    public static let enhancedOffsetCompensationSupported = CyclingPowerFeature(rawValue: 1 << 19)

    static let names: [(String, CyclingPowerFeature)] = [
        ("pedal_power_balance_supported", .pedalPowerBalanceSupported),
        ("accumulated_torque_supported", .accumulatedTorqueSupported),
        ("wheel_revolution_data_supported", .wheelRevolutionDataSupported),
        ("crank_revolution_data_supported", .crankRevolutionDataSupported),
        ("extreme_magnitudes_supported", .extremeMagnitudesSupported),
        ("extreme_angles_supported", .extremeAnglesSupported),
        ("dead_spot_angles_supported", .deadSpotAnglesSupported),
        ("accumulated_energy_supported", .accumulatedEnergySupported),
        ("offset_compensation_indicator_supported", .offsetCompensationIndicatorSupported),
        ("offset_compensation_supported", .offsetCompensationSupported),
        ("content_masking_supported", .contentMaskingSupported),
        ("multiple_sensor_locations_supported", .multipleSensorLocationsSupported),
        ("crank_length_adjustment_supported", .crankLengthAdjustmentSupported),
        ("chain_length_adjustment_supported", .chainLengthAdjustmentSupported),
        ("chain_weight_adjustment_supported", .chainWeightAdjustmentSupported),
        ("span_length_adjustment_supported", .spanLengthAdjustmentSupported),
        ("measurement_context_is_torque", .measurementContextIsTorque),
        ("instantaneous_measurement_direction_supported", .instantaneousMeasurementDirectionSupported),
        ("factory_calibration_date_supported", .factoryCalibrationDateSupported),
        ("enhanced_offset_compensation_supported", .enhancedOffsetCompensationSupported),
    ]

    public var rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    public init(decoding bytes: borrowing [UInt8]) throws(DecodeError) {
        try requireLength(bytes, 4)
        rawValue = try ByteReader.read(bytes) { (reader) throws(DecodeError) in try reader.readUInt32("feature") }
    }

    public func encoded() -> [UInt8] {
        var writer = ByteWriter(capacity: 4)
        writer.write(rawValue)
        return writer.bytes
    }

    /// Bits 20-21.
    public var distributedSystemSupport: UInt8 { UInt8(truncatingIfNeeded: rawValue >> 20 & 0x3) }

    public var fields: [Field] {
        [Field("value", .int(rawValue))] + Self.names.map { Field($0.0, .bool(contains($0.1))) } + [
            Field("distributed_system_support", .int(distributedSystemSupport)),
            Field("reserved_bits", .int(rawValue & 0xFFC0_0000)),
        ]
    }
}
