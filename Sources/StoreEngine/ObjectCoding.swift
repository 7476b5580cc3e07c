public import Foundation
public import Health
internal import Support

/// A stored correlation or workout as both engines read it from their `objects` table: the fields every object
/// has, and the body that only workouts have (``ObjectCoding``).
public struct StoredObject: Sendable {
    public var id: UUID
    public var type: HealthType
    public var start: Instant
    public var end: Instant
    public var startOffsetSeconds: Int32
    public var source: Source
    public var device: Device?
    public var subject: String?
    public var metadata: [String: MetadataValue]
    /// ``ObjectCoding/encode(_:)``'s text for a workout; `nil` for a correlation.
    public var body: String?
    public var seq: Int64
    public var writer: String

    public init(
        id: UUID, type: HealthType, start: Instant, end: Instant, startOffsetSeconds: Int32, source: Source,
        device: Device?, subject: String?, metadata: [String: MetadataValue], body: String?, seq: Int64,
        writer: String
    ) {
        self.id = id
        self.type = type
        self.start = start
        self.end = end
        self.startOffsetSeconds = startOffsetSeconds
        self.source = source
        self.device = device
        self.subject = subject
        self.metadata = metadata
        self.body = body
        self.seq = seq
        self.writer = writer
    }

    /// The workout this row holds (an unknown activity number reads as `other`).
    public var workout: Workout { workout(withRoutes: true) }

    /// The workout this row holds, its routes left out unless `withRoutes` (then not turned into locations).
    public func workout(withRoutes: Bool) -> Workout {
        let body = ObjectCoding.decode(body, routes: withRoutes)
        return Workout(
            id: id, activityType: body.activityType, start: start, end: end, startOffsetSeconds: startOffsetSeconds,
            duration: body.duration ?? Double(end.milliseconds - start.milliseconds) / 1_000,
            totalEnergyBurned: body.totalEnergyBurned, totalDistance: body.totalDistance,
            totalSwimmingStrokeCount: body.totalSwimmingStrokeCount, totalFlightsClimbed: body.totalFlightsClimbed,
            events: body.events, routes: body.routes, source: source, device: device, subject: subject,
            metadata: metadata)
    }

    /// The workouts `objects` hold as `caller` may read them: a workout's routes (where someone went, granted apart
    /// as `workoutRoute`) only when `routesReadable` or the caller saved the workout. A workout without its routes
    /// reads as one that has none, so that a caller cannot tell a denial from no route.
    public static func workouts(_ objects: [StoredObject], for caller: Caller, routesReadable: Bool) -> [Workout] {
        objects.map { $0.workout(withRoutes: routesReadable || $0.writer == caller.description) }
    }

    /// The correlation this row holds, with `members`.
    public func correlation(_ members: [QuantitySample]) -> Correlation {
        Correlation(
            id: id, type: type, start: start, end: end, startOffsetSeconds: startOffsetSeconds, objects: members,
            source: source, device: device, subject: subject, metadata: metadata)
    }

    /// The cursor after this object in a page.
    public var cursor: SampleCursor { SampleCursor(start: start, end: end, id: id.uuidString) }
}

/// A page of correlations or workouts as both engines make it from their rows: objects added until the query's
/// limit, or until their bodies hold ``maximumBytes`` (a workout's body holds its routes: a page then ends early,
/// with a cursor), so that a page's memory, and a reply over D-Bus, stay bounded whatever the routes' lengths.
public struct ObjectPage: Sendable {
    /// About 500 hour-long routes at a location a second, and at most 16 MB over D-Bus (a location, 33 bytes of
    /// JSON at the fewest, is 64 on the wire): half the system bus's limit on a message.
    public static let maximumBytes = 8 << 20

    public let wanted: Int
    public private(set) var objects: [StoredObject] = []
    private var bytes = 0

    public init(limit: Int?) { wanted = limit ?? Int.max }

    /// How many rows of `type` one read of an engine takes (fewer for workouts, whose rows hold their routes).
    public static func rowsPerRead(_ type: HealthType) -> Int { type.kind == .workout ? 8 : 1_000 }

    /// Whether the page takes no more: the limit reached, or the bodies' bytes.
    public var isFull: Bool { objects.count >= wanted || bytes >= Self.maximumBytes }

    public mutating func add(_ object: StoredObject) {
        objects.append(object)
        bytes += object.body?.utf8.count ?? 0
    }

    /// The cursor after this page when it is full (`nil` for the last page).
    public var next: SampleCursor? {
        guard isFull, wanted != Int.max || bytes >= Self.maximumBytes, let last = objects.last else { return nil }
        return last.cursor
    }
}

/// One reply of anchored changes of correlations or workouts, as both engines make it from the rows they read after
/// the anchor (at most ``rowLimit(of:asked:)`` + 1 new objects and as many tombstones, each in `seq` order): the
/// events up to the limit, and for workouts, whose rows hold their routes, only those within
/// ``ObjectPage/maximumBytes`` (the reply then says there are more).
public struct ObjectChanges: Sendable {
    /// The new objects the reply holds (those the caller may see are still to be picked).
    public let objects: [StoredObject]
    public let deleted: [UUID]
    public let anchor: Int64
    public let hasMore: Bool
    /// How many events (new and deleted objects) the reply covers.
    public let events: Int

    /// How many of each an engine reads for a reply that asked for `asked`: workouts a few at a time.
    public static func rowLimit(of type: HealthType, asked: Int) -> Int {
        type.kind == .workout ? min(asked, ObjectPage.rowsPerRead(type)) : asked
    }

    public init(
        of type: HealthType, objects read: [StoredObject], deleted: [(seq: Int64, id: UUID)], since anchor: Int64,
        limit: Int
    ) {
        var within = read
        var cut = false
        if type.kind == .workout {
            var page = ObjectPage(limit: nil)
            for object in read where !page.isFull { page.add(object) }
            within = page.objects
            cut = within.count < read.count
        }
        // Nothing after the last object within the bytes.
        let cutoff = cut ? within.last?.seq ?? anchor : .max
        let all = (within.map(\.seq) + deleted.map(\.seq)).filter { $0 <= cutoff }.sorted()
        let kept = all.prefix(max(0, limit))
        let newAnchor = kept.last ?? anchor
        objects = within.filter { $0.seq <= newAnchor }
        self.deleted = deleted.filter { $0.seq <= newAnchor }.map(\.id)
        self.anchor = newAnchor
        hasMore = all.count > kept.count || cut
        events = kept.count
    }
}

/// What tells two correlations' members apart when a correlation is saved again: each member's natural key and
/// value (`docs/store-semantics.md`, item 21: the same measurement, whatever id it was given, and whichever version
/// of its source wrote it).
public struct CorrelationMember: Hashable, Sendable {
    public var type: String
    public var source: String
    public var device: String?
    public var start: Instant
    public var end: Instant
    public var value: Double

    public init(_ sample: QuantitySample) {
        type = sample.type.identifier
        source = sample.source.identifier
        device = sample.device?.key
        start = sample.start
        end = sample.end
        value = sample.value
    }
}

/// A workout's own fields as both engines store them (the `body` column): a JSON object
/// `{"activity": 37, "duration": 1800, "energy": 250.5, "distance": 5000, "strokes": 0, "flights": 3,
/// "events": [{"kind": 1, "start": ms, "end": ms, "metadata": "..."}], "routes": [{"metadata": "...", "locations":
/// [[ms, latitude, longitude, altitude, horizontal accuracy, vertical accuracy, speed, course], ...]}]}`, totals,
/// events and routes absent when the workout has none, an event's and a route's metadata as ``MetadataCoding``
/// text, a location's unknown numbers `null`.
public enum ObjectCoding {
    /// Deep enough for a route's locations, and long enough for the most locations a workout may hold with every
    /// number at its longest (``Workout/maximumRouteLocations``, about 200 bytes each).
    static let limits = JSONLimits(maximumDepth: 8, maximumLength: 32 << 20)

    /// The workout fields a body holds.
    public struct Body: Sendable {
        public var activityType: WorkoutActivityType = .other
        public var duration: Double?
        public var totalEnergyBurned: Double?
        public var totalDistance: Double?
        public var totalSwimmingStrokeCount: Double?
        public var totalFlightsClimbed: Double?
        public var events: [WorkoutEvent] = []
        public var routes: [WorkoutRoute] = []
    }

    /// The stored text of `workout`'s own fields (its numbers are valid: finite).
    public static func encode(_ workout: Workout) -> String {
        var json = JSONWriter(capacity: 96 + 64 * workout.events.count)
        json.beginObject()
        json.key("activity")
        json.integer(Int64(workout.activityType.rawValue))
        json.key("duration")
        json.double(workout.duration)
        let totals: [(StaticString, Double?)] = [
            ("energy", workout.totalEnergyBurned), ("distance", workout.totalDistance),
            ("strokes", workout.totalSwimmingStrokeCount), ("flights", workout.totalFlightsClimbed),
        ]
        for (key, total) in totals {
            guard let total else { continue }
            json.key(key)
            json.double(total)
        }
        if !workout.events.isEmpty {
            json.key("events")
            json.beginArray()
            for event in workout.events {
                json.beginObject()
                json.key("kind")
                json.integer(Int64(event.kind.rawValue))
                json.key("start")
                json.integer(event.start.milliseconds)
                json.key("end")
                json.integer(event.end.milliseconds)
                if let metadata = MetadataCoding.encode(event.metadata) {
                    json.key("metadata")
                    json.string(metadata)
                }
                json.endObject()
            }
            json.endArray()
        }
        if !workout.routes.isEmpty {
            json.key("routes")
            json.beginArray()
            for route in workout.routes {
                json.beginObject()
                if let metadata = MetadataCoding.encode(route.metadata) {
                    json.key("metadata")
                    json.string(metadata)
                }
                json.key("locations")
                json.beginArray()
                for location in route.locations {
                    json.beginArray()
                    json.integer(location.time.milliseconds)
                    json.double(location.latitude)
                    json.double(location.longitude)
                    for number in location.optionalNumbers {
                        if let number { json.double(number) } else { json.null() }
                    }
                    json.endArray()
                }
                json.endArray()
                json.endObject()
            }
            json.endArray()
        }
        json.endObject()
        return json.text
    }

    /// The fields of stored text (its routes only when `routes`); what does not read (text a store did not write)
    /// is left at its default.
    public static func decode(_ text: String?, routes readsRoutes: Bool = true) -> Body {
        var body = Body()
        guard let text, let value = try? JSONReader.value(text, limits: limits) else { return body }
        if case .integer(let number)? = value["activity"], let type = WorkoutActivityType(rawValue: Int(number)) {
            body.activityType = type
        }
        body.duration = value["duration"]?.number
        body.totalEnergyBurned = value["energy"]?.number
        body.totalDistance = value["distance"]?.number
        body.totalSwimmingStrokeCount = value["strokes"]?.number
        body.totalFlightsClimbed = value["flights"]?.number
        if case .array(let events)? = value["events"] {
            for event in events {
                guard case .integer(let kind)? = event["kind"], let eventKind = WorkoutEvent.Kind(rawValue: Int(kind)),
                    case .integer(let start)? = event["start"], case .integer(let end)? = event["end"]
                else { continue }
                body.events.append(
                    WorkoutEvent(
                        eventKind, start: Instant(milliseconds: start), end: Instant(milliseconds: end),
                        metadata: MetadataCoding.decode(event["metadata"]?.string)))
            }
        }
        if readsRoutes, case .array(let routes)? = value["routes"] {
            for route in routes {
                guard case .array(let rows)? = route["locations"] else { continue }
                var locations: [RouteLocation] = []
                locations.reserveCapacity(rows.count)
                for row in rows {
                    guard case .array(let fields) = row, fields.count == 8, case .integer(let time) = fields[0],
                        let latitude = fields[1].number, let longitude = fields[2].number
                    else { continue }
                    locations.append(
                        RouteLocation(
                            time: Instant(milliseconds: time), latitude: latitude, longitude: longitude,
                            optionalNumbers: fields[3...].map(\.number)))
                }
                body.routes.append(
                    WorkoutRoute(locations: locations, metadata: MetadataCoding.decode(route["metadata"]?.string)))
            }
        }
        return body
    }
}
