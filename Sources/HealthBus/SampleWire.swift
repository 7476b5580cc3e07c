public import DBus
public import Foundation
public import Health

/// A sample as the API carries it: a quantity sample, a heartbeat series (type `heartbeatSeries`), a correlation
/// (`bloodPressure`, `food`) or a workout.
public enum BusSample: Hashable, Sendable {
    case quantity(QuantitySample)
    case heartbeats(HeartbeatSeriesSample)
    case correlation(Correlation)
    case workout(Workout)

    /// The sample's id.
    public var id: UUID {
        switch self {
        case .quantity(let sample): sample.id
        case .heartbeats(let series): series.id
        case .correlation(let correlation): correlation.id
        case .workout(let workout): workout.id
        }
    }

    /// The sample's source.
    public var source: Source {
        switch self {
        case .quantity(let sample): sample.source
        case .heartbeats(let series): series.source
        case .correlation(let correlation): correlation.source
        case .workout(let workout): workout.source
        }
    }
}

/// Samples to and from their wire form `(sxxdsa{sv})`: type, start and end in milliseconds since the epoch (UTC),
/// value, unit, and a dictionary of optional properties:
///
/// | key | type | meaning |
/// |---|---|---|
/// | `id` | `s` | the sample's UUID; left out when saving, the store derives one from the natural key |
/// | `source` | `s` | who wrote it; when saving, the service sets it to the calling app |
/// | `sourceVersion` | `s` | the writer's version |
/// | `device` | `a{ss}` | `name`, `manufacturer`, `model`, `hardwareVersion`, `firmwareVersion`, `softwareVersion`, `serialNumber`, `localIdentifier` |
/// | `subject` | `s` | who wore the sensor |
/// | `startOffset` | `i` | the UTC offset at the start, in seconds (local time = start + offset) |
/// | `metadata` | `a{sv}` | HealthKit metadata: strings, numbers (integers come back as `x`), booleans; a date as `a{sv}` `{date: x}` (ms), a quantity as `{value: d, unit: s}` |
/// | `beats` | `a(ddb)` | heartbeat series only: offset from the start (ms), RR interval (ms), preceded by a gap |
///
/// | `categoryValue` | `s` | category samples only: the value's name (`asleepDeep`); when saving, it may stand for the value |
/// | `objects` | `a(sxxdsa{sv})` | correlations only: the member samples, in this same form |
/// | `activityType` | `s` | workouts only: HealthKit's `HKWorkoutActivityType` case name (`running`) |
/// | `totalEnergyBurned`, `totalDistance`, `totalSwimmingStrokeCount`, `totalFlightsClimbed` | `d` | workouts only: kcal, m, count, count |
/// | `events` | `aa{sv}` | workouts only: `{type: s, start: x, end: x, metadata: a{sv}}`, `type` an `HKWorkoutEventType` name (`pause`) |
/// | `routes` | `aa{sv}` | workouts only: `{locations: a(xddddddd), metadata: a{sv}}`, each location its time (ms), latitude, longitude (degrees), altitude (m), horizontal and vertical accuracy (m), speed (m/s) and course (degrees), NaN for what is not known |
///
/// A correlation carries its number of members as the value, in `count` (ignored when saving). A workout carries
/// its duration as the value, in `s` (another time unit is converted when saving).
///
/// A heartbeat series carries its number of beats as the value, in `count` (ignored when saving). A category
/// sample (`sleepAnalysis`, ...) carries its enumeration's integer as the value, an empty unit and its name in
/// `categoryValue`; when saving, either names the value.
public enum SampleWire {
    /// The property keys a sample may carry.
    public static let propertyKeys: Set<String> = [
        "id", "source", "sourceVersion", "device", "subject", "startOffset", "metadata", "beats", "categoryValue",
        "objects", "activityType", "totalEnergyBurned", "totalDistance", "totalSwimmingStrokeCount",
        "totalFlightsClimbed", "events", "routes",
    ]
    /// The properties only workouts have.
    static let workoutKeys: Set<String> = [
        "activityType", "totalEnergyBurned", "totalDistance", "totalSwimmingStrokeCount", "totalFlightsClimbed",
        "events", "routes",
    ]
    /// The keys of a workout event.
    static let eventKeys: Set<String> = ["type", "start", "end", "metadata"]
    /// The keys of a workout route.
    static let routeKeys: Set<String> = ["locations", "metadata"]
    /// The wire type of a route location.
    static let locationType = DBusType.struct([.int64, .double, .double, .double, .double, .double, .double, .double])
    /// The keys of the `device` property, in the order of ``Device``'s fields.
    public static let deviceKeys = [
        "name", "manufacturer", "model", "hardwareVersion", "firmwareVersion", "softwareVersion", "serialNumber",
        "localIdentifier",
    ]

    // MARK: Encoding

    /// The wire form of a quantity sample, its value in `unit` (the type's canonical unit when `nil`).
    ///
    /// With `forSaving`, as an app sends it to `SaveSamples`: without `source` (the service sets it), without an
    /// `id` derived from the sample's own fields (the service derives it again with the app as the source), and
    /// without the id of a sample with an `externalUUID` (the store gives each version its own). Any other id is
    /// sent, and refused: apps do not choose ids.
    public static func encode(_ sample: QuantitySample, unit: HealthUnit? = nil, forSaving: Bool = false)
        -> DBusValue
    {
        var value = sample.value
        var unitText = sample.type.canonicalUnit
        if let unit, let canonical = try? HealthUnit(sample.type.canonicalUnit),
            let converted = try? canonical.convert(sample.value, to: unit)
        {
            value = converted
            unitText = unit.description
        }
        var properties = common(
            id: sample.id, source: sample.source, device: sample.device, subject: sample.subject,
            startOffset: sample.startOffsetSeconds, metadata: sample.metadata)
        if forSaving {
            let generated = sample.hasDerivedID || sample.metadata[MetadataKey.externalUUID] != nil
            properties.removeAll { $0.0 == "source" || ($0.0 == "id" && generated) }
        }
        if sample.type.kind == .category, let integer = Int(exactly: sample.value),
            let name = sample.type.name(of: integer)
        {
            properties.append(("categoryValue", .string(name)))
        }
        properties.sort { $0.0 < $1.0 }
        return .struct([
            .string(sample.type.identifier), .int64(sample.start.milliseconds), .int64(sample.end.milliseconds),
            .double(value), .string(unitText), .vardict(ordered: properties),
        ])
    }

    /// The wire form of a heartbeat series: its beat count as the value, its beats in `beats`. `forSaving` as for
    /// quantity samples.
    public static func encode(_ series: HeartbeatSeriesSample, forSaving: Bool = false) -> DBusValue {
        var properties = common(
            id: series.id, source: series.source, device: series.device, subject: series.subject,
            startOffset: series.startOffsetSeconds, metadata: series.metadata)
        if forSaving { properties.removeAll { $0.0 == "source" || ($0.0 == "id" && series.hasDerivedID) } }
        let beats = series.beats.map { beat in
            DBusValue.struct([
                .double(beat.offsetMilliseconds), .double(beat.rrMilliseconds), .boolean(beat.precededByGap),
            ])
        }
        properties.append(("beats", .array(.struct([.double, .double, .boolean]), beats)))
        properties.sort { $0.0 < $1.0 }
        return .struct([
            .string(HealthType.heartbeatSeries.identifier), .int64(series.start.milliseconds),
            .int64(series.end.milliseconds), .double(Double(series.beats.count)), .string("count"),
            .vardict(ordered: properties),
        ])
    }

    /// The wire form of a correlation: its member count as the value, its members in `objects`. `forSaving` as
    /// for quantity samples, members too.
    public static func encode(_ correlation: Correlation, forSaving: Bool = false) -> DBusValue {
        var properties = common(
            id: correlation.id, source: correlation.source, device: correlation.device, subject: correlation.subject,
            startOffset: correlation.startOffsetSeconds, metadata: correlation.metadata)
        if forSaving {
            let derived =
                correlation.id
                == QuantitySample.derivedID(
                    type: correlation.type.identifier, source: correlation.source.identifier,
                    device: correlation.device?.key, start: correlation.start, end: correlation.end)
            properties.removeAll { $0.0 == "source" || ($0.0 == "id" && derived) }
        }
        properties.append(
            ("objects", .array(HealthBusAPI.sampleType, correlation.objects.map { encode($0, forSaving: forSaving) })))
        properties.sort { $0.0 < $1.0 }
        return .struct([
            .string(correlation.type.identifier), .int64(correlation.start.milliseconds),
            .int64(correlation.end.milliseconds), .double(Double(correlation.objects.count)), .string("count"),
            .vardict(ordered: properties),
        ])
    }

    /// The wire form of a workout: its duration in seconds as the value, its own fields as properties.
    /// `forSaving` as for quantity samples.
    public static func encode(_ workout: Workout, forSaving: Bool = false) -> DBusValue {
        var properties = common(
            id: workout.id, source: workout.source, device: workout.device, subject: workout.subject,
            startOffset: workout.startOffsetSeconds, metadata: workout.metadata)
        if forSaving {
            let derived =
                workout.id
                == QuantitySample.derivedID(
                    type: HealthType.workout.identifier, source: workout.source.identifier,
                    device: workout.device?.key, start: workout.start, end: workout.end)
            properties.removeAll { $0.0 == "source" || ($0.0 == "id" && derived) }
        }
        properties.append(("activityType", .string(workout.activityType.name)))
        let totals: [(String, Double?)] = [
            ("totalEnergyBurned", workout.totalEnergyBurned), ("totalDistance", workout.totalDistance),
            ("totalSwimmingStrokeCount", workout.totalSwimmingStrokeCount),
            ("totalFlightsClimbed", workout.totalFlightsClimbed),
        ]
        for (key, total) in totals { if let total { properties.append((key, .double(total))) } }
        if !workout.events.isEmpty {
            let events = workout.events.map { event in
                var fields: [(String, DBusValue)] = [
                    ("type", .string(event.kind.name)), ("start", .int64(event.start.milliseconds)),
                    ("end", .int64(event.end.milliseconds)),
                ]
                if !event.metadata.isEmpty { fields.append(("metadata", encode(event.metadata))) }
                return DBusValue.vardict(ordered: fields)
            }
            properties.append(("events", .array(HealthBusAPI.options, events)))
        }
        if !workout.routes.isEmpty {
            let routes = workout.routes.map { route in
                let locations = route.locations.map { location in
                    DBusValue.struct(
                        [.int64(location.time.milliseconds), .double(location.latitude), .double(location.longitude)]
                            + location.optionalNumbers.map { .double($0 ?? .nan) })
                }
                var fields: [(String, DBusValue)] = [("locations", .array(locationType, locations))]
                if !route.metadata.isEmpty { fields.append(("metadata", encode(route.metadata))) }
                return DBusValue.vardict(ordered: fields)
            }
            properties.append(("routes", .array(HealthBusAPI.options, routes)))
        }
        properties.sort { $0.0 < $1.0 }
        return .struct([
            .string(HealthType.workout.identifier), .int64(workout.start.milliseconds),
            .int64(workout.end.milliseconds), .double(workout.duration), .string("s"), .vardict(ordered: properties),
        ])
    }

    /// The wire form of any kind.
    public static func encode(_ sample: BusSample, unit: HealthUnit? = nil) -> DBusValue {
        switch sample {
        case .quantity(let quantity): encode(quantity, unit: unit)
        case .heartbeats(let series): encode(series)
        case .correlation(let correlation): encode(correlation)
        case .workout(let workout): encode(workout)
        }
    }

    private static func common(
        id: UUID, source: Source, device: Device?, subject: String?, startOffset: Int32,
        metadata: [String: MetadataValue]
    ) -> [(String, DBusValue)] {
        var properties: [(String, DBusValue)] = [
            ("id", .string(id.uuidString.lowercased())), ("source", .string(source.identifier)),
            ("startOffset", .int32(startOffset)),
        ]
        if let version = source.version { properties.append(("sourceVersion", .string(version))) }
        if let device { properties.append(("device", encode(device))) }
        if let subject { properties.append(("subject", .string(subject))) }
        if !metadata.isEmpty { properties.append(("metadata", encode(metadata))) }
        return properties
    }

    /// A device as `a{ss}` (absent fields left out).
    public static func encode(_ device: Device) -> DBusValue {
        let fields = [
            device.name, device.manufacturer, device.model, device.hardwareVersion, device.firmwareVersion,
            device.softwareVersion, device.serialNumber, device.localIdentifier,
        ]
        let entries = zip(deviceKeys, fields).compactMap { key, value in
            value.map { DBusDictEntry(key: .string(key), value: .string($0)) }
        }
        return .dictionary(key: .string, value: .string, entries)
    }

    /// Metadata as `a{sv}`.
    public static func encode(_ metadata: [String: MetadataValue]) -> DBusValue {
        .vardict(
            metadata.mapValues { value in
                switch value {
                case .string(let text): .string(text)
                case .number(let number): .double(number)
                case .integer(let number): .int64(number)
                case .bool(let flag): .boolean(flag)
                case .date(let instant): .vardict(["date": .int64(instant.milliseconds)])
                case .quantity(let number, let unit): .vardict(["value": .double(number), "unit": .string(unit)])
                }
            })
    }

    // MARK: Sizes

    /// Checks a sample's sizes before it is decoded: at most ``HealthBusAPI/maximumMetadataEntries`` metadata
    /// entries, strings of at most ``HealthBusAPI/maximumStringLength`` bytes. Returns its number of beats.
    ///
    /// - Throws: ``HealthBusError`` `LimitExceeded` naming what is too large.
    public static func checkSize(_ value: DBusValue) throws(HealthBusError) -> Int {
        guard let fields = value.structMembers, fields.count == 6, let properties = fields[5].stringKeyedValue else {
            return 0
        }
        for field in [fields[0], fields[4]] {
            if let text = field.stringValue { try checkLength(text, "type and unit") }
        }
        for (key, property) in properties {
            try checkLength(key, "a property name")
            if let text = property.stringValue { try checkLength(text, key) }
        }
        if let device = properties["device"]?.dictionaryEntries {
            guard device.count <= deviceKeys.count else {
                throw .invalidArgument("device is a{ss} with keys " + deviceKeys.joined(separator: ", "))
            }
            for entry in device {
                if let text = entry.value.stringValue { try checkLength(text, "device") }
            }
        }
        if let metadata = properties["metadata"] { try checkMetadataSize(metadata, "metadata") }
        if let objects = properties["objects"]?.arrayElements {
            guard objects.count <= Correlation.maximumObjects else {
                throw .limitExceeded(
                    "a correlation holds at most \(Correlation.maximumObjects) samples, not \(objects.count)")
            }
            for (index, object) in objects.enumerated() {
                guard object.structMembers?[5].stringKeyedValue?["objects"] == nil else {
                    throw .invalidArgument("sample \(index + 1) of the correlation: a correlation holds no correlation")
                }
                do {
                    _ = try checkSize(object)
                } catch {
                    throw HealthBusError(
                        name: error.name, message: "sample \(index + 1) of the correlation: \(error.message)")
                }
            }
        }
        if let events = properties["events"]?.arrayElements {
            guard events.count <= Workout.maximumEvents else {
                throw .limitExceeded("a workout holds at most \(Workout.maximumEvents) events, not \(events.count)")
            }
            for (index, event) in events.enumerated() {
                guard let fields = event.stringKeyedValue else { continue }
                guard fields.count <= eventKeys.count else {
                    throw .invalidArgument("event \(index + 1): an event is a{sv} with keys type, start, end, metadata")
                }
                if let text = fields["type"]?.stringValue { try checkLength(text, "event type") }
                if let metadata = fields["metadata"] { try checkMetadataSize(metadata, "event \(index + 1) metadata") }
            }
        }
        if let routes = properties["routes"]?.arrayElements {
            guard routes.count <= Workout.maximumRoutes else {
                throw .limitExceeded("a workout holds at most \(Workout.maximumRoutes) routes, not \(routes.count)")
            }
            var locations = 0
            for (index, route) in routes.enumerated() {
                guard let fields = route.stringKeyedValue else { continue }
                guard fields.count <= routeKeys.count else {
                    throw .invalidArgument("route \(index + 1): a route is a{sv} with keys locations, metadata")
                }
                locations += fields["locations"]?.arrayElements?.count ?? 0
                guard locations <= Workout.maximumRouteLocations else {
                    throw .limitExceeded(
                        "a workout's routes hold at most \(Workout.maximumRouteLocations) locations together")
                }
                if let metadata = fields["metadata"] { try checkMetadataSize(metadata, "route \(index + 1) metadata") }
            }
        }
        return properties["beats"]?.arrayElements?.count ?? 0
    }

    /// Checks metadata (`a{sv}`) against ``HealthBusAPI/maximumMetadataEntries`` and
    /// ``HealthBusAPI/maximumStringLength`` before it is read.
    public static func checkMetadataSize(_ value: DBusValue, _ name: String) throws(HealthBusError) {
        guard let entries = value.stringKeyedValue else { return }
        guard entries.count <= HealthBusAPI.maximumMetadataEntries else {
            throw .limitExceeded(
                "\(name) holds \(entries.count) entries; at most \(HealthBusAPI.maximumMetadataEntries)")
        }
        for (key, entry) in entries {
            try checkLength(key, "\(name) key")
            if let text = entry.stringValue { try checkLength(text, "\(name) '\(HealthBusError.clipped(key))'") }
            if let inner = entry.stringKeyedValue {
                guard inner.count <= 2 else {
                    throw .invalidArgument(
                        "\(name) '\(HealthBusError.clipped(key))': a date is {date: x}, a quantity {value: d, unit: s}")
                }
                if let unit = inner["unit"]?.stringValue { try checkLength(unit, "\(name) unit") }
            }
        }
    }

    static func checkLength(_ text: String, _ name: String) throws(HealthBusError) {
        guard text.utf8.count <= HealthBusAPI.maximumStringLength else {
            throw .limitExceeded(
                "\(name): a string of \(text.utf8.count) bytes; at most \(HealthBusAPI.maximumStringLength)")
        }
    }

    // MARK: Decoding

    /// A sample from its wire form, its value converted to the type's canonical unit.
    ///
    /// - Parameters:
    ///   - value: one `(sxxdsa{sv})`.
    ///   - defaultSource: the source when the properties name none.
    /// - Throws: ``HealthBusError``: `UnknownType`, `IncompatibleUnit`, or `InvalidArgument` naming the field.
    public static func decode(_ value: DBusValue, defaultSource: Source = Source(identifier: "")) throws(HealthBusError)
        -> BusSample
    {
        guard let fields = value.structMembers, fields.count == 6, let identifier = fields[0].stringValue,
            let start = fields[1].int64Value, let end = fields[2].int64Value, let number = fields[3].doubleValue,
            let unitText = fields[4].stringValue, let properties = fields[5].stringKeyedValue
        else { throw .invalidArgument("a sample is (type s, start_ms x, end_ms x, value d, unit s, properties a{sv})") }
        guard let type = HealthTypeCatalog.type(identifier) else { throw .unknownType(identifier) }
        for key in properties.keys where !propertyKeys.contains(key) {
            throw .invalidArgument(
                "unknown sample property '\(key)'; the properties are "
                    + propertyKeys.sorted().joined(separator: ", "))
        }
        guard start <= end else {
            throw HealthBusError(
                name: HealthBusError.Name.invalidSample,
                message: "end (\(end) ms) is before start (\(start) ms); nothing of the batch was written")
        }
        let id = try properties["id"].map { text throws(HealthBusError) in try uuid(text, "id") }
        var source = defaultSource
        if let property = properties["source"] {
            source.identifier = try string(property, "source")
        }
        if let property = properties["sourceVersion"] { source.version = try string(property, "sourceVersion") }
        let device = try properties["device"].map { property throws(HealthBusError) in try decodeDevice(property) }
        let subject = try properties["subject"].map { property throws(HealthBusError) in
            try string(property, "subject")
        }
        var offset: Int32 = 0
        if let property = properties["startOffset"] {
            guard let seconds = integer(property), (-64_800...64_800).contains(seconds) else {
                throw .invalidArgument("startOffset is the UTC offset in seconds (i), between -64800 and 64800")
            }
            offset = Int32(seconds)
        }
        let metadata =
            try properties["metadata"].map { property throws(HealthBusError) in
                try decodeMetadata(property)
            } ?? [:]
        let startInstant = Instant(milliseconds: start)
        let endInstant = Instant(milliseconds: end)
        if type.aggregation == .series {
            guard let property = properties["beats"] else {
                throw .invalidArgument("a heartbeatSeries sample needs its beats: property 'beats' a(ddb)")
            }
            return .heartbeats(
                HeartbeatSeriesSample(
                    id: id, start: startInstant, end: endInstant, startOffsetSeconds: offset,
                    beats: try decodeBeats(property), source: source, device: device, subject: subject,
                    metadata: metadata))
        }
        guard properties["beats"] == nil else {
            throw .invalidArgument("only heartbeatSeries samples have beats; \(identifier) has a value")
        }
        guard properties["objects"] == nil || type.kind == .correlation else {
            throw .invalidArgument("only correlations (bloodPressure, food) have objects; \(identifier) has none")
        }
        if let key = properties.keys.first(where: { workoutKeys.contains($0) }), type.kind != .workout {
            throw .invalidArgument("only workouts have '\(key)'; \(identifier) is not a workout")
        }
        switch type.kind {
        case .correlation:
            guard let objects = properties["objects"]?.arrayElements else {
                throw .invalidArgument(
                    "a \(identifier) correlation needs its samples: property 'objects' a(sxxdsa{sv})")
            }
            var members: [QuantitySample] = []
            for (index, object) in objects.enumerated() {
                let member: BusSample
                do {
                    member = try decode(object, defaultSource: source)
                } catch {
                    throw HealthBusError(
                        name: error.name, message: "sample \(index + 1) of the correlation: \(error.message)")
                }
                guard case .quantity(let quantity) = member else {
                    throw .invalidArgument("sample \(index + 1) of the correlation: members are quantity samples")
                }
                members.append(quantity)
            }
            return .correlation(
                Correlation(
                    id: id, type: type, start: startInstant, end: endInstant, startOffsetSeconds: offset,
                    objects: members, source: source, device: device, subject: subject, metadata: metadata))
        case .workout:
            return .workout(
                try decodeWorkout(
                    properties, duration: (number, unitText),
                    Workout(
                        id: id, activityType: .other, start: startInstant, end: endInstant, startOffsetSeconds: offset,
                        source: source, device: device, subject: subject, metadata: metadata)))
        default:
            break
        }
        guard type.isSampleType else {
            throw .invalidArgument(
                "\(identifier) is a \(type.kind.rawValue) type, not a sample"
                    + (type.kind == .characteristic ? "; apps read it with Characteristics and never write it" : ""))
        }
        let canonicalValue: Double
        if type.kind == .category {
            canonicalValue = try categoryValue(number, unit: unitText, name: properties["categoryValue"], of: type)
        } else {
            guard properties["categoryValue"] == nil else {
                throw .invalidArgument("only category samples have a categoryValue; \(identifier) is a quantity")
            }
            canonicalValue = try canonical(number, unit: unitText, of: type)
        }
        return .quantity(
            QuantitySample(
                id: id, type: type, start: startInstant, end: endInstant, startOffsetSeconds: offset,
                value: canonicalValue, source: source, device: device, subject: subject, metadata: metadata))
    }

    /// A category sample's integer: the `categoryValue` name when given, else `value`; either must be one of the
    /// type's enumeration, and the unit empty.
    static func categoryValue(_ value: Double, unit: String, name: DBusValue?, of type: HealthType)
        throws(HealthBusError) -> Double
    {
        let allowed = type.values.map { "\($0.name) (\($0.value))" }.joined(separator: ", ")
        guard unit.isEmpty else {
            throw HealthBusError(
                name: HealthBusError.Name.incompatibleUnit,
                message: "\(type.identifier) is a category and has no unit (found '\(HealthBusError.clipped(unit))'); "
                    + "give the value as an integer or a name in categoryValue: \(allowed)")
        }
        if let name {
            let text = try string(name, "categoryValue")
            guard let integer = type.value(named: text) else {
                throw HealthBusError(
                    name: HealthBusError.Name.invalidSample,
                    message: "\(type.identifier) has no value '\(HealthBusError.clipped(text))'; it takes \(allowed); "
                        + "nothing of the batch was written")
            }
            return Double(integer)
        }
        guard let integer = Int(exactly: value), type.name(of: integer) != nil else {
            throw HealthBusError(
                name: HealthBusError.Name.invalidSample,
                message: "\(type.identifier) has no value \(value); it takes \(allowed); nothing of the batch was "
                    + "written")
        }
        return Double(integer)
    }

    /// `value` in `unit` converted to the type's canonical unit; an empty unit means the canonical one.
    static func canonical(_ value: Double, unit text: String, of type: HealthType) throws(HealthBusError) -> Double {
        guard !text.isEmpty, text != type.canonicalUnit else { return value }
        let unit = try parseUnit(text, for: type)
        do {
            return try unit.convert(value, to: HealthUnit(type.canonicalUnit))
        } catch {
            throw HealthBusError(
                name: HealthBusError.Name.incompatibleUnit,
                message: "\(type.identifier) is measured in \(type.canonicalUnit) or a unit of the same kind; "
                    + "cannot convert \(text): \(error)")
        }
    }

    /// Parses `text` and checks that it measures what `type` measures.
    public static func parseUnit(_ text: String, for type: HealthType) throws(HealthBusError) -> HealthUnit {
        let unit: HealthUnit
        do {
            unit = try HealthUnit(text)
        } catch {
            throw HealthBusError(
                name: HealthBusError.Name.incompatibleUnit,
                message: "'\(text)' is not a unit (\(error)); write HealthKit unit strings such as count/min, m, km, "
                    + "kcal, ms")
        }
        guard let canonical = try? HealthUnit(type.canonicalUnit), unit.isCompatible(with: canonical) else {
            throw HealthBusError(
                name: HealthBusError.Name.incompatibleUnit,
                message: "\(type.identifier) is measured in \(type.canonicalUnit) (dimension "
                    + "\((try? HealthUnit(type.canonicalUnit))?.dimension.description ?? "?")), not in \(text) "
                    + "(\(unit.dimension))")
        }
        return unit
    }

    /// A workout's own fields from its properties and value (the duration in `unit`, `s` when empty), on top of
    /// `base`.
    static func decodeWorkout(
        _ properties: [String: DBusValue], duration: (value: Double, unit: String), _ base: Workout
    ) throws(HealthBusError) -> Workout {
        var workout = base
        guard let name = properties["activityType"]?.stringValue else {
            throw .invalidArgument(
                "a workout needs its activityType (s), an HKWorkoutActivityType name such as running")
        }
        guard let activity = WorkoutActivityType(name: name) else {
            throw HealthBusError(
                name: HealthBusError.Name.invalidSample,
                message: "'\(HealthBusError.clipped(name))' is not an HKWorkoutActivityType (running, walking, "
                    + "cycling, swimming, ..., other); nothing of the batch was written")
        }
        workout.activityType = activity
        if duration.unit.isEmpty || duration.unit == "s" {
            workout.duration = duration.value
        } else {
            do {
                workout.duration = try HealthUnit(duration.unit).convert(duration.value, to: HealthUnit("s"))
            } catch {
                throw HealthBusError(
                    name: HealthBusError.Name.incompatibleUnit,
                    message: "a workout's value is its duration in s (or another time unit), not in "
                        + HealthBusError.clipped(duration.unit))
            }
        }
        func total(_ key: String) throws(HealthBusError) -> Double? {
            guard let property = properties[key] else { return nil }
            guard let number = property.doubleValue ?? integer(property).map(Double.init) else {
                throw .invalidArgument("\(key) is a number (d)")
            }
            return number
        }
        workout.totalEnergyBurned = try total("totalEnergyBurned")
        workout.totalDistance = try total("totalDistance")
        workout.totalSwimmingStrokeCount = try total("totalSwimmingStrokeCount")
        workout.totalFlightsClimbed = try total("totalFlightsClimbed")
        if let property = properties["events"] {
            guard let events = property.arrayElements else { throw .invalidArgument("events is aa{sv}") }
            for (index, event) in events.enumerated() {
                let place = "event \(index + 1)"
                guard let fields = event.stringKeyedValue,
                    fields.keys.allSatisfy({ eventKeys.contains($0) }), let kindName = fields["type"]?.stringValue,
                    let start = fields["start"].flatMap(integer), let end = fields["end"].flatMap(integer)
                else {
                    throw .invalidArgument("\(place): an event is a{sv} {type: s, start: x, end: x, metadata: a{sv}}")
                }
                guard let kind = WorkoutEvent.Kind(name: kindName) else {
                    throw .invalidArgument(
                        "\(place): '\(HealthBusError.clipped(kindName))' is not an HKWorkoutEventType ("
                            + WorkoutEvent.Kind.allCases.map(\.name).joined(separator: ", ") + ")")
                }
                let metadata =
                    try fields["metadata"].map { value throws(HealthBusError) in try decodeMetadata(value) } ?? [:]
                workout.events.append(
                    WorkoutEvent(
                        kind, start: Instant(milliseconds: start), end: Instant(milliseconds: end), metadata: metadata))
            }
        }
        if let property = properties["routes"] {
            guard let routes = property.arrayElements else { throw .invalidArgument("routes is aa{sv}") }
            workout.routes = try routes.enumerated().map { index, route throws(HealthBusError) in
                try decodeRoute(route, place: "route \(index + 1)")
            }
        }
        return workout
    }

    /// A route `{locations: a(xddddddd), metadata: a{sv}}`: NaN for what the receiver did not know, past the
    /// latitude and longitude (the workout's validity rules judge the numbers).
    static func decodeRoute(_ value: DBusValue, place: String) throws(HealthBusError) -> WorkoutRoute {
        let shape = "\(place): a route is a{sv} {locations: a(xddddddd), metadata: a{sv}}"
        guard let fields = value.stringKeyedValue, fields.keys.allSatisfy({ routeKeys.contains($0) }),
            let elements = fields["locations"]?.arrayElements
        else { throw .invalidArgument(shape) }
        var locations: [RouteLocation] = []
        locations.reserveCapacity(elements.count)
        for element in elements {
            guard let members = element.structMembers, members.count == 8, let time = integer(members[0]) else {
                throw .invalidArgument(shape)
            }
            var numbers: [Double] = []
            for member in members.dropFirst() {
                guard let number = member.doubleValue else { throw .invalidArgument(shape) }
                numbers.append(number)
            }
            locations.append(
                RouteLocation(
                    time: Instant(milliseconds: time), latitude: numbers[0], longitude: numbers[1],
                    optionalNumbers: numbers[2...].map { $0.isNaN ? nil : $0 }))
        }
        let metadata = try fields["metadata"].map { value throws(HealthBusError) in try decodeMetadata(value) } ?? [:]
        return WorkoutRoute(locations: locations, metadata: metadata)
    }

    static func decodeDevice(_ value: DBusValue) throws(HealthBusError) -> Device {
        guard let entries = value.dictionaryEntries else {
            throw .invalidArgument("device is a{ss} with keys " + deviceKeys.joined(separator: ", "))
        }
        var fields: [String: String] = [:]
        for entry in entries {
            guard let key = entry.key.stringValue, let text = entry.value.stringValue, deviceKeys.contains(key) else {
                throw .invalidArgument("device is a{ss} with keys " + deviceKeys.joined(separator: ", "))
            }
            fields[key] = text
        }
        return Device(
            name: fields["name"], manufacturer: fields["manufacturer"], model: fields["model"],
            hardwareVersion: fields["hardwareVersion"], firmwareVersion: fields["firmwareVersion"],
            softwareVersion: fields["softwareVersion"], serialNumber: fields["serialNumber"],
            localIdentifier: fields["localIdentifier"])
    }

    static func decodeMetadata(_ value: DBusValue) throws(HealthBusError) -> [String: MetadataValue] {
        guard let entries = value.stringKeyedValue else { throw .invalidArgument("metadata is a{sv}") }
        var metadata: [String: MetadataValue] = [:]
        for (key, entry) in entries {
            if let text = entry.stringValue, entry.objectPathValue == nil {
                metadata[key] = .string(text)
            } else if let flag = entry.boolValue {
                metadata[key] = .bool(flag)
            } else if let number = entry.doubleValue {
                metadata[key] = .number(number)
            } else if let number = integer(entry) {
                metadata[key] = .integer(number)
            } else if let inner = entry.stringKeyedValue, let date = inner["date"].flatMap(integer), inner.count == 1 {
                metadata[key] = .date(Instant(milliseconds: date))
            } else if let inner = entry.stringKeyedValue, inner.count == 2, let number = inner["value"]?.doubleValue,
                let unit = inner["unit"]?.stringValue
            {
                metadata[key] = .quantity(number, unit: unit)
            } else {
                throw .invalidArgument(
                    "metadata '\(key)': values are strings, numbers, booleans, {date: x} or {value: d, unit: s}")
            }
        }
        return metadata
    }

    static func decodeBeats(_ value: DBusValue) throws(HealthBusError) -> [Beat] {
        guard let elements = value.arrayElements else { throw .invalidArgument("beats is a(ddb)") }
        var beats: [Beat] = []
        beats.reserveCapacity(elements.count)
        for element in elements {
            guard let members = element.structMembers, members.count == 3, let offset = members[0].doubleValue,
                let rr = members[1].doubleValue, let gap = members[2].boolValue
            else { throw .invalidArgument("beats is a(ddb): offset ms, RR interval ms, preceded by a gap") }
            beats.append(Beat(offsetMilliseconds: offset, rrMilliseconds: rr, precededByGap: gap))
        }
        return beats
    }

    static func string(_ value: DBusValue, _ name: String) throws(HealthBusError) -> String {
        guard let text = value.stringValue else { throw .invalidArgument("\(name) is a string (s)") }
        return text
    }

    static func uuid(_ value: DBusValue, _ name: String) throws(HealthBusError) -> UUID {
        guard let text = value.stringValue, let id = UUID(uuidString: text) else {
            throw .invalidArgument("\(name) is a UUID string such as 0190a5b2-7c3e-8d4f-9a1b-2c3d4e5f6a7b")
        }
        return id
    }

    /// Any D-Bus integer as an Int64 (`y n q i u x t`), or `nil`.
    static func integer(_ value: DBusValue) -> Int64? {
        switch value.unwrapped {
        case .byte(let number): Int64(number)
        case .int16(let number): Int64(number)
        case .uint16(let number): Int64(number)
        case .int32(let number): Int64(number)
        case .uint32(let number): Int64(number)
        case .int64(let number): number
        case .uint64(let number): Int64(exactly: number)
        default: nil
        }
    }
}
