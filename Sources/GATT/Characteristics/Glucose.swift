internal import Support

/// Glucose Measurement (0x2A18, notified), one stored record of a blood glucose meter (Glucose service 0x1808),
/// sent while a Record Access Control Point procedure (``RecordAccessControlPoint``) reports stored records
/// (`docs/gatt-glucose.md`).
///
/// ```
/// offset  size  field
/// 0       1     flags              bit0 time offset, 1 concentration with type and sample location,
///                                  2 concentration unit (0 kg/L, 1 mol/L), 3 sensor status annunciation,
///                                  4 context information follows, 5-7 reserved
/// 1       2     sequence number    uint16, the record's number in the meter, increasing
/// 3       7     base time          Date Time, the meter's local wall clock
/// +       0|2   time offset        sint16, minutes to add to the base time (the user's clock corrections)
/// +       0|3   concentration      SFLOAT in kg/L or mol/L, then one byte: type (low nibble), sample location
///                                  (high nibble)
/// +       0|2   sensor status      16 bits (``GlucoseSensorStatus``)
/// ```
public struct GlucoseMeasurement: CharacteristicValue {
    public static let uuid = BluetoothUUID.glucoseMeasurement
    public static let name = "glucose-measurement"

    public var sequenceNumber: UInt16
    public var baseTime: DateTime
    /// Minutes to add to ``baseTime`` for the time the user saw (``userFacingTime``).
    public var timeOffset: Int16?
    /// Flags bit 2: the unit of ``concentration``. Kept even without a concentration, as sent.
    public var units: GlucoseConcentrationUnits
    public var concentration: GlucoseConcentration?
    public var sensorStatus: GlucoseSensorStatus?
    /// Flags bit 4: a Glucose Measurement Context with the same sequence number follows.
    public var contextFollows: Bool
    /// Flag bits 5-7, reserved.
    public var reservedFlags: UInt8

    public init(
        sequenceNumber: UInt16, baseTime: DateTime, timeOffset: Int16? = nil,
        units: GlucoseConcentrationUnits = .kgPerL,
        concentration: GlucoseConcentration? = nil, sensorStatus: GlucoseSensorStatus? = nil,
        contextFollows: Bool = false, reservedFlags: UInt8 = 0
    ) {
        self.sequenceNumber = sequenceNumber
        self.baseTime = baseTime
        self.timeOffset = timeOffset
        self.units = units
        self.concentration = concentration
        self.sensorStatus = sensorStatus
        self.contextFollows = contextFollows
        self.reservedFlags = reservedFlags & 0xE0
    }

    public init(decoding bytes: borrowing [UInt8]) throws(DecodeError) {
        guard !bytes.isEmpty else { throw .empty }
        self = try ByteReader.read(bytes) { (reader) throws(DecodeError) in try Self(reading: &reader) }
    }

    private init(reading reader: inout ByteReader) throws(DecodeError) {
        let flags = try reader.readUInt8("flags")
        sequenceNumber = try reader.readUInt16("sequence_number")
        baseTime = try DateTime(reading: &reader, field: "base_time")
        timeOffset = flags & 0x01 == 0 ? nil : Int16(bitPattern: try reader.readUInt16("time_offset"))
        units = flags & 0x04 == 0 ? .kgPerL : .molPerL
        if flags & 0x02 == 0 {
            concentration = nil
        } else {
            let value = try SFloat.read(&reader, "concentration")
            let typeAndLocation = try reader.readUInt8("type_sample_location")
            concentration = GlucoseConcentration(
                value: value, type: typeAndLocation & 0x0F, sampleLocation: typeAndLocation >> 4)
        }
        sensorStatus = flags & 0x08 == 0 ? nil : GlucoseSensorStatus(rawValue: try reader.readUInt16("sensor_status"))
        contextFollows = flags & 0x10 != 0
        reservedFlags = flags & 0xE0
    }

    public var flags: UInt8 {
        var flags = reservedFlags & 0xE0
        if timeOffset != nil { flags |= 0x01 }
        if concentration != nil { flags |= 0x02 }
        if units == .molPerL { flags |= 0x04 }
        if sensorStatus != nil { flags |= 0x08 }
        if contextFollows { flags |= 0x10 }
        return flags
    }

    public func encoded() -> [UInt8] {
        var writer = ByteWriter(capacity: 17)
        writer.write(flags)
        writer.write(sequenceNumber)
        baseTime.write(to: &writer)
        if let timeOffset { writer.write(UInt16(bitPattern: timeOffset)) }
        if let concentration {
            concentration.value.write(to: &writer)
            writer.write((concentration.sampleLocation & 0x0F) << 4 | concentration.type & 0x0F)
        }
        if let sensorStatus { writer.write(sensorStatus.rawValue) }
        return writer.bytes
    }

    /// The concentration in mg/dL when it was sent in kg/L (1 kg/L = 100 000 mg/dL, a decimal shift, exact);
    /// `nil` for mol/L, a special value or no concentration.
    public var milligramsPerDeciliter: Double? {
        guard units == .kgPerL, let value = concentration?.value, value.special == nil else { return nil }
        return scaledByPowerOfTen(value.mantissa, value.exponent + 5)
    }

    /// The concentration in mmol/L when it was sent in mol/L (a decimal shift, exact); `nil` for kg/L, a special
    /// value or no concentration.
    public var millimolesPerLiter: Double? {
        guard units == .molPerL, let value = concentration?.value, value.special == nil else { return nil }
        return scaledByPowerOfTen(value.mantissa, value.exponent + 3)
    }

    /// The base time plus the time offset, as wall-clock fields (minutes carried into hours, days, months and
    /// years); `nil` when the base time is not ``DateTime/isComplete`` or the result leaves years 1582-9999
    /// (``DecodingPolicy/glucoseTimeOffset``).
    public var userFacingTime: DateTime? {
        guard let timeOffset, timeOffset != 0 else { return baseTime.isComplete ? baseTime : nil }
        return baseTime.adding(minutes: Int(timeOffset))
    }

    public var fields: [Field] {
        let unit = units.rawValue
        return [
            Field("flags", .int(flags)),
            Field("sequence_number", .int(sequenceNumber)),
            Field("base_time", .string(baseTime.description)),
            Field("time_offset", .optional(timeOffset), unit: "min"),
            Field("units", .string(unit)),
            Field("concentration", concentration?.value.fieldValue ?? .null, unit: unit),
            Field("type", concentration.map { .string($0.typeName) } ?? .null),
            Field("sample_location", concentration.map { .string($0.sampleLocationName) } ?? .null),
            Field("sensor_status", sensorStatus?.fieldValue ?? .null),
            Field("context_follows", .bool(contextFollows)),
            Field("reserved_flags", .int(reservedFlags)),
        ]
    }
}

/// The unit of a glucose concentration (Glucose Measurement flags bit 2).
public enum GlucoseConcentrationUnits: String, Sendable, Equatable {
    case kgPerL = "kg/L"
    case molPerL = "mol/L"
}

/// A glucose concentration with the fluid it was measured in and where the sample was taken.
public struct GlucoseConcentration: Hashable, Sendable {
    public var value: SFloat
    /// The fluid (low nibble): 1 capillary whole blood, 2 capillary plasma, 3 venous whole blood, 4 venous plasma,
    /// 5 arterial whole blood, 6 arterial plasma, 7 undetermined whole blood, 8 undetermined plasma,
    /// 9 interstitial fluid, 10 control solution; 0 and 11-15 reserved.
    public var type: UInt8
    /// Where (high nibble): 1 finger, 2 alternate site test, 3 earlobe, 4 control solution, 15 not available;
    /// 0 and 5-14 reserved.
    public var sampleLocation: UInt8

    public init(value: SFloat, type: UInt8 = 1, sampleLocation: UInt8 = 1) {
        self.value = value
        self.type = type & 0x0F
        self.sampleLocation = sampleLocation & 0x0F
    }

    static let typeNames = [
        "reserved", "capillary_whole_blood", "capillary_plasma", "venous_whole_blood", "venous_plasma",
        "arterial_whole_blood", "arterial_plasma", "undetermined_whole_blood", "undetermined_plasma",
        "interstitial_fluid", "control_solution",
    ]
    static let sampleLocationNames = ["reserved", "finger", "alternate_site_test", "earlobe", "control_solution"]

    public var typeName: String { enumerationName(type, in: Self.typeNames) }
    public var sampleLocationName: String {
        sampleLocation == 0x0F ? "not_available" : enumerationName(sampleLocation, in: Self.sampleLocationNames)
    }
    /// A control solution, not a person's blood: the type or the sample location says so.
    public var isControlSolution: Bool { type == 10 || sampleLocation == 4 }
}

/// The Sensor Status Annunciation of a glucose measurement: what the meter noticed while measuring.
public struct GlucoseSensorStatus: Hashable, Sendable {
    public var rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    /// The names of bits 0-11, in order; 12-15 are reserved.
    public static let bitNames = [
        "device_battery_low", "sensor_malfunction", "sample_size_insufficient", "strip_insertion_error",
        "strip_type_incorrect", "result_too_high", "result_too_low", "temperature_too_high", "temperature_too_low",
        "read_interrupted", "general_device_fault", "time_fault",
    ]

    /// The names of the bits that are set (reserved ones as `reserved_bit_N`).
    public var names: [String] {
        (0..<16).compactMap { bit in
            guard rawValue & (1 << bit) != 0 else { return nil }
            return bit < Self.bitNames.count ? Self.bitNames[bit] : "reserved_bit_\(bit)"
        }
    }

    public var deviceBatteryLow: Bool { rawValue & 0x0001 != 0 }
    /// Bits 1-10: the meter says the result itself cannot be trusted (malfunction, too little blood, a strip
    /// problem, out of its range or temperature, pulled too soon, device fault). Battery low and time fault are
    /// not in it: the number is sound (a time fault concerns the time, which the gateway checks on its own).
    public var resultUnreliable: Bool { rawValue & 0x07FE != 0 }
    public var timeFault: Bool { rawValue & 0x0800 != 0 }
    /// Bits 12-15, reserved.
    public var reservedBits: UInt16 { rawValue & 0xF000 }

    var fieldValue: FieldValue {
        .object([Field("value", .int(rawValue)), Field("set", .list(names.map { .string($0) }))])
    }
}

/// Glucose Measurement Context (0x2A34, notified right after the Glucose Measurement with the same sequence
/// number when that one's flags bit 4 is set): what the user entered about the reading.
///
/// ```
/// offset  size  field
/// 0       1     flags              bit0 carbohydrate, 1 meal, 2 tester and health, 3 exercise, 4 medication,
///                                  5 medication unit (0 kg, 1 L), 6 HbA1c, 7 extended flags
/// 1       2     sequence number    uint16, the measurement's
/// +       0|1   extended flags     8 bits, all reserved
/// +       0|3   carbohydrate       uint8 ID (1 breakfast ... 7 brunch), SFLOAT kg
/// +       0|1   meal               uint8: 1 before a meal, 2 after, 3 fasting, 4 casual, 5 bedtime
/// +       0|1   tester, health     tester (low nibble), health (high nibble)
/// +       0|3   exercise           uint16 duration in seconds (65535 overrun), uint8 intensity in percent
/// +       0|3   medication         uint8 ID (1 rapid-acting insulin ... 5 pre-mixed), SFLOAT kg or L
/// +       0|2   HbA1c              SFLOAT, percent
/// ```
public struct GlucoseMeasurementContext: CharacteristicValue {
    public static let uuid = BluetoothUUID.glucoseMeasurementContext
    public static let name = "glucose-measurement-context"

    public struct Carbohydrate: Hashable, Sendable {
        public var id: UInt8
        public var kilograms: SFloat
        public init(id: UInt8, kilograms: SFloat) {
            self.id = id
            self.kilograms = kilograms
        }
        static let names = ["reserved", "breakfast", "lunch", "dinner", "snack", "drink", "supper", "brunch"]
        public var name: String { enumerationName(id, in: Self.names) }
    }

    public struct Exercise: Hashable, Sendable {
        /// Seconds; 65535 means longer than that.
        public var durationSeconds: UInt16
        public var intensityPercent: UInt8
        public init(durationSeconds: UInt16, intensityPercent: UInt8) {
            self.durationSeconds = durationSeconds
            self.intensityPercent = intensityPercent
        }
    }

    public struct Medication: Hashable, Sendable {
        public var id: UInt8
        /// In kg or L as ``GlucoseMeasurementContext/medicationUnits`` says.
        public var amount: SFloat
        public init(id: UInt8, amount: SFloat) {
            self.id = id
            self.amount = amount
        }
        static let names = [
            "reserved", "rapid_acting_insulin", "short_acting_insulin", "intermediate_acting_insulin",
            "long_acting_insulin", "pre_mixed_insulin",
        ]
        public var name: String { enumerationName(id, in: Self.names) }
    }

    /// The unit of a medication amount (flags bit 5).
    public enum MedicationUnits: String, Sendable, Equatable {
        case kilograms = "kg"
        case liters = "L"
    }

    public var sequenceNumber: UInt16
    public var extendedFlags: UInt8?
    public var carbohydrate: Carbohydrate?
    /// 1 preprandial, 2 postprandial, 3 fasting, 4 casual, 5 bedtime; 0 and 6-255 reserved (``mealName``).
    public var meal: UInt8?
    /// Tester (low nibble): 1 self, 2 health care professional, 3 lab test, 15 not available.
    public var tester: UInt8?
    /// Health (high nibble): 1 minor issues, 2 major issues, 3 during menses, 4 under stress, 5 no issues,
    /// 15 not available. Present exactly when ``tester`` is.
    public var health: UInt8?
    public var exercise: Exercise?
    public var medicationUnits: MedicationUnits
    public var medication: Medication?
    /// HbA1c in percent.
    public var hba1c: SFloat?

    public init(
        sequenceNumber: UInt16, extendedFlags: UInt8? = nil, carbohydrate: Carbohydrate? = nil, meal: UInt8? = nil,
        tester: UInt8? = nil, health: UInt8? = nil, exercise: Exercise? = nil,
        medicationUnits: MedicationUnits = .kilograms, medication: Medication? = nil, hba1c: SFloat? = nil
    ) {
        self.sequenceNumber = sequenceNumber
        self.extendedFlags = extendedFlags
        self.carbohydrate = carbohydrate
        self.meal = meal
        if tester != nil || health != nil {
            self.tester = (tester ?? 0x0F) & 0x0F
            self.health = (health ?? 0x0F) & 0x0F
        }
        self.exercise = exercise
        self.medicationUnits = medicationUnits
        self.medication = medication
        self.hba1c = hba1c
    }

    public init(decoding bytes: borrowing [UInt8]) throws(DecodeError) {
        guard !bytes.isEmpty else { throw .empty }
        self = try ByteReader.read(bytes) { (reader) throws(DecodeError) in try Self(reading: &reader) }
    }

    private init(reading reader: inout ByteReader) throws(DecodeError) {
        let flags = try reader.readUInt8("flags")
        sequenceNumber = try reader.readUInt16("sequence_number")
        extendedFlags = flags & 0x80 == 0 ? nil : try reader.readUInt8("extended_flags")
        if flags & 0x01 != 0 {
            let id = try reader.readUInt8("carbohydrate_id")
            carbohydrate = Carbohydrate(id: id, kilograms: try SFloat.read(&reader, "carbohydrate"))
        }
        meal = flags & 0x02 == 0 ? nil : try reader.readUInt8("meal")
        if flags & 0x04 != 0 {
            let both = try reader.readUInt8("tester_health")
            tester = both & 0x0F
            health = both >> 4
        }
        if flags & 0x08 != 0 {
            let duration = try reader.readUInt16("exercise_duration")
            exercise = Exercise(durationSeconds: duration, intensityPercent: try reader.readUInt8("exercise_intensity"))
        }
        medicationUnits = flags & 0x20 == 0 ? .kilograms : .liters
        if flags & 0x10 != 0 {
            let id = try reader.readUInt8("medication_id")
            medication = Medication(id: id, amount: try SFloat.read(&reader, "medication"))
        }
        hba1c = flags & 0x40 == 0 ? nil : try SFloat.read(&reader, "hba1c")
    }

    public var flags: UInt8 {
        var flags: UInt8 = 0
        if carbohydrate != nil { flags |= 0x01 }
        if meal != nil { flags |= 0x02 }
        if tester != nil { flags |= 0x04 }
        if exercise != nil { flags |= 0x08 }
        if medication != nil { flags |= 0x10 }
        if medicationUnits == .liters { flags |= 0x20 }
        if hba1c != nil { flags |= 0x40 }
        if extendedFlags != nil { flags |= 0x80 }
        return flags
    }

    public func encoded() -> [UInt8] {
        var writer = ByteWriter(capacity: 17)
        writer.write(flags)
        writer.write(sequenceNumber)
        if let extendedFlags { writer.write(extendedFlags) }
        if let carbohydrate {
            writer.write(carbohydrate.id)
            carbohydrate.kilograms.write(to: &writer)
        }
        if let meal { writer.write(meal) }
        if let tester { writer.write((health ?? 0x0F) << 4 | tester) }
        if let exercise {
            writer.write(exercise.durationSeconds)
            writer.write(exercise.intensityPercent)
        }
        if let medication {
            writer.write(medication.id)
            medication.amount.write(to: &writer)
        }
        hba1c?.write(to: &writer)
        return writer.bytes
    }

    static let mealNames = ["reserved", "preprandial", "postprandial", "fasting", "casual", "bedtime"]
    static let testerNames = ["reserved", "self", "health_care_professional", "lab_test"]
    static let healthNames = [
        "reserved", "minor_health_issues", "major_health_issues", "during_menses", "under_stress", "no_health_issues",
    ]

    /// `preprandial`, `postprandial`, `fasting`, `casual`, `bedtime` or `reserved`; `nil` without a meal.
    public var mealName: String? { meal.map { enumerationName($0, in: Self.mealNames) } }

    /// `self`, `health_care_professional`, `lab_test`, `not_available` or `reserved`; `nil` without one.
    public var testerName: String? { Self.nibbleName(tester, Self.testerNames) }
    /// `minor_health_issues` ... `no_health_issues`, `not_available` or `reserved`; `nil` without one.
    public var healthName: String? { Self.nibbleName(health, Self.healthNames) }

    private static func nibbleName(_ value: UInt8?, _ names: [String]) -> String? {
        guard let value else { return nil }
        return value == 0x0F ? "not_available" : enumerationName(value, in: names)
    }

    public var fields: [Field] {
        [
            Field("flags", .int(flags)),
            Field("sequence_number", .int(sequenceNumber)),
            Field("extended_flags", .optional(extendedFlags)),
            Field("carbohydrate_id", carbohydrate.map { .string($0.name) } ?? .null),
            Field("carbohydrate", carbohydrate?.kilograms.fieldValue ?? .null, unit: "kg"),
            Field("meal", mealName.map { .string($0) } ?? .null),
            Field("tester", testerName.map { .string($0) } ?? .null),
            Field("health", healthName.map { .string($0) } ?? .null),
            Field("exercise_duration", .optional(exercise?.durationSeconds), unit: "s"),
            Field("exercise_intensity", .optional(exercise?.intensityPercent), unit: "%"),
            Field("medication_id", medication.map { .string($0.name) } ?? .null),
            Field("medication", medication?.amount.fieldValue ?? .null, unit: medicationUnits.rawValue),
            Field("hba1c", hba1c?.fieldValue ?? .null, unit: "%"),
        ]
    }
}

/// Glucose Feature (0x2A51): what the meter can detect. 16 bits, read once.
///
/// ```
/// bit 0 low battery detection, 1 sensor malfunction detection, 2 sample size, 3 strip insertion error detection,
/// 4 strip type error detection, 5 result high-low detection, 6 temperature high-low detection,
/// 7 read interrupt detection, 8 general device fault, 9 time fault, 10 multiple bond, 11-15 reserved
/// ```
public struct GlucoseFeature: CharacteristicValue, OptionSet, Hashable {
    public static let uuid = BluetoothUUID.glucoseFeature
    public static let name = "glucose-feature"

    public static let lowBatteryDetection = GlucoseFeature(rawValue: 1 << 0)
    public static let sensorMalfunctionDetection = GlucoseFeature(rawValue: 1 << 1)
    public static let sampleSize = GlucoseFeature(rawValue: 1 << 2)
    public static let stripInsertionErrorDetection = GlucoseFeature(rawValue: 1 << 3)
    public static let stripTypeErrorDetection = GlucoseFeature(rawValue: 1 << 4)
    public static let resultHighLowDetection = GlucoseFeature(rawValue: 1 << 5)
    public static let temperatureHighLowDetection = GlucoseFeature(rawValue: 1 << 6)
    public static let readInterruptDetection = GlucoseFeature(rawValue: 1 << 7)
    public static let generalDeviceFault = GlucoseFeature(rawValue: 1 << 8)
    public static let timeFault = GlucoseFeature(rawValue: 1 << 9)
    public static let multipleBond = GlucoseFeature(rawValue: 1 << 10)

    static let names = [
        "low_battery_detection", "sensor_malfunction_detection", "sample_size", "strip_insertion_error_detection",
        "strip_type_error_detection", "result_high_low_detection", "temperature_high_low_detection",
        "read_interrupt_detection", "general_device_fault", "time_fault", "multiple_bond",
    ]

    public var rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    public init(decoding bytes: borrowing [UInt8]) throws(DecodeError) {
        rawValue = try decodeFeatureBits(bytes)
    }

    public func encoded() -> [UInt8] { encodeFeatureBits(rawValue) }

    public var fields: [Field] {
        [Field("value", .int(rawValue))]
            + Self.names.enumerated().map { Field("\($1)_supported", .bool(rawValue & (1 << $0) != 0)) }
            + [Field("reserved_bits", .int(rawValue & 0xF800))]
    }
}

extension DateTime {
    /// These wall-clock fields plus `minutes` (proleptic Gregorian, no time zone); `nil` when the fields are not
    /// ``isComplete`` or the result leaves years 1582-9999.
    func adding(minutes: Int) -> DateTime? {
        guard isComplete else { return nil }
        let days = CivilCalendar.days(year: Int64(year), month: Int64(month), day: Int64(day))
        let total = days * 1440 + Int64(hours) * 60 + Int64(self.minutes) + Int64(minutes)
        let dayCount = total >= 0 ? total / 1440 : (total - 1439) / 1440
        let minuteOfDay = total - dayCount * 1440
        let civil = CivilCalendar.date(days: dayCount)
        guard (1582...9999).contains(civil.year) else { return nil }
        return DateTime(
            year: UInt16(civil.year), month: UInt8(civil.month), day: UInt8(civil.day), hours: UInt8(minuteOfDay / 60),
            minutes: UInt8(minuteOfDay % 60), seconds: seconds)
    }
}
