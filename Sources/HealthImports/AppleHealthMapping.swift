public import Health

/// How an Apple Health export's names and texts become the model's (docs/apple-health-import.md): type
/// identifiers, category and characteristic values, units, metadata keys and values, times and devices.
public enum AppleHealthMapping {
    /// The catalog's types by lower-cased identifier, to look up HealthKit's names without their prefix
    /// (`HKQuantityTypeIdentifierVO2Max` is `vo2Max`).
    private static let typesByLowercasedName: [String: HealthType] = Dictionary(
        HealthTypeCatalog.all.map { ($0.identifier.lowercased(), $0) }, uniquingKeysWith: { first, _ in first })

    /// The prefixes of HealthKit's type identifiers, in the export's `type` attributes.
    static let typePrefixes = [
        "HKQuantityTypeIdentifier", "HKCategoryTypeIdentifier", "HKCorrelationTypeIdentifier",
        "HKCharacteristicTypeIdentifier", "HKDataTypeIdentifier", "HKWorkoutTypeIdentifier",
    ]

    /// The catalog type of a HealthKit type identifier (`HKQuantityTypeIdentifierStepCount` → `stepCount`), or
    /// `nil` when the catalog has none.
    public static func type(_ identifier: String) -> HealthType? {
        guard let prefix = typePrefixes.first(where: { identifier.hasPrefix($0) }) else { return nil }
        return typesByLowercasedName[identifier.dropFirst(prefix.count).lowercased()]
    }

    /// A HealthKit type identifier without its prefix, first letter lower-cased (`walkingSpeed`), whether or not
    /// the catalog has it.
    public static func shortName(_ identifier: String) -> String {
        guard let prefix = typePrefixes.first(where: { identifier.hasPrefix($0) }) else { return identifier }
        let rest = identifier.dropFirst(prefix.count)
        guard let first = rest.first else { return identifier }
        return first.lowercased() + rest.dropFirst()
    }

    /// A category value: `HKCategoryValueSleepAnalysisAsleepCore` (the type's name, then the value's) or
    /// `HKCategoryValueNotApplicable`, as `type`'s integer; a plain integer the type has is accepted too.
    public static func categoryValue(_ text: String, of type: HealthType) -> Int? {
        if let number = Int(text), type.name(of: number) != nil { return number }
        var rest = Substring(text)
        guard rest.hasPrefix("HKCategoryValue") else { return nil }
        rest = rest.dropFirst("HKCategoryValue".count)
        if rest.lowercased().hasPrefix(type.identifier.lowercased()) { rest = rest.dropFirst(type.identifier.count) }
        return enumerated(String(rest), of: type)
    }

    /// An enumerated value of `type` named `name` (or an alias of it) regardless of case (`APositive` is
    /// `aPositive`).
    static func enumerated(_ name: String, of type: HealthType) -> Int? {
        // A name or alias as the catalog spells it (`Asleep`, before iOS 16, is `asleep`: asleepUnspecified).
        if let first = name.first, let value = type.value(named: first.lowercased() + name.dropFirst()) {
            return value
        }
        let wanted = name.lowercased()
        return type.values.first { $0.name.lowercased() == wanted }?.value
    }

    /// A characteristic of `<Me>`: `HKBiologicalSexFemale`, `HKBloodTypeABPositive`,
    /// `HKFitzpatrickSkinTypeIII`, or a date of birth `YYYY-MM-DD`. `nil` for a value that is not set
    /// (`...NotSet`, empty); throws a reason for one the type does not take.
    public static func characteristic(_ text: String, of type: HealthType) throws(MappingError)
        -> Characteristics.Value?
    {
        if text.isEmpty || text.hasSuffix("NotSet") { return nil }
        if type.values.isEmpty {
            do {
                return try Characteristics.Value(parsing: text, for: type)
            } catch {
                throw MappingError("\(error)")
            }
        }
        let prefixes = ["HKBiologicalSex", "HKBloodType", "HKFitzpatrickSkinType"]
        var name = Substring(text)
        if let prefix = prefixes.first(where: { text.hasPrefix($0) }) { name = name.dropFirst(prefix.count) }
        guard let value = enumerated(String(name), of: type), value != 0 else {
            throw MappingError("\(type.identifier) has no value \(text.prefix(64))")
        }
        return .enumerated(value)
    }

    /// A workout activity type: `HKWorkoutActivityTypeRunning` → `running`.
    public static func activityType(_ text: String) -> WorkoutActivityType? {
        let name = text.hasPrefix("HKWorkoutActivityType") ? String(text.dropFirst(21)) : text
        let wanted = name.lowercased()
        return WorkoutActivityType.allCases.first { $0.name.lowercased() == wanted }
    }

    /// A workout event type: `HKWorkoutEventTypePause` → `pause`.
    public static func eventKind(_ text: String) -> WorkoutEvent.Kind? {
        let name = text.hasPrefix("HKWorkoutEventType") ? String(text.dropFirst(18)) : text
        let wanted = name.lowercased()
        return WorkoutEvent.Kind.allCases.first { $0.name.lowercased() == wanted }
    }

    /// A metadata key: HealthKit's (`HKMetadataKeySyncVersion`, `HKTimeZone`, `HKWasUserEntered`) without the
    /// prefix, first letter lower-cased (`syncVersion`, `timeZone`, `wasUserEntered`); any other key as it is.
    public static func metadataKey(_ key: String) -> String {
        var rest = Substring(key)
        if rest.hasPrefix("HKMetadataKey") {
            rest = rest.dropFirst(13)
        } else if rest.hasPrefix("HK"), rest.count > 2, rest.dropFirst(2).first?.isUppercase == true {
            rest = rest.dropFirst(2)
        } else {
            return key
        }
        guard let first = rest.first else { return key }
        return first.lowercased() + rest.dropFirst()
    }

    /// Keys whose `0`/`1` values are booleans, and keys whose values are integers (HealthKit's enumerations and
    /// counters).
    static let booleanKeys: Set = ["wasUserEntered", "indoorWorkout", "wasTakenInLab", "coachedWorkout"]
    static let integerKeys: Set = [
        "syncVersion", "heartRateMotionContext", "heartRateSensorLocation", "swimmingLocationType",
        "swimmingStrokeStyle", "bodyTemperatureSensorLocation", "bloodGlucoseMealTime", "vo2MaxTestType",
        "insulinDeliveryReason", "workoutBrandName_",
    ]

    /// A metadata value as the export writes it (always text): a boolean or integer for the keys that hold
    /// them, a quantity for `number unit` with a unit the model reads (`72 degF`, `8.3 kcal/hr·kg`), otherwise
    /// the text.
    public static func metadataValue(_ text: String, key: String) -> MetadataValue {
        if booleanKeys.contains(key), text == "0" || text == "1" { return .bool(text == "1") }
        if integerKeys.contains(key), let number = Int64(text) { return .integer(number) }
        if let space = text.firstIndex(of: " "), let number = Double(text[..<space]), number.isFinite {
            let unit = String(text[text.index(after: space)...])
            if (try? HealthUnit(unit)) != nil { return .quantity(number, unit: unit) }
        }
        return .string(text)
    }

    /// An export time, `yyyy-MM-dd HH:mm:ss ±hhmm` (`2024-03-30 22:15:04 +0100`): the instant and the offset in
    /// seconds, or `nil` when it is not that form.
    public static func time(_ text: String) -> (instant: Instant, offset: Int32)? {
        var text = text
        return text.withUTF8 { time(bytes: $0) }
    }

    /// ``time(_:)`` of the UTF-8 bytes of the text.
    public static func time(bytes: UnsafeBufferPointer<UInt8>) -> (instant: Instant, offset: Int32)? {
        guard bytes.count == 25 else { return nil }
        var position = 0
        func digits(_ count: Int) -> Int? {
            var value = 0
            for _ in 0..<count {
                let byte = bytes[position]
                guard byte >= 0x30, byte <= 0x39 else { return nil }
                value = value * 10 + Int(byte - 0x30)
                position += 1
            }
            return value
        }
        func expect(_ character: UInt8) -> Bool {
            defer { position += 1 }
            return bytes[position] == character
        }
        guard let year = digits(4), expect(0x2D), let month = digits(2), expect(0x2D), let day = digits(2),
            expect(0x20), let hour = digits(2), expect(0x3A), let minute = digits(2), expect(0x3A),
            let second = digits(2), expect(0x20)
        else { return nil }
        let sign = bytes[position]
        position += 1
        guard sign == 0x2B || sign == 0x2D, let offsetHours = digits(2), let offsetMinutes = digits(2),
            offsetHours <= 23, offsetMinutes <= 59
        else { return nil }
        guard
            let local = try? LocalDateTime(
                year: year, month: month, day: day, hour: hour, minute: minute, second: min(second, 59),
                millisecond: second == 60 ? 999 : 0)
        else { return nil }
        let offset = Int32(sign == 0x2D ? -1 : 1) * Int32(offsetHours * 3_600 + offsetMinutes * 60)
        let milliseconds = local.naiveMilliseconds - Int64(offset) * 1_000
        guard Instant.supportedMilliseconds.contains(milliseconds) else { return nil }
        return (Instant(milliseconds: milliseconds), offset)
    }

    /// A beat's time of day in `<InstantaneousBeatsPerMinute time="...">`: `7:45:31.26 PM` or `19:45:31.26`, in
    /// milliseconds since local midnight, or `nil`.
    public static func timeOfDay(_ text: String) -> Int64? {
        var clock = Substring(text)
        var afternoon: Bool?
        for (suffix, isPM) in [(" PM", true), (" AM", false), ("PM", true), ("AM", false)]
        where clock.uppercased().hasSuffix(suffix) {
            clock = clock.dropLast(suffix.count)
            afternoon = isPM
            break
        }
        let parts = clock.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 3, let hour = Int(parts[0]), let minute = Int(parts[1]), (0...59).contains(minute)
        else { return nil }
        let secondParts = parts[2].split(separator: ".", omittingEmptySubsequences: false)
        guard (1...2).contains(secondParts.count), secondParts[0].count == 2, let second = Int(secondParts[0]),
            (0...59).contains(second)
        else { return nil }
        var milliseconds = 0
        if secondParts.count == 2 {
            let fraction = secondParts[1]
            guard !fraction.isEmpty, fraction.count <= 9, fraction.allSatisfy(\.isASCII), Int(fraction) != nil
            else { return nil }
            milliseconds = Int((fraction + "000").prefix(3)) ?? 0
        }
        var hours = hour
        if let afternoon {
            guard (1...12).contains(hour) else { return nil }
            hours = hour % 12 + (afternoon ? 12 : 0)
        } else {
            guard (0...23).contains(hour) else { return nil }
        }
        return Int64(((hours * 60 + minute) * 60 + second) * 1_000 + milliseconds)
    }

    /// The device in a `device` attribute: `<<HKDevice: 0x2807b16d0>, name:Apple Watch, manufacturer:Apple Inc.,
    /// model:Watch, hardware:Watch6,1, software:9.1>`. The object address is dropped (it changes from export to
    /// export); `hardware`, `software`, `firmware`, `localIdentifier` and `UDIDeviceIdentifier` become the
    /// device's versions and local identifier. A field's value runs up to the next `, key:` of a known key, so a
    /// comma inside a value stays. `nil` for text without any known field.
    public static func device(_ text: String) -> Device? {
        let keys = [
            "name", "manufacturer", "model", "hardware", "software", "firmware", "localIdentifier",
            "UDIDeviceIdentifier",
        ]
        var body = Substring(text)
        if body.hasPrefix("<<HKDevice:"), let close = body.firstIndex(of: ">") {
            body = body[body.index(after: close)...]
        }
        if body.hasSuffix(">") { body = body.dropLast() }
        // Every ", key:" of a known key, in order.
        var marks: [(key: String, start: Substring.Index, valueStart: Substring.Index)] = []
        var index = body.startIndex
        while index < body.endIndex {
            if body[index] == "," {
                let after = body[body.index(after: index)...].drop { $0 == " " }
                if let key = keys.first(where: { after.hasPrefix($0 + ":") }) {
                    marks.append((key, index, after.index(after.startIndex, offsetBy: key.count + 1)))
                }
            }
            index = body.index(after: index)
        }
        guard !marks.isEmpty else { return nil }
        var fields: [String: String] = [:]
        for (position, mark) in marks.enumerated() {
            let end = position + 1 < marks.count ? marks[position + 1].start : body.endIndex
            let trimmed = String(body[mark.valueStart..<end]).trimmingSpaces()
            if !trimmed.isEmpty, fields[mark.key] == nil { fields[mark.key] = trimmed }
        }
        guard !fields.isEmpty else { return nil }
        return Device(
            name: fields["name"], manufacturer: fields["manufacturer"], model: fields["model"],
            hardwareVersion: fields["hardware"], firmwareVersion: fields["firmware"],
            softwareVersion: fields["software"],
            localIdentifier: fields["localIdentifier"] ?? fields["UDIDeviceIdentifier"])
    }
}

/// Why one element of an export cannot be mapped (it is counted as not imported, with this reason).
public struct MappingError: Error, CustomStringConvertible, Sendable {
    public var description: String

    public init(_ description: String) { self.description = description }
}

extension String {
    func trimmingSpaces() -> String {
        var text = Substring(self)
        while text.first == " " { text = text.dropFirst() }
        while text.last == " " { text = text.dropLast() }
        return String(text)
    }
}
