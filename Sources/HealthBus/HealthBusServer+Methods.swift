import DBus
import Foundation
import Health

/// The methods of `org.wearhouse.Health1`; their arguments were checked against the declared signatures already.
extension HealthBusServer {
    func perform(_ call: DBusMethodCall, as identity: AppIdentity, sender: String) async throws -> [DBusValue] {
        let caller = Caller.app(identity.appID)
        let arguments = call.arguments
        switch call.member {
        case "Types":
            return [types()]
        case "Identity":
            return [.string(identity.appID), .uint32(identity.uid)]
        case "RequestAuthorization":
            let read = try Self.typeList(arguments[0], "read")
            let write = try Self.typeList(arguments[1], "write")
            let pending = try await store.requestAuthorization(app: identity.appID, read: read, share: write)
            return [.string(identity.appID), .boolean(pending)]
        case "SaveSamples":
            return [try await save(arguments[0], identity: identity, caller: caller)]
        case "DeleteSamples":
            return [try await delete(arguments[0], caller: caller)]
        case "AddWorkoutSamples":
            return [try await addWorkoutSamples(arguments, caller: caller)]
        case "QuerySamples":
            return try await query(type: arguments[0], options: arguments[1], caller: caller)
        case "Statistics":
            return [try await statistics(arguments, caller: caller)]
        case "StatisticsCollection":
            return [try await statisticsCollection(arguments, caller: caller)]
        case "Changes":
            return try await changes(arguments, caller: caller)
        case "Observe":
            let types = try Self.typeList(arguments[0], "types")
            guard !types.isEmpty else { throw HealthBusError.invalidArgument("Observe: name at least one type") }
            for type in types { try await store.recordAccess(caller, .observe, type: type) }
            observe(types, sender: sender)
            // The anchor of what this app may see of the types, never the store's own (which moves with every write
            // of every source): registered first, so that nothing after it goes unsignalled.
            let known = types.compactMap { HealthTypeCatalog.type($0) }
            return [.int64(try await store.latestAnchor(of: known, as: caller))]
        case "StopObserving":
            stopObserving(try Self.typeList(arguments[0], "types"), sender: sender)
            return []
        case "Characteristics":
            return [try await characteristics(arguments[0], caller: caller)]
        case "Sources":
            return [try await sources(arguments[0], caller: caller)]
        case "Priorities":
            return [try await priorities(as: identity)]
        case "SetPriority":
            try await setPriority(arguments, as: identity)
            return []
        case "ResetPriority":
            try await resetPriority(arguments[0], as: identity)
            return []
        default:
            throw HealthBusError.invalidArgument("\(call.member) is not a method of \(HealthBusAPI.interfaceName)")
        }
    }

    /// `Characteristics(options)`: the characteristics the app may read, by type identifier, as text (an
    /// enumeration value's name, the date of birth `YYYY-MM-DD`), and `age` (u) in whole years where the app is
    /// (option `timeZone`, default UTC) at `at` (x, ms; default now). What is not set, or not granted, is absent
    /// alike. Option `subject` (s) names whose.
    private func characteristics(_ argument: DBusValue, caller: Caller) async throws -> DBusValue {
        let options = try BusOptions(argument, method: "Characteristics", allowed: ["subject", "timeZone", "at"])
        let subject = try options.string("subject")
        let zoneName = try options.string("timeZone") ?? "UTC"
        guard let zone = TimeZone(identifier: zoneName) else {
            throw HealthBusError.invalidArgument("timeZone '\(HealthBusError.clipped(zoneName))' is not an IANA zone")
        }
        let at = try options.instant("at") ?? Instant.now
        let characteristics = try await store.characteristics(of: subject, as: caller)
        var fields: [(String, DBusValue)] = []
        for type in HealthTypeCatalog.types(of: .characteristic) {
            if let value = characteristics.values[type.identifier] {
                fields.append((type.identifier, .string(value.text(for: type))))
            }
        }
        if let age = characteristics.age(at: at, timeZone: zone) { fields.append(("age", .uint32(UInt32(age)))) }
        return .vardict(ordered: fields)
    }

    /// `a(sssa{sv})`: identifier, canonical unit, aggregation, and `kind` (s), `minimum` and `maximum` (d, the valid
    /// range in the canonical unit, when there is one) and for categories `values` (`a(xs)`, each value's integer and
    /// name).
    private func types() -> DBusValue {
        .array(
            .struct([.string, .string, .string, HealthBusAPI.options]),
            HealthTypeCatalog.all.map { type in
                var details: [(String, DBusValue)] = [("kind", .string(type.kind.rawValue))]
                if let range = type.validRange {
                    details.append(("minimum", .double(range.lowerBound)))
                    details.append(("maximum", .double(range.upperBound)))
                }
                if !type.values.isEmpty {
                    details.append(
                        (
                            "values",
                            .array(
                                .struct([.int64, .string]),
                                type.values.map { .struct([.int64(Int64($0.value)), .string($0.name)]) })
                        ))
                }
                return .struct([
                    .string(type.identifier), .string(type.canonicalUnit), .string(type.aggregation.rawValue),
                    .vardict(ordered: details),
                ])
            })
    }

    // MARK: Writes

    private func save(_ argument: DBusValue, identity: AppIdentity, caller: Caller) async throws -> DBusValue {
        let values = argument.arrayElements ?? []
        guard values.count <= HealthBusAPI.maximumBatchSize else {
            throw HealthBusError.limitExceeded(
                "SaveSamples takes at most \(HealthBusAPI.maximumBatchSize) samples a call, got \(values.count); "
                    + "split the batch")
        }
        // Sizes first, before any sample is made.
        var beats = 0
        var parts = 0  // correlations' members and workouts' events
        var locations = 0  // workouts' route locations
        for (index, value) in values.enumerated() {
            do {
                beats += try SampleWire.checkSize(value)
            } catch {
                throw HealthBusError(name: error.name, message: "sample \(index + 1): \(error.message)")
            }
            let properties = value.structMembers?.last?.stringKeyedValue
            parts +=
                (properties?["objects"]?.arrayElements?.count ?? 0) + (properties?["events"]?.arrayElements?.count ?? 0)
            guard parts <= HealthBusAPI.maximumBatchSize * 10 else {
                throw HealthBusError.limitExceeded(
                    "SaveSamples takes at most \(HealthBusAPI.maximumBatchSize * 10) correlation members and workout "
                        + "events a call; split the batch")
            }
            for route in properties?["routes"]?.arrayElements ?? [] {
                locations += route.stringKeyedValue?["locations"]?.arrayElements?.count ?? 0
            }
            guard locations <= HealthBusAPI.maximumRouteLocationsPerCall else {
                throw HealthBusError.limitExceeded(
                    "SaveSamples takes at most \(HealthBusAPI.maximumRouteLocationsPerCall) route locations a call over "
                        + "all its workouts; split the batch")
            }
            guard beats <= HealthBusAPI.maximumBeatsPerCall else {
                throw HealthBusError.limitExceeded(
                    "SaveSamples takes at most \(HealthBusAPI.maximumBeatsPerCall) beats a call over all its series; "
                        + "split the batch")
            }
        }
        let source = Source(identifier: identity.appID)
        var quantities: [QuantitySample] = []
        var series: [HeartbeatSeriesSample] = []
        var correlations: [Correlation] = []
        var workouts: [Workout] = []
        for (index, value) in values.enumerated() {
            let sample: BusSample
            do {
                sample = try SampleWire.decode(value, defaultSource: source)
            } catch {
                throw HealthBusError(name: error.name, message: "sample \(index + 1): \(error.message)")
            }
            // An app names no sample but its own: an id it gives must be the one the store derives (as if left
            // out), whatever is stored, so that the answer tells nothing about other sources' samples and no id
            // lands on another sample's (docs/store-semantics.md, item 24).
            if value.structMembers?.last?.stringKeyedValue?["id"] != nil, !Self.isOwnDerivedID(sample) {
                throw HealthBusError(
                    name: HealthBusError.Name.invalidSample,
                    message: "sample \(index + 1): an app does not choose sample ids: leave out 'id' (the store "
                        + "derives it from type, source, device, start and end), or give your own identifier as "
                        + "metadata 'externalUUID'; nothing of the batch was written")
            }
            guard sample.source.identifier == source.identifier else {
                throw HealthBusError.invalidArgument(
                    "sample \(index + 1): an app's samples have the app as their source (\(source.identifier)); "
                        + "leave out 'source' or give that")
            }
            switch sample {
            case .quantity(let quantity): quantities.append(quantity)
            case .heartbeats(let heartbeats): series.append(heartbeats)
            case .correlation(let correlation):
                let members = correlation.objects.firstIndex { member in
                    member.source.identifier != source.identifier
                        || (member.metadata[MetadataKey.externalUUID] == nil && !member.hasDerivedID)
                }
                if let members {
                    throw HealthBusError(
                        name: HealthBusError.Name.invalidSample,
                        message: "sample \(index + 1), member \(members + 1): an app's correlation members have the "
                            + "app as their source and no id of their own; nothing of the batch was written")
                }
                correlations.append(correlation)
            case .workout(let workout): workouts.append(workout)
            }
        }
        let kinds = [!quantities.isEmpty, !series.isEmpty, !correlations.isEmpty, !workouts.isEmpty].filter { $0 }
        guard kinds.count <= 1 else {
            throw HealthBusError.invalidArgument(
                "save heartbeatSeries samples, correlations and workouts each in calls of their own (a call is one "
                    + "atomic batch of one kind)")
        }
        let outcomes: [WriteOutcome]
        if !series.isEmpty {
            outcomes = try await store.save(series, as: caller)
        } else if !correlations.isEmpty {
            outcomes = try await store.save(correlations, as: caller)
        } else if !workouts.isEmpty {
            outcomes = try await store.save(workouts, as: caller)
        } else {
            outcomes = try await store.save(quantities, as: caller)
        }
        return .strings(outcomes.map(\.rawValue))
    }

    /// Whether `sample`'s id is the one derived from its natural key, and it has no client id.
    static func isOwnDerivedID(_ sample: BusSample) -> Bool {
        switch sample {
        case .quantity(let quantity): quantity.metadata[MetadataKey.externalUUID] == nil && quantity.hasDerivedID
        case .heartbeats(let heartbeats): heartbeats.hasDerivedID
        case .correlation(let correlation):
            correlation.id
                == QuantitySample.derivedID(
                    type: correlation.type.identifier, source: correlation.source.identifier,
                    device: correlation.device?.key, start: correlation.start, end: correlation.end)
        case .workout(let workout):
            workout.id
                == QuantitySample.derivedID(
                    type: HealthType.workout.identifier, source: workout.source.identifier,
                    device: workout.device?.key, start: workout.start, end: workout.end)
        }
    }

    /// `AddWorkoutSamples(workout, ids)`: associates the app's readable samples with a workout it saved.
    private func addWorkoutSamples(_ arguments: [DBusValue], caller: Caller) async throws -> DBusValue {
        let workout = try Self.id(arguments[0], "workout")
        let texts = arguments[1].stringArrayValue ?? []
        guard texts.count <= HealthBusAPI.maximumBatchSize else {
            throw HealthBusError.limitExceeded(
                "AddWorkoutSamples takes at most \(HealthBusAPI.maximumBatchSize) ids a call; split the list")
        }
        var ids: [UUID] = []
        for text in texts { ids.append(try Self.id(.string(text), "a sample id")) }
        do {
            return .uint32(UInt32(clamping: try await store.add(ids, to: workout, as: caller)))
        } catch let error as InvalidSampleError {
            throw HealthBusError(
                name: HealthBusError.Name.invalidSample,
                message: (error.reason.hasPrefix("no workout")
                    ? error.reason : "id \(error.index + 1): \(error.reason)")
                    + "; nothing was added")
        }
    }

    /// A UUID argument, or `InvalidArgument` naming it.
    static func id(_ value: DBusValue, _ name: String) throws(HealthBusError) -> UUID {
        let text = value.stringValue ?? ""
        guard text.utf8.count <= HealthBusAPI.maximumStringLength, let id = UUID(uuidString: text) else {
            throw .invalidArgument("'\(HealthBusError.clipped(text))' is not \(name) (a UUID as QuerySamples returns)")
        }
        return id
    }

    private func delete(_ argument: DBusValue, caller: Caller) async throws -> DBusValue {
        let texts = argument.stringArrayValue ?? []
        guard texts.count <= HealthBusAPI.maximumBatchSize else {
            throw HealthBusError.limitExceeded(
                "DeleteSamples takes at most \(HealthBusAPI.maximumBatchSize) ids a call; split the list")
        }
        var ids: [UUID] = []
        for text in texts {
            guard let id = UUID(uuidString: text) else {
                throw HealthBusError.invalidArgument(
                    "'\(HealthBusError.clipped(text))' is not a sample id (a UUID as QuerySamples returns)")
            }
            ids.append(id)
        }
        return .uint32(UInt32(clamping: try await store.delete(ids, as: caller)))
    }

    // MARK: Reads

    static let queryOptions = [
        "from", "to", "strictStart", "strictEnd", "sources", "devices", "subjects", "ascending", "sort", "limit",
        "cursor", "unit", "metadata", "metadataKeys", "workout",
    ]

    private func query(type argument: DBusValue, options value: DBusValue, caller: Caller) async throws -> [DBusValue] {
        let type = try Self.type(argument)
        let options = try BusOptions(value, method: "QuerySamples", allowed: Self.queryOptions)
        let from = try options.instant("from")
        let to = try options.instant("to")
        try Self.checkRange(from, to)
        let sort = try Self.sortDescriptors(options)
        let limit = try options.integer("limit") ?? Int64(HealthBusAPI.defaultPageSize)
        guard limit > 0 else {
            throw HealthBusError.invalidArgument(
                "limit is the number of samples per page, 1 or more (at most \(HealthBusAPI.maximumPageSize) come "
                    + "back per call; the cursor fetches the rest)")
        }
        let unit = try options.string("unit").map { text throws(HealthBusError) in
            try SampleWire.parseUnit(text, for: type)
        }
        let keys = try options.strings("metadataKeys") ?? []
        guard keys.count <= HealthBusAPI.maximumMetadataEntries else {
            throw HealthBusError.limitExceeded(
                "QuerySamples: option 'metadataKeys' lists \(keys.count) keys; at most "
                    + "\(HealthBusAPI.maximumMetadataEntries)")
        }
        let metadata =
            try Self.metadataPredicates(options.dictionary("metadata")) + keys.map { MetadataPredicate.exists($0) }
        var query = SampleQuery(
            type: type, from: from, to: to, strictStart: try options.bool("strictStart") ?? false,
            strictEnd: try options.bool("strictEnd") ?? false, sources: try options.strings("sources"),
            devices: try options.strings("devices"), subjects: try options.strings("subjects"), metadata: metadata,
            sort: sort, limit: Int(min(limit, Int64(HealthBusAPI.maximumPageSize))),
            cursor: try CursorWire.decode(options.string("cursor") ?? "", type: type, order: SampleOrder(sort)))
        if let workout = try options.string("workout") {
            guard type.isSampleType else {
                throw HealthBusError.invalidArgument("the workout option finds quantity and category samples")
            }
            query.workout = try Self.id(.string(workout), "a workout id")
        }
        switch type.kind {
        case .correlation:
            let page = try await store.correlations(query, as: caller)
            return [
                .array(HealthBusAPI.sampleType, page.correlations.map { SampleWire.encode($0) }),
                .string(CursorWire.encode(page.next, type: type, order: query.order)),
            ]
        case .workout:
            let page = try await store.workouts(query, as: caller)
            return [
                .array(HealthBusAPI.sampleType, page.workouts.map { SampleWire.encode($0) }),
                .string(CursorWire.encode(page.next, type: type, order: query.order)),
            ]
        default:
            break
        }
        if type.aggregation == .series {
            let page = try await store.heartbeatSeries(query, as: caller)
            return [
                .array(HealthBusAPI.sampleType, page.series.map { SampleWire.encode($0) }),
                .string(CursorWire.encode(page.next, type: type, order: query.order)),
            ]
        }
        let page = try await store.samples(query, as: caller)
        return [
            .array(HealthBusAPI.sampleType, page.samples.map { SampleWire.encode($0, unit: unit) }),
            .string(CursorWire.encode(page.next, type: type, order: query.order)),
        ]
    }

    /// The sort order of a query: `sort` (as: `start`, `-end`, ... in order) or `ascending` (b: chronological),
    /// not both; by default, by start then end, oldest first.
    static func sortDescriptors(_ options: BusOptions) throws(HealthBusError) -> [SampleSortDescriptor] {
        let ascending = try options.bool("ascending")
        guard let keys = try options.strings("sort") else {
            let direction = ascending ?? true
            return [
                SampleSortDescriptor(.start, ascending: direction), SampleSortDescriptor(.end, ascending: direction),
            ]
        }
        guard ascending == nil else {
            throw .invalidArgument(
                "QuerySamples takes 'sort' or 'ascending', not both: 'sort' gives each key's direction")
        }
        do {
            return try SampleSortDescriptor.parse(keys)
        } catch {
            throw .invalidArgument("QuerySamples: option 'sort': \(error)")
        }
    }

    static let statisticsOptions = ["unit", "sources", "devices", "subjects", "exact", "maxHold"]

    private func statistics(_ arguments: [DBusValue], caller: Caller) async throws -> DBusValue {
        let type = try Self.statisticsType(arguments[0])
        let (from, to) = try Self.range(arguments[1], arguments[2])
        guard from < to else {
            throw HealthBusError.invalidArgument("the range is empty: 'to' must come after 'from'")
        }
        let options = try BusOptions(arguments[3], method: "Statistics", allowed: Self.statisticsOptions)
        let unit = try options.string("unit").map { text throws(HealthBusError) in
            try SampleWire.parseUnit(text, for: type)
        }
        let buckets: [StatisticsBucket]
        do {
            buckets = try StatisticsBuckets.buckets(borders: [from, to])
        } catch {
            throw HealthBusError.invalidArgument("\(error)")
        }
        let query = try Self.statisticsQuery(type, buckets, options, separateBySource: false)
        let results = try await store.statistics(query, as: caller)
        guard let result = results.first else {
            return StatisticsWire.encode(StatisticsResult(bucket: buckets[0]), type: type, unit: unit)
        }
        return StatisticsWire.encode(result, type: type, unit: unit)
    }

    private func statisticsCollection(_ arguments: [DBusValue], caller: Caller) async throws -> DBusValue {
        let type = try Self.statisticsType(arguments[0])
        let (from, to) = try Self.range(arguments[1], arguments[2])
        let options = try BusOptions(
            arguments[4], method: "StatisticsCollection",
            allowed: Self.statisticsOptions + ["timeZone", "anchor", "separateBySource"])
        let unit = try options.string("unit").map { text throws(HealthBusError) in
            try SampleWire.parseUnit(text, for: type)
        }
        let zone = try options.string("timeZone") ?? "UTC"
        let anchor = try options.instant("anchor").map { StatisticsTime.instant($0) } ?? .defaultAnchor
        let buckets: [StatisticsBucket]
        do throws(StatisticsBucketError) {
            let interval = try StatisticsInterval(parsing: arguments[3].stringValue ?? "")
            let calendar = try StatisticsBuckets(interval: interval, anchor: anchor, timeZoneIdentifier: zone)
            buckets = try calendar.buckets(from: from, to: to, limit: HealthBusAPI.maximumBuckets)
        } catch .tooManyBuckets {
            throw HealthBusError.limitExceeded(
                "more than \(HealthBusAPI.maximumBuckets) buckets in one call; use a longer interval or split the range"
            )
        } catch {
            throw HealthBusError.invalidArgument("\(error)")
        }
        let separate = try options.bool("separateBySource") ?? false
        let query = try Self.statisticsQuery(type, buckets, options, separateBySource: separate)
        let results = buckets.isEmpty ? [] : try await store.statistics(query, as: caller)
        return .array(HealthBusAPI.options, results.map { StatisticsWire.encode($0, type: type, unit: unit) })
    }

    private func changes(_ arguments: [DBusValue], caller: Caller) async throws -> [DBusValue] {
        let type = try Self.type(arguments[0])
        guard let anchor = arguments[1].int64Value, anchor >= 0 else {
            throw HealthBusError.invalidArgument("the anchor is 0 (from the beginning) or one Changes returned")
        }
        let requested = Int(arguments[2].uint32Value ?? 0)
        let limit = requested == 0 ? HealthBusAPI.defaultPageSize : min(requested, HealthBusAPI.maximumPageSize)
        let changes = try await store.changes(of: type, since: anchor, limit: limit, as: caller)
        let added =
            changes.added.map { SampleWire.encode($0) } + changes.heartbeatSeries.map { SampleWire.encode($0) }
            + changes.correlations.map { SampleWire.encode($0) } + changes.workouts.map { SampleWire.encode($0) }
        return [
            .array(HealthBusAPI.sampleType, added), .strings(changes.deleted.map { $0.uuidString.lowercased() }),
            .int64(changes.anchor), .boolean(changes.hasMore),
        ]
    }

    // MARK: Arguments

    static func type(_ value: DBusValue) throws(HealthBusError) -> HealthType {
        let identifier = value.stringValue ?? ""
        guard let type = HealthTypeCatalog.type(identifier) else { throw .unknownType(identifier) }
        return type
    }

    static func statisticsType(_ value: DBusValue) throws(HealthBusError) -> HealthType {
        let type = try type(value)
        guard type.aggregation != .series else {
            throw .invalidArgument(
                "heartbeatSeries has no statistics; ask for heartRate or heartRateVariabilitySDNN, or read the "
                    + "series with QuerySamples")
        }
        guard type.isSampleType else {
            throw .invalidArgument("\(type.identifier) is a \(type.kind.rawValue) type and has no statistics")
        }
        return type
    }

    /// The types of a list argument, each once, in their first order; at most
    /// ``HealthBusAPI/maximumTypesPerCall`` (checked before anything else).
    static func typeList(_ value: DBusValue, _ name: String) throws(HealthBusError) -> [String] {
        let types = value.stringArrayValue ?? []
        guard types.count <= HealthBusAPI.maximumTypesPerCall else {
            throw .limitExceeded(
                "'\(name)' names \(types.count) types; at most \(HealthBusAPI.maximumTypesPerCall) a call (call Types "
                    + "for the \(HealthTypeCatalog.all.count) the store knows)")
        }
        var seen: Set<String> = []
        var unique: [String] = []
        for identifier in types where seen.insert(identifier).inserted {
            guard HealthTypeCatalog.type(identifier) != nil else { throw .unknownType(identifier) }
            unique.append(identifier)
        }
        return unique
    }

    static func range(_ from: DBusValue, _ to: DBusValue) throws(HealthBusError) -> (Instant, Instant) {
        let start = Instant(milliseconds: from.int64Value ?? 0)
        let end = Instant(milliseconds: to.int64Value ?? 0)
        try checkRange(start, end)
        return (start, end)
    }

    static func checkRange(_ from: Instant?, _ to: Instant?) throws(HealthBusError) {
        guard let from, let to, from > to else { return }
        throw .invalidArgument(
            "the time range is inverted: 'from' (\(from.milliseconds) ms) is after 'to' (\(to.milliseconds) ms); "
                + "times are milliseconds since 1970-01-01T00:00:00Z")
    }

    static func metadataPredicates(_ value: DBusValue?) throws(HealthBusError) -> [MetadataPredicate] {
        guard let value else { return [] }
        try SampleWire.checkMetadataSize(value, "the metadata option")
        let wanted = try SampleWire.decodeMetadata(value)
        return wanted.sorted { $0.key < $1.key }.map { .equals($0.key, $0.value) }
    }

    static func statisticsQuery(
        _ type: HealthType, _ buckets: [StatisticsBucket], _ options: BusOptions, separateBySource: Bool
    ) throws(HealthBusError) -> StatisticsQuery {
        let hold = try options.integer("maxHold") ?? 5_000
        guard hold >= 0 else { throw .invalidArgument("maxHold is a duration in milliseconds, 0 or more") }
        return StatisticsQuery(
            type: type, buckets: buckets, sources: try options.strings("sources"),
            devices: try options.strings("devices"), subjects: try options.strings("subjects"),
            separateBySource: separateBySource, maxHoldMilliseconds: hold, exact: try options.bool("exact") ?? false)
    }
}
