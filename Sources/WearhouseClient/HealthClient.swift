public import DBus
public import Foundation
public import Health
public import HealthBus

/// A typed client of the store's D-Bus API (`org.wearhouse.Health1`, docs/app-api.md), for apps.
///
/// ```swift
/// let client = try await HealthClient.connect()            // the system bus
/// let request = try await client.requestAuthorization(read: [.heartRate], write: [])
/// let today = try await client.statistics(of: .heartRate, from: midnight, to: .now)
/// for try await addition in try await client.observe([.heartRate]) { ... }
/// await client.close()
/// ```
///
/// The service decides what the app may do from the bus's credentials; the client sends nothing about who it is.
/// Errors of the API come as ``HealthBusError`` (`name` is one of ``HealthBusError/Name``); failures of the bus
/// itself (the service is not running) as ``DBusError``.
public final class HealthClient: Sendable {
    /// The connection the client calls on (its own, closed by ``close()``).
    public let connection: DBusConnection
    /// The service's bus name (``HealthBusAPI/busName`` unless given).
    public let destination: String
    /// How long a call may take.
    public let timeout: Duration

    init(connection: DBusConnection, destination: String, timeout: Duration) {
        self.connection = connection
        self.destination = destination
        self.timeout = timeout
    }

    /// Connects to the bus the service is on.
    ///
    /// - Parameters:
    ///   - address: ``DBusAddress/system`` for the system service, ``DBusAddress/session`` for a person's own store.
    ///   - timeout: how long each call may take.
    public static func connect(
        to address: DBusAddress = .system, destination: String = HealthBusAPI.busName, timeout: Duration = .seconds(30)
    ) async throws -> HealthClient {
        HealthClient(
            connection: try await DBusConnection.connect(to: address), destination: destination, timeout: timeout)
    }

    /// Closes the connection (observations end).
    public func close() async {
        await connection.close()
    }

    // MARK: Who and what

    /// The app id the service knows this app by (what the store's owner grants to), and its user.
    public func identity() async throws -> (app: String, uid: UInt32) {
        let reply = try await call("Identity", [])
        guard reply.count == 2, let app = reply[0].stringValue, let uid = reply[1].uint32Value else {
            throw unexpected("Identity")
        }
        return (app, uid)
    }

    /// A type as the store describes it (``types()``).
    public struct TypeDescription: Hashable, Sendable {
        public var identifier: String
        /// `nil` for a kind this client does not know (a newer service).
        public var kind: HealthType.Kind?
        /// The canonical unit; empty for kinds without one (categories, characteristics).
        public var unit: String
        /// `cumulative`, `discrete`, `series`, `category` or `none`.
        public var aggregation: String
        /// The valid range in the canonical unit, when the type has one.
        public var validRange: ClosedRange<Double>?
        /// A category's values: integer and name (`appleStandHour`: 0 stood, 1 idle).
        public var values: [HealthType.EnumeratedValue]
    }

    /// The types the store knows, with their kind, unit, aggregation, range and category values.
    public func types() async throws -> [TypeDescription] {
        let reply = try await call("Types", [])
        guard let elements = reply.first?.arrayElements else { throw unexpected("Types") }
        return elements.compactMap { element in
            guard let members = element.structMembers, members.count == 4, let identifier = members[0].stringValue,
                let unit = members[1].stringValue, let aggregation = members[2].stringValue,
                let details = members[3].stringKeyedValue
            else { return nil }
            var range: ClosedRange<Double>?
            if let low = details["minimum"]?.doubleValue, let high = details["maximum"]?.doubleValue, low <= high {
                range = low...high
            }
            let values: [HealthType.EnumeratedValue] = (details["values"]?.arrayElements ?? []).compactMap { entry in
                guard let pair = entry.structMembers, pair.count == 2, let value = pair[0].int64Value,
                    let name = pair[1].stringValue
                else { return nil }
                return HealthType.EnumeratedValue(name, Int(clamping: value))
            }
            return TypeDescription(
                identifier: identifier, kind: details["kind"]?.stringValue.flatMap(HealthType.Kind.init(rawValue:)),
                unit: unit, aggregation: aggregation, validRange: range, values: values)
        }
    }

    /// Asks the store's owner for permissions (HealthKit's `requestAuthorization`).
    ///
    /// - Returns: the app id to tell the owner, and whether anything awaits their decision. Whether a permission was
    ///   granted is never said: without read permission a query returns only the app's own samples.
    public func requestAuthorization(read: [HealthType], write: [HealthType]) async throws -> (
        app: String, pending: Bool
    ) {
        let reply = try await call(
            "RequestAuthorization", [.strings(read.map(\.identifier)), .strings(write.map(\.identifier))])
        guard reply.count == 2, let app = reply[0].stringValue, let pending = reply[1].boolValue else {
            throw unexpected("RequestAuthorization")
        }
        return (app, pending)
    }

    // MARK: Writes

    /// Saves a batch atomically (at most ``HealthBusAPI/maximumBatchSize``). The service makes this app the
    /// samples' source (a `source` set here is not sent), so a sample's id, when derived from its fields, is
    /// derived again there: read the ids back from a query.
    /// - Throws: ``HealthBusError`` `NotAuthorized` without write permission, `InvalidSample` for an invalid sample.
    public func save(_ samples: [QuantitySample]) async throws -> [WriteOutcome] {
        try await save(samples.map { SampleWire.encode($0, forSaving: true) })
    }

    /// Saves heartbeat series atomically.
    public func save(_ series: [HeartbeatSeriesSample]) async throws -> [WriteOutcome] {
        try await save(series.map { SampleWire.encode($0, forSaving: true) })
    }

    func save(_ wire: [DBusValue]) async throws -> [WriteOutcome] {
        let reply = try await call("SaveSamples", [.array(HealthBusAPI.sampleType, wire)])
        guard let outcomes = reply.first?.stringArrayValue else { throw unexpected("SaveSamples") }
        return outcomes.map { WriteOutcome(rawValue: $0) ?? .rejected }
    }

    /// Deletes this app's samples by id; returns how many were deleted.
    public func delete(_ ids: [UUID]) async throws -> Int {
        let reply = try await call("DeleteSamples", [.strings(ids.map { $0.uuidString.lowercased() })])
        guard let count = reply.first?.uint32Value else { throw unexpected("DeleteSamples") }
        return Int(count)
    }

    // MARK: Reads

    /// One page of samples.
    public struct Page: Sendable {
        public var samples: [BusSample]
        /// Pass to the next call to continue; `nil` after the last page.
        public var cursor: String?
    }

    /// The samples of `query.type` that this app may read (only its own without read permission), one page at a
    /// time: `query.limit` samples (at most ``HealthBusAPI/maximumPageSize``) after `cursor`, in the order of
    /// `query.sort` (pass the same order with the cursor).
    /// `query.cursor` is not used (the API's cursors are strings).
    public func samples(_ query: SampleQuery, cursor: String? = nil, unit: HealthUnit? = nil) async throws -> Page {
        var options: [String: DBusValue] = ["sort": .strings(query.order.keys.map(\.description))]
        if let from = query.from { options["from"] = .int64(from.milliseconds) }
        if let to = query.to { options["to"] = .int64(to.milliseconds) }
        if query.strictStart { options["strictStart"] = .boolean(true) }
        if query.strictEnd { options["strictEnd"] = .boolean(true) }
        if let sources = query.sources { options["sources"] = .strings(sources) }
        if let devices = query.devices { options["devices"] = .strings(devices) }
        if let subjects = query.subjects { options["subjects"] = .strings(subjects) }
        if let limit = query.limit { options["limit"] = .int64(Int64(limit)) }
        if let cursor { options["cursor"] = .string(cursor) }
        if let unit { options["unit"] = .string(unit.description) }
        if let workout = query.workout { options["workout"] = .string(workout.uuidString.lowercased()) }
        var equals: [String: MetadataValue] = [:]
        var keys: [String] = []
        for predicate in query.metadata {
            switch predicate {
            case .equals(let key, let value): equals[key] = value
            case .exists(let key): keys.append(key)
            }
        }
        if !equals.isEmpty { options["metadata"] = SampleWire.encode(equals) }
        if !keys.isEmpty { options["metadataKeys"] = .strings(keys) }
        let reply = try await call("QuerySamples", [.string(query.type.identifier), .vardict(options)])
        guard reply.count == 2, let elements = reply[0].arrayElements, let next = reply[1].stringValue else {
            throw unexpected("QuerySamples")
        }
        return Page(samples: try decode(elements), cursor: next.isEmpty ? nil : next)
    }

    /// Statistics of one bucket, as the API reports them (values in the requested unit, or the canonical one).
    public struct Statistics: Hashable, Sendable {
        public var start: Instant
        public var end: Instant
        public var unit: String
        /// Discrete types: samples starting in the bucket.
        public var count: Int?
        public var sum: Double?
        public var average: Double?
        public var minimum: Double?
        public var maximum: Double?
        public var mostRecent: Double?
        public var mostRecentEnd: Instant?
        public var timeWeightedAverage: Double?
        /// Cumulative types: the provenances that contributed.
        public var sources: [String]
        /// With `separateBySource`: whose bucket this is.
        public var source: String?
        public var device: String?
        /// Category types: time and count per value that occurs (hours asleep in each stage).
        public var categories: [CategoryStatistics.Value]

        init(_ fields: [String: DBusValue]) {
            start = Instant(milliseconds: fields["start"]?.int64Value ?? 0)
            end = Instant(milliseconds: fields["end"]?.int64Value ?? 0)
            unit = fields["unit"]?.stringValue ?? ""
            count = fields["count"]?.int64Value.map { Int($0) }
            sum = fields["sum"]?.doubleValue
            average = fields["average"]?.doubleValue
            minimum = fields["minimum"]?.doubleValue
            maximum = fields["maximum"]?.doubleValue
            mostRecent = fields["mostRecent"]?.doubleValue
            mostRecentEnd = fields["mostRecentEnd"]?.int64Value.map { Instant(milliseconds: $0) }
            timeWeightedAverage = fields["timeWeightedAverage"]?.doubleValue
            sources = fields["sources"]?.stringArrayValue ?? []
            source = fields["source"]?.stringValue
            device = fields["device"]?.stringValue
            categories = (fields["categories"]?.arrayElements ?? []).compactMap { element in
                guard let entry = element.stringKeyedValue, let value = entry["value"]?.int64Value,
                    let milliseconds = entry["milliseconds"]?.int64Value, let count = entry["count"]?.int64Value
                else { return nil }
                return CategoryStatistics.Value(
                    value: Int(clamping: value), milliseconds: milliseconds, count: Int(clamping: count))
            }
        }
    }

    /// Statistics of `type` over `[from, to)`: the merged sum of a cumulative type, count, average, minimum,
    /// maximum, most recent and time-weighted average of a discrete one.
    public func statistics(
        of type: HealthType, from: Instant, to: Instant, unit: HealthUnit? = nil, options: [String: DBusValue] = [:]
    ) async throws -> Statistics {
        var options = options
        if let unit { options["unit"] = .string(unit.description) }
        let reply = try await call(
            "Statistics",
            [.string(type.identifier), .int64(from.milliseconds), .int64(to.milliseconds), .vardict(options)])
        guard let fields = reply.first?.stringKeyedValue else { throw unexpected("Statistics") }
        return Statistics(fields)
    }

    /// Statistics per bucket of `interval` (`15m`, `1h`, `1d`, `1w`, ...) in `timeZone` (an IANA name).
    public func statisticsCollection(
        of type: HealthType, from: Instant, to: Instant, interval: String, timeZone: String = "UTC",
        unit: HealthUnit? = nil, options: [String: DBusValue] = [:]
    ) async throws -> [Statistics] {
        var options = options
        options["timeZone"] = .string(timeZone)
        if let unit { options["unit"] = .string(unit.description) }
        let reply = try await call(
            "StatisticsCollection",
            [
                .string(type.identifier), .int64(from.milliseconds), .int64(to.milliseconds), .string(interval),
                .vardict(options),
            ])
        guard let buckets = reply.first?.arrayElements else { throw unexpected("StatisticsCollection") }
        return buckets.compactMap { $0.stringKeyedValue.map(Statistics.init) }
    }

    // MARK: Characteristics

    /// The person's characteristics the app may read (HealthKit's `dateOfBirth()`, `biologicalSex()`, ...):
    /// what is not set, or not granted, is absent alike; the age is ``Characteristics/age(at:timeZone:)``.
    public func characteristics(subject: String? = nil) async throws -> Characteristics {
        var options: [String: DBusValue] = [:]
        if let subject { options["subject"] = .string(subject) }
        let reply = try await call("Characteristics", [.vardict(options)])
        guard let fields = reply.first?.stringKeyedValue else { throw unexpected("Characteristics") }
        var result = Characteristics()
        for type in HealthTypeCatalog.types(of: .characteristic) {
            guard let text = fields[type.identifier]?.stringValue,
                let value = try? Characteristics.Value(
                    parsing: text, for: type, today: Instant(milliseconds: Instant.supportedMilliseconds.upperBound))
            else { continue }
            result.values[type.identifier] = value
        }
        return result
    }

    /// The date of birth (a calendar date at midnight), or `nil` when not set or not readable.
    public func dateOfBirth(subject: String? = nil) async throws -> LocalDateTime? {
        try await characteristics(subject: subject).dateOfBirth
    }

    /// The biological sex; `notSet` when not set or not readable.
    public func biologicalSex(subject: String? = nil) async throws -> BiologicalSex {
        try await characteristics(subject: subject).biologicalSex
    }

    /// The blood type; `notSet` when not set or not readable.
    public func bloodType(subject: String? = nil) async throws -> BloodType {
        try await characteristics(subject: subject).bloodType
    }

    /// The Fitzpatrick skin type; `notSet` when not set or not readable.
    public func fitzpatrickSkinType(subject: String? = nil) async throws -> FitzpatrickSkinType {
        try await characteristics(subject: subject).fitzpatrickSkinType
    }

    /// The age in whole years at `at` in `timeZone` (an IANA name), as the service counts it; `nil` without a
    /// readable date of birth.
    public func age(at: Instant = .now, timeZone: String = TimeZone.current.identifier, subject: String? = nil)
        async throws -> Int?
    {
        var options: [String: DBusValue] = ["timeZone": .string(timeZone), "at": .int64(at.milliseconds)]
        if let subject { options["subject"] = .string(subject) }
        let reply = try await call("Characteristics", [.vardict(options)])
        guard let fields = reply.first?.stringKeyedValue else { throw unexpected("Characteristics") }
        return fields["age"]?.uint32Value.map { Int($0) }
    }

    /// What changed since an anchor.
    public struct Changes: Sendable {
        public var added: [BusSample]
        public var deleted: [UUID]
        /// Pass back next time.
        public var anchor: Int64
        /// More changes wait after `anchor`.
        public var more: Bool
    }

    /// New and deleted samples of `type` since `anchor` (0: from the beginning), for apps that sync.
    public func changes(of type: HealthType, since anchor: Int64, limit: Int = 0) async throws -> Changes {
        let reply = try await call(
            "Changes", [.string(type.identifier), .int64(anchor), .uint32(UInt32(clamping: limit))])
        guard reply.count == 4, let added = reply[0].arrayElements, let deleted = reply[1].stringArrayValue,
            let next = reply[2].int64Value, let more = reply[3].boolValue
        else { throw unexpected("Changes") }
        return Changes(
            added: try decode(added), deleted: deleted.compactMap(UUID.init(uuidString:)), anchor: next,
            more: more)
    }

    // MARK: Observing

    /// Samples of a type were added; fetch them with ``changes(of:since:limit:)`` from your last anchor.
    public struct Addition: Hashable, Sendable {
        public var type: String
        /// The store's anchor after the addition.
        public var anchor: Int64
    }

    /// Observes types: the service tells this connection when samples of them are added, as long as this app may
    /// read them. Returns the current anchor (to pass to ``changes(of:since:limit:)``) and the additions.
    public func observe(_ types: [HealthType]) async throws -> (anchor: Int64, additions: Observation) {
        let subscription = try await connection.subscribe(
            to: DBusMatchRule(
                sender: destination, interface: HealthBusAPI.interfaceName, member: HealthBusAPI.samplesAddedSignal,
                path: HealthBusAPI.objectPath))
        do {
            let reply = try await call("Observe", [.strings(types.map(\.identifier))])
            guard let anchor = reply.first?.int64Value else { throw unexpected("Observe") }
            return (anchor, Observation(subscription: subscription))
        } catch {
            subscription.cancel()
            throw error
        }
    }

    /// Stops observing types (the additions of other types keep coming).
    public func stopObserving(_ types: [HealthType]) async throws {
        _ = try await call("StopObserving", [.strings(types.map(\.identifier))])
    }

    /// The additions of observed types, as they come.
    public struct Observation: AsyncSequence, Sendable {
        public typealias Element = Addition
        let subscription: DBusSignalSubscription

        /// Ends the sequence.
        public func cancel() { subscription.cancel() }

        public func makeAsyncIterator() -> Iterator { Iterator(base: subscription.makeAsyncIterator()) }

        public struct Iterator: AsyncIteratorProtocol {
            var base: AsyncStream<DBusSignal>.Iterator

            public mutating func next() async -> Addition? {
                while let signal = await base.next() {
                    guard signal.arguments.count == 2, let type = signal.arguments[0].stringValue,
                        let anchor = signal.arguments[1].int64Value
                    else { continue }
                    return Addition(type: type, anchor: anchor)
                }
                return nil
            }
        }
    }

    // MARK: Calls

    // MARK: Sources and priorities

    /// Who has written `type` (HealthKit's source query): each source and device with its count and times. Without
    /// read permission, only this app itself.
    public func sources(of type: HealthType) async throws -> [SourceSummary] {
        let reply = try await call("Sources", [.string(type.identifier)])
        guard let elements = reply.first?.arrayElements else { throw unexpected("Sources") }
        return elements.compactMap { element in
            guard let members = element.structMembers, members.count == 6, let source = members[0].stringValue,
                let device = members[1].stringValue, let name = members[2].stringValue,
                let count = members[3].uint32Value, let first = members[4].int64Value, let last = members[5].int64Value
            else { return nil }
            return SourceSummary(
                provenance: Provenance(source: source, device: device.isEmpty ? nil : device),
                deviceName: name.isEmpty ? nil : name, count: Int(count), first: Instant(milliseconds: first),
                last: Instant(milliseconds: last))
        }
    }

    /// The person's source priorities, by type identifier (the default under ``defaultPriorityKey``). For the
    /// owner's tools: any other caller gets ``HealthBusError`` `NotAuthorized`.
    public func priorities() async throws -> [String: SourcePriority] {
        let reply = try await call("Priorities", [])
        guard let elements = reply.first?.arrayElements else { throw unexpected("Priorities") }
        var result: [String: SourcePriority] = [:]
        for element in elements {
            guard let members = element.structMembers, members.count == 3, let key = members[0].stringValue,
                let entries = members[1].stringArrayValue,
                let unranked = members[2].stringValue.flatMap(CumulativeMerge.UnrankedPolicy.init(rawValue:))
            else { throw unexpected("Priorities") }
            var order: [Provenance] = []
            for entry in entries {
                guard case .success(let parsed) = SourcePriority.parseEntries(entry) else {
                    throw unexpected("Priorities")
                }
                order += parsed
            }
            result[key == "default" ? defaultPriorityKey : key] = SourcePriority(order: order, unranked: unranked)
        }
        return result
    }

    /// Ranks the sources of the cumulative `type` (`nil`: the default of every type without its own), highest
    /// first. Owner only.
    public func setPriority(of type: HealthType?, _ priority: SourcePriority) async throws {
        _ = try await call(
            "SetPriority",
            [
                .string(type?.identifier ?? "default"), .strings(priority.order.map(SourcePriority.spelling)),
                .string(priority.unranked.rawValue),
            ])
    }

    /// Removes the priority of `type` (`nil`: the default). Owner only.
    public func resetPriority(of type: HealthType?) async throws {
        _ = try await call("ResetPriority", [.string(type?.identifier ?? "default")])
    }

    func call(_ member: String, _ arguments: [DBusValue]) async throws -> [DBusValue] {
        let result: Result<[DBusValue], DBusError>
        do {
            result = .success(
                try await connection.call(
                    destination, path: HealthBusAPI.objectPath, interface: HealthBusAPI.interfaceName, member: member,
                    arguments: arguments, timeout: timeout))
        } catch {
            result = .failure(error)
        }
        switch result {
        case .success(let values):
            return values
        case .failure(let error):
            // The API's own errors become HealthBusError; the bus's stay DBusError.
            guard let name = error.name, name.hasPrefix("org.wearhouse.Error.") else { throw error }
            throw HealthBusError(name: name, message: error.message)
        }
    }

    /// Samples from the wire; values that came in another unit are converted back to the canonical one.
    func decode(_ elements: [DBusValue]) throws -> [BusSample] {
        try elements.map { element throws(HealthBusError) in try SampleWire.decode(element) }
    }

    func unexpected(_ member: String) -> HealthBusError {
        HealthBusError(
            name: HealthBusError.Name.failed, message: "\(member): the service's reply has an unexpected shape")
    }
}
