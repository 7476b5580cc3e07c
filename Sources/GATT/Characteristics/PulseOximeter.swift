/// PLX Spot-check Measurement (0x2A5E), indicated by a fingertip pulse oximeter (Pulse Oximeter service 0x1822)
/// when a spot check completes, or later from its storage.
///
/// ```
/// offset  size  field
/// 0       1     flags                     bit0 time stamp, 1 measurement status, 2 device and sensor status,
///                                         3 pulse amplitude index, 4 device clock is not set, 5-7 reserved
/// 1       2     SpO2                      SFLOAT, percent
/// 3       2     pulse rate                SFLOAT, beats per minute
/// +       0|7   time stamp                Date Time
/// +       0|2   measurement status        16 bits (``PLXMeasurementStatus``)
/// +       0|3   device and sensor status  24 bits (``PLXDeviceAndSensorStatus``)
/// +       0|2   pulse amplitude index     SFLOAT, percent
/// ```
public struct PLXSpotCheckMeasurement: CharacteristicValue {
    public static let uuid = BluetoothUUID.plxSpotCheckMeasurement
    public static let name = "plx-spot-check-measurement"

    /// Oxygen saturation in percent.
    public var spo2: SFloat
    /// Pulse rate in beats per minute.
    public var pulseRate: SFloat
    public var timeStamp: DateTime?
    public var measurementStatus: PLXMeasurementStatus?
    public var deviceAndSensorStatus: PLXDeviceAndSensorStatus?
    /// Pulse amplitude index (perfusion) in percent.
    public var pulseAmplitudeIndex: SFloat?
    /// Flags bit 4: the oximeter's clock was never set, so the time stamp means nothing.
    public var deviceClockNotSet: Bool
    /// Flag bits 5-7, reserved.
    public var reservedFlags: UInt8

    public init(
        spo2: SFloat, pulseRate: SFloat, timeStamp: DateTime? = nil, measurementStatus: PLXMeasurementStatus? = nil,
        deviceAndSensorStatus: PLXDeviceAndSensorStatus? = nil, pulseAmplitudeIndex: SFloat? = nil,
        deviceClockNotSet: Bool = false, reservedFlags: UInt8 = 0
    ) {
        self.spo2 = spo2
        self.pulseRate = pulseRate
        self.timeStamp = timeStamp
        self.measurementStatus = measurementStatus
        self.deviceAndSensorStatus = deviceAndSensorStatus
        self.pulseAmplitudeIndex = pulseAmplitudeIndex
        self.deviceClockNotSet = deviceClockNotSet
        self.reservedFlags = reservedFlags & 0xE0
    }

    public init(decoding bytes: borrowing [UInt8]) throws(DecodeError) {
        guard !bytes.isEmpty else { throw .empty }
        self = try ByteReader.read(bytes) { (reader) throws(DecodeError) in try Self(reading: &reader) }
    }

    private init(reading reader: inout ByteReader) throws(DecodeError) {
        let flags = try reader.readUInt8("flags")
        spo2 = try SFloat.read(&reader, "spo2")
        pulseRate = try SFloat.read(&reader, "pulse_rate")
        timeStamp = flags & 0x01 == 0 ? nil : try DateTime(reading: &reader)
        measurementStatus = flags & 0x02 == 0 ? nil : try PLXMeasurementStatus(reading: &reader)
        deviceAndSensorStatus = flags & 0x04 == 0 ? nil : try PLXDeviceAndSensorStatus(reading: &reader)
        pulseAmplitudeIndex = flags & 0x08 == 0 ? nil : try SFloat.read(&reader, "pulse_amplitude_index")
        deviceClockNotSet = flags & 0x10 != 0
        reservedFlags = flags & 0xE0
    }

    public var flags: UInt8 {
        var flags = reservedFlags & 0xE0
        if timeStamp != nil { flags |= 0x01 }
        if measurementStatus != nil { flags |= 0x02 }
        if deviceAndSensorStatus != nil { flags |= 0x04 }
        if pulseAmplitudeIndex != nil { flags |= 0x08 }
        if deviceClockNotSet { flags |= 0x10 }
        return flags
    }

    public func encoded() -> [UInt8] {
        var writer = ByteWriter(capacity: 19)
        writer.write(flags)
        spo2.write(to: &writer)
        pulseRate.write(to: &writer)
        timeStamp?.write(to: &writer)
        if let measurementStatus { writer.write(measurementStatus.rawValue) }
        if let deviceAndSensorStatus { writer.writeUInt24(deviceAndSensorStatus.rawValue) }
        pulseAmplitudeIndex?.write(to: &writer)
        return writer.bytes
    }

    public var fields: [Field] {
        [
            Field("flags", .int(flags)),
            Field("spo2", spo2.fieldValue, unit: "%"),
            Field("pulse_rate", pulseRate.fieldValue, unit: "count/min"),
            Field("time_stamp", DateTime.fieldValue(timeStamp)),
            Field("device_clock_not_set", .bool(deviceClockNotSet)),
            Field("measurement_status", measurementStatus?.fieldValue ?? .null),
            Field("device_and_sensor_status", deviceAndSensorStatus?.fieldValue ?? .null),
            Field("pulse_amplitude_index", pulseAmplitudeIndex?.fieldValue ?? .null, unit: "%"),
            Field("reserved_flags", .int(reservedFlags)),
        ]
    }
}

/// PLX Continuous Measurement (0x2A5F), notified about once a second while a finger is in the oximeter.
///
/// ```
/// offset  size  field
/// 0       1     flags                     bit0 SpO2PR-Fast, 1 SpO2PR-Slow, 2 measurement status,
///                                         3 device and sensor status, 4 pulse amplitude index, 5-7 reserved
/// 1       4     SpO2PR-Normal             SFLOAT SpO2 (%), SFLOAT pulse rate (bpm)
/// +       0|4   SpO2PR-Fast               the same pair, fast-responding
/// +       0|4   SpO2PR-Slow               the same pair, slow-responding
/// +       0|2   measurement status        16 bits
/// +       0|3   device and sensor status  24 bits
/// +       0|2   pulse amplitude index     SFLOAT, percent
/// ```
///
/// It carries no time stamp: the receive time is the sample time.
public struct PLXContinuousMeasurement: CharacteristicValue {
    public static let uuid = BluetoothUUID.plxContinuousMeasurement
    public static let name = "plx-continuous-measurement"

    /// One SpO2 and pulse-rate pair.
    public struct Reading: Hashable, Sendable {
        public var spo2: SFloat
        public var pulseRate: SFloat
        public init(spo2: SFloat, pulseRate: SFloat) {
            self.spo2 = spo2
            self.pulseRate = pulseRate
        }
    }

    public var normal: Reading
    public var fast: Reading?
    public var slow: Reading?
    public var measurementStatus: PLXMeasurementStatus?
    public var deviceAndSensorStatus: PLXDeviceAndSensorStatus?
    public var pulseAmplitudeIndex: SFloat?
    public var reservedFlags: UInt8

    public init(
        normal: Reading, fast: Reading? = nil, slow: Reading? = nil, measurementStatus: PLXMeasurementStatus? = nil,
        deviceAndSensorStatus: PLXDeviceAndSensorStatus? = nil, pulseAmplitudeIndex: SFloat? = nil,
        reservedFlags: UInt8 = 0
    ) {
        self.normal = normal
        self.fast = fast
        self.slow = slow
        self.measurementStatus = measurementStatus
        self.deviceAndSensorStatus = deviceAndSensorStatus
        self.pulseAmplitudeIndex = pulseAmplitudeIndex
        self.reservedFlags = reservedFlags & 0xE0
    }

    public init(decoding bytes: borrowing [UInt8]) throws(DecodeError) {
        guard !bytes.isEmpty else { throw .empty }
        self = try ByteReader.read(bytes) { (reader) throws(DecodeError) in try Self(reading: &reader) }
    }

    private init(reading reader: inout ByteReader) throws(DecodeError) {
        let flags = try reader.readUInt8("flags")
        normal = Reading(spo2: try SFloat.read(&reader, "spo2"), pulseRate: try SFloat.read(&reader, "pulse_rate"))
        fast =
            flags & 0x01 == 0
            ? nil
            : Reading(
                spo2: try SFloat.read(&reader, "spo2_fast"), pulseRate: try SFloat.read(&reader, "pulse_rate_fast"))
        slow =
            flags & 0x02 == 0
            ? nil
            : Reading(
                spo2: try SFloat.read(&reader, "spo2_slow"), pulseRate: try SFloat.read(&reader, "pulse_rate_slow"))
        measurementStatus = flags & 0x04 == 0 ? nil : try PLXMeasurementStatus(reading: &reader)
        deviceAndSensorStatus = flags & 0x08 == 0 ? nil : try PLXDeviceAndSensorStatus(reading: &reader)
        pulseAmplitudeIndex = flags & 0x10 == 0 ? nil : try SFloat.read(&reader, "pulse_amplitude_index")
        reservedFlags = flags & 0xE0
    }

    public var flags: UInt8 {
        var flags = reservedFlags & 0xE0
        if fast != nil { flags |= 0x01 }
        if slow != nil { flags |= 0x02 }
        if measurementStatus != nil { flags |= 0x04 }
        if deviceAndSensorStatus != nil { flags |= 0x08 }
        if pulseAmplitudeIndex != nil { flags |= 0x10 }
        return flags
    }

    public func encoded() -> [UInt8] {
        var writer = ByteWriter(capacity: 20)
        writer.write(flags)
        for reading in [normal, fast, slow] {
            guard let reading else { continue }
            reading.spo2.write(to: &writer)
            reading.pulseRate.write(to: &writer)
        }
        if let measurementStatus { writer.write(measurementStatus.rawValue) }
        if let deviceAndSensorStatus { writer.writeUInt24(deviceAndSensorStatus.rawValue) }
        pulseAmplitudeIndex?.write(to: &writer)
        return writer.bytes
    }

    public var fields: [Field] {
        [
            Field("flags", .int(flags)),
            Field("spo2", normal.spo2.fieldValue, unit: "%"),
            Field("pulse_rate", normal.pulseRate.fieldValue, unit: "count/min"),
            Field("spo2_fast", fast?.spo2.fieldValue ?? .null, unit: "%"),
            Field("pulse_rate_fast", fast?.pulseRate.fieldValue ?? .null, unit: "count/min"),
            Field("spo2_slow", slow?.spo2.fieldValue ?? .null, unit: "%"),
            Field("pulse_rate_slow", slow?.pulseRate.fieldValue ?? .null, unit: "count/min"),
            Field("measurement_status", measurementStatus?.fieldValue ?? .null),
            Field("device_and_sensor_status", deviceAndSensorStatus?.fieldValue ?? .null),
            Field("pulse_amplitude_index", pulseAmplitudeIndex?.fieldValue ?? .null, unit: "%"),
            Field("reserved_flags", .int(reservedFlags)),
        ]
    }
}

/// PLX Measurement Status (16 bits). Bits 0-4 are reserved.
public struct PLXMeasurementStatus: Hashable, Sendable {
    public var rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    init(reading reader: inout ByteReader) throws(DecodeError) {
        rawValue = try reader.readUInt16("measurement_status")
    }

    /// Bits 5-15 in order.
    static let names = [
        "measurement_ongoing", "early_estimated_data", "validated_data", "fully_qualified_data",
        "data_from_measurement_storage", "data_for_demonstration", "data_for_testing", "calibration_ongoing",
        "measurement_unavailable", "questionable_measurement_detected", "invalid_measurement_detected",
    ]

    /// Bit 9: the reading comes from the oximeter's storage, not from now.
    public var fromMeasurementStorage: Bool { rawValue & 0x0200 != 0 }
    /// Bits 10-11: demonstration or test data, not a person's.
    public var isDemonstrationOrTest: Bool { rawValue & 0x0C00 != 0 }
    /// Bit 13: the oximeter has no measurement.
    public var measurementUnavailable: Bool { rawValue & 0x2000 != 0 }
    /// Bit 14: questionable.
    public var questionable: Bool { rawValue & 0x4000 != 0 }
    /// Bit 15: the oximeter says the measurement is invalid.
    public var invalid: Bool { rawValue & 0x8000 != 0 }

    /// The names of the bits that are set (reserved bits left out).
    public var setNames: [String] {
        Self.names.enumerated().compactMap { rawValue >> (5 + $0.offset) & 1 != 0 ? $0.element : nil }
    }

    var fieldValue: FieldValue {
        .object([
            Field("value", .int(rawValue)), Field("set", .list(setNames.map { .string($0) })),
            Field("reserved_bits", .int(rawValue & 0x001F)),
        ])
    }
}

/// PLX Device and Sensor Status (24 bits). Bits 16-23 are reserved.
public struct PLXDeviceAndSensorStatus: Hashable, Sendable {
    /// The 24 bits as sent (the top byte is always 0).
    public var rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue & 0xFF_FFFF }

    init(reading reader: inout ByteReader) throws(DecodeError) {
        rawValue = try reader.readUInt24("device_and_sensor_status")
    }

    /// Bits 0-15 in order.
    static let names = [
        "extended_display_update_ongoing", "equipment_malfunction_detected", "signal_processing_irregularity_detected",
        "inadequate_signal_detected", "poor_signal_detected", "low_perfusion_detected", "erratic_signal_detected",
        "nonpulsatile_signal_detected", "questionable_pulse_detected", "signal_analysis_ongoing",
        "sensor_interference_detected", "sensor_unconnected_to_user", "unknown_sensor_connected", "sensor_displaced",
        "sensor_malfunctioning", "sensor_disconnected",
    ]

    public var setNames: [String] {
        Self.names.enumerated().compactMap { rawValue >> $0.offset & 1 != 0 ? $0.element : nil }
    }

    var fieldValue: FieldValue {
        .object([
            Field("value", .int(rawValue)), Field("set", .list(setNames.map { .string($0) })),
            Field("reserved_bits", .int(rawValue & 0xFF_0000)),
        ])
    }
}

/// PLX Features (0x2A60, read): what the oximeter supports.
///
/// ```
/// offset  size  field
/// 0       2     supported features   bit0 measurement status support present, 1 device and sensor status
///                                    support present, 2 spot-check storage, 3 spot-check time stamp,
///                                    4 SpO2PR-Fast, 5 SpO2PR-Slow, 6 pulse amplitude index, 7 multiple bonds,
///                                    8-15 reserved
/// +       0|2   measurement status support          16 bits, which status bits it sets, when bit0
/// +       0|3   device and sensor status support    24 bits, when bit1
/// ```
public struct PLXFeatures: CharacteristicValue, Hashable {
    public static let uuid = BluetoothUUID.plxFeatures
    public static let name = "plx-features"

    /// The supported-features bits other than 0 and 1 (which follow from the two optional fields).
    public var otherFeatures: UInt16
    public var measurementStatusSupport: UInt16?
    /// 24 bits.
    public var deviceAndSensorStatusSupport: UInt32?

    public init(
        otherFeatures: UInt16, measurementStatusSupport: UInt16? = nil, deviceAndSensorStatusSupport: UInt32? = nil
    ) {
        self.otherFeatures = otherFeatures & 0xFFFC
        self.measurementStatusSupport = measurementStatusSupport
        self.deviceAndSensorStatusSupport = deviceAndSensorStatusSupport.map { $0 & 0xFF_FFFF }
    }

    public init(decoding bytes: borrowing [UInt8]) throws(DecodeError) {
        guard !bytes.isEmpty else { throw .empty }
        self = try ByteReader.read(bytes) { (reader) throws(DecodeError) in
            let features = try reader.readUInt16("supported_features")
            let status = features & 0x01 == 0 ? nil : try reader.readUInt16("measurement_status_support")
            let device = features & 0x02 == 0 ? nil : try reader.readUInt24("device_and_sensor_status_support")
            return PLXFeatures(
                otherFeatures: features, measurementStatusSupport: status, deviceAndSensorStatusSupport: device)
        }
    }

    public var supportedFeatures: UInt16 {
        var features = otherFeatures & 0xFFFC
        if measurementStatusSupport != nil { features |= 0x01 }
        if deviceAndSensorStatusSupport != nil { features |= 0x02 }
        return features
    }

    public func encoded() -> [UInt8] {
        var writer = ByteWriter(capacity: 7)
        writer.write(supportedFeatures)
        if let measurementStatusSupport { writer.write(measurementStatusSupport) }
        if let deviceAndSensorStatusSupport { writer.writeUInt24(deviceAndSensorStatusSupport) }
        return writer.bytes
    }

    static let bitNames = [
        "measurement_status_support_present", "device_and_sensor_status_support_present",
        "spot_check_measurement_storage_supported", "spot_check_time_stamp_supported", "spo2pr_fast_supported",
        "spo2pr_slow_supported", "pulse_amplitude_index_supported", "multiple_bonds_supported",
    ]

    public var fields: [Field] {
        let features = supportedFeatures
        var fields = [Field("supported_features", .int(features))]
        for (bit, name) in Self.bitNames.enumerated() { fields.append(Field(name, .bool(features >> bit & 1 != 0))) }
        fields.append(Field("reserved_bits", .int(features & 0xFF00)))
        fields.append(Field("measurement_status_support", .optional(measurementStatusSupport)))
        fields.append(Field("device_and_sensor_status_support", .optional(deviceAndSensorStatusSupport)))
        return fields
    }
}
