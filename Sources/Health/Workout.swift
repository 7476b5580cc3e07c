public import Foundation

/// HealthKit's `HKWorkoutActivityType`, with its case names and numbers. Names are accepted at the edges
/// (`"running"`), numbers inside (the stores keep the number).
public enum WorkoutActivityType: Int, Hashable, Sendable, CaseIterable {
    case americanFootball = 1, archery, australianFootball, badminton, baseball, basketball, bowling, boxing
    case climbing, cricket, crossTraining, curling, cycling, dance, danceInspiredTraining, elliptical
    case equestrianSports, fencing, fishing, functionalStrengthTraining, golf, gymnastics, handball, hiking
    case hockey, hunting, lacrosse, martialArts, mindAndBody, mixedMetabolicCardioTraining, paddleSports, play
    case preparationAndRecovery, racquetball, rowing, rugby, running, sailing, skatingSports, snowSports, soccer
    case softball, squash, stairClimbing, surfingSports, swimming, tableTennis, tennis, trackAndField
    case traditionalStrengthTraining, volleyball, walking, waterFitness, waterPolo, waterSports, wrestling, yoga
    case barre, coreTraining, crossCountrySkiing, downhillSkiing, flexibility, highIntensityIntervalTraining
    case jumpRope, kickboxing, pilates, snowboarding, stairs, stepTraining, wheelchairWalkPace, wheelchairRunPace
    case taiChi, mixedCardio, handCycling, discSports, fitnessGaming, cardioDance, socialDance, pickleball
    case cooldown
    case swimBikeRun = 82, transition, underwaterDiving
    case other = 3000

    /// HealthKit's case name (`running`): the case's own name, as printing it gives.
    public var name: String { String(describing: self) }

    /// The activity type called `name` (HealthKit's case name), or numbered `name` (`"37"`).
    public init?(name: String) {
        if let found = Self.allCases.first(where: { $0.name == name }) {
            self = found
        } else if let number = Int(name), let found = Self(rawValue: number) {
            self = found
        } else {
            return nil
        }
    }
}

/// One event of a workout (HealthKit's `HKWorkoutEvent`): a type, a date interval and metadata.
public struct WorkoutEvent: Hashable, Sendable {
    /// HealthKit's `HKWorkoutEventType`, numbered as HealthKit numbers it.
    public enum Kind: Int, Hashable, Sendable, CaseIterable {
        case pause = 1, resume, lap, marker, motionPaused, motionResumed, segment, pauseOrResumeRequest

        /// HealthKit's case name (`pause`).
        public var name: String { String(describing: self) }

        /// The kind called `name`, or numbered `name`.
        public init?(name: String) {
            if let found = Self.allCases.first(where: { $0.name == name }) {
                self = found
            } else if let number = Int(name), let found = Self(rawValue: number) {
                self = found
            } else {
                return nil
            }
        }
    }

    public var kind: Kind
    public var start: Instant
    public var end: Instant
    public var metadata: [String: MetadataValue]

    public init(_ kind: Kind, start: Instant, end: Instant? = nil, metadata: [String: MetadataValue] = [:]) {
        self.kind = kind
        self.start = start
        self.end = end ?? start
        self.metadata = metadata
    }
}

/// One location of a workout's route, as HealthKit's `HKWorkoutRoute` holds it (Core Location's `CLLocation`): when,
/// where (WGS 84 degrees), and what the receiver knew of it; what it did not know is `nil`.
public struct RouteLocation: Hashable, Sendable {
    public var time: Instant
    /// Degrees north, from -90 to 90.
    public var latitude: Double
    /// Degrees east, from -180 to 180.
    public var longitude: Double
    /// Metres above sea level.
    public var altitude: Double?
    /// The radius of uncertainty of the position, in metres.
    public var horizontalAccuracy: Double?
    /// The uncertainty of the altitude, in metres.
    public var verticalAccuracy: Double?
    /// Metres per second.
    public var speed: Double?
    /// The direction of travel, in degrees clockwise from true north, from 0 to less than 360.
    public var course: Double?

    public init(
        time: Instant, latitude: Double, longitude: Double, altitude: Double? = nil,
        horizontalAccuracy: Double? = nil, verticalAccuracy: Double? = nil, speed: Double? = nil,
        course: Double? = nil
    ) {
        self.time = time
        self.latitude = latitude
        self.longitude = longitude
        self.altitude = altitude
        self.horizontalAccuracy = horizontalAccuracy
        self.verticalAccuracy = verticalAccuracy
        self.speed = speed
        self.course = course
    }

    /// What the receiver may not have known, in this order: altitude, horizontal and vertical accuracy, speed and
    /// course (how the stores, the bus and the exports list them after the time, latitude and longitude).
    public var optionalNumbers: [Double?] { [altitude, horizontalAccuracy, verticalAccuracy, speed, course] }

    /// A location of ``optionalNumbers`` (missing ones at the end are unknown; more than five are ignored).
    public init(time: Instant, latitude: Double, longitude: Double, optionalNumbers numbers: [Double?]) {
        func at(_ index: Int) -> Double? { index < numbers.count ? numbers[index] : nil }
        self.init(
            time: time, latitude: latitude, longitude: longitude, altitude: at(0), horizontalAccuracy: at(1),
            verticalAccuracy: at(2), speed: at(3), course: at(4))
    }

    /// The lowest and highest altitude a location may have, in metres (below the deepest sea floor a receiver
    /// could be, above the highest an aircraft flies).
    public static let altitudeRange = -12_000.0...100_000.0

    /// Why a store would reject this location, or `nil`: a valid time, latitude and longitude in range, an
    /// altitude in ``altitudeRange``, accuracies and speed from 0 to a million, a course from 0 to less than 360,
    /// every number finite.
    public var invalidityReason: String? {
        guard time.isSupported else { return "time (\(time.milliseconds) ms) must be within the years 1-9999" }
        guard latitude.isFinite, (-90.0...90.0).contains(latitude) else {
            return "latitude \(latitude) must be from -90 to 90"
        }
        guard longitude.isFinite, (-180.0...180.0).contains(longitude) else {
            return "longitude \(longitude) must be from -180 to 180"
        }
        if let altitude, !(altitude.isFinite && Self.altitudeRange.contains(altitude)) {
            return "altitude \(altitude) m must be from -12000 to 100000"
        }
        let amounts: [(String, Double?)] = [
            ("horizontal accuracy", horizontalAccuracy), ("vertical accuracy", verticalAccuracy), ("speed", speed),
        ]
        for (name, amount) in amounts {
            guard let amount else { continue }
            guard amount.isFinite, amount >= 0, amount <= 1e6 else {
                return "\(name) \(amount) must be a number from 0 to 1000000"
            }
        }
        if let course, !(course.isFinite && course >= 0 && course < 360) {
            return "course \(course) must be from 0 to less than 360 degrees"
        }
        return nil
    }
}

/// A route of a workout: HealthKit's `HKWorkoutRoute`, the locations recorded during it in time order, with
/// metadata of its own.
public struct WorkoutRoute: Hashable, Sendable {
    public var locations: [RouteLocation]
    public var metadata: [String: MetadataValue]

    public init(locations: [RouteLocation], metadata: [String: MetadataValue] = [:]) {
        self.locations = locations
        self.metadata = metadata
    }
}

/// An exercise session: HealthKit's `HKWorkout` (`docs/store-semantics.md`, item 28).
///
/// Samples recorded during it (heart rate, distance, energy) are ordinary samples; ``HealthStore/add(_:to:as:)``
/// associates them with the workout, and a ``SampleQuery/workout`` predicate finds them again. Statistics per
/// workout are those of the workout's interval (``StatisticsQuery/init(type:during:)``).
public struct Workout: Hashable, Sendable, Identifiable {
    public var id: UUID
    public var activityType: WorkoutActivityType
    public var start: Instant
    public var end: Instant
    public var startOffsetSeconds: Int32
    /// The time spent working out, in seconds: at most `end - start` (pauses are not counted).
    public var duration: Double
    /// kcal.
    public var totalEnergyBurned: Double?
    /// m.
    public var totalDistance: Double?
    /// count.
    public var totalSwimmingStrokeCount: Double?
    /// count.
    public var totalFlightsClimbed: Double?
    public var events: [WorkoutEvent]
    /// Where it went (HealthKit's routes of the workout), each a series of locations.
    public var routes: [WorkoutRoute]
    public var source: Source
    public var device: Device?
    public var subject: String?
    public var metadata: [String: MetadataValue]

    /// The most events a workout may have (a lap a minute for a week).
    public static let maximumEvents = 10_000
    /// The largest total a workout may have, in any of its units.
    public static let maximumTotal = 1e9
    /// The most routes a workout may have, and the most locations all of them together (more than a day at one a
    /// second, what a watch records at most).
    public static let maximumRoutes = 16
    public static let maximumRouteLocations = 100_000
    /// How far before its start or after its end a workout's route may go, in milliseconds (a receiver's fix
    /// comes and goes a little before and after).
    public static let routeMargin: Int64 = 3_600_000

    /// A workout. Without an `id` it gets the id derived from its natural key `(workout, source, device, start,
    /// end)`, so that saving the same workout twice stores it once; without a `duration`, `end - start`.
    public init(
        id: UUID? = nil, activityType: WorkoutActivityType, start: Instant, end: Instant,
        startOffsetSeconds: Int32 = 0, duration: Double? = nil, totalEnergyBurned: Double? = nil,
        totalDistance: Double? = nil, totalSwimmingStrokeCount: Double? = nil, totalFlightsClimbed: Double? = nil,
        events: [WorkoutEvent] = [], routes: [WorkoutRoute] = [], source: Source, device: Device? = nil,
        subject: String? = nil, metadata: [String: MetadataValue] = [:]
    ) {
        self.id =
            id
            ?? QuantitySample.derivedID(
                type: HealthType.workout.identifier, source: source.identifier, device: device?.key, start: start,
                end: end)
        self.activityType = activityType
        self.start = start
        self.end = end
        self.startOffsetSeconds = startOffsetSeconds
        self.duration = duration ?? Double(end.milliseconds &- start.milliseconds) / 1_000
        self.totalEnergyBurned = totalEnergyBurned
        self.totalDistance = totalDistance
        self.totalSwimmingStrokeCount = totalSwimmingStrokeCount
        self.totalFlightsClimbed = totalFlightsClimbed
        self.events = events
        self.routes = routes
        self.source = source
        self.device = device
        self.subject = subject
        self.metadata = metadata
    }

    public var provenance: Provenance { Provenance(source: source.identifier, device: device?.key) }

    /// Why a store would reject this workout, or `nil`: a valid interval and metadata; a duration from 0 to
    /// `end - start` seconds; totals finite, from 0 to ``maximumTotal``; at most ``maximumEvents`` events, each
    /// with a valid interval inside the workout's and valid metadata; an id of the derived form only when it is the
    /// workout's own.
    public var invalidityReason: String? {
        if let reason = Instant.invalidityReason(start: start.milliseconds, end: end.milliseconds) { return reason }
        if let reason = metadata.invalidityReason { return reason }
        if id.hasDerivedForm,
            id
                != QuantitySample.derivedID(
                    type: HealthType.workout.identifier, source: source.identifier, device: device?.key, start: start,
                    end: end)
        {
            return QuantitySample.derivedFormReason(hasClientID: false, isOwn: false)
        }
        let length = Double(end.milliseconds - start.milliseconds) / 1_000
        guard duration.isFinite, duration >= 0, duration <= length else {
            return "duration \(duration) s must be from 0 to the workout's length (\(length) s)"
        }
        let totals: [(String, Double?)] = [
            ("totalEnergyBurned", totalEnergyBurned), ("totalDistance", totalDistance),
            ("totalSwimmingStrokeCount", totalSwimmingStrokeCount), ("totalFlightsClimbed", totalFlightsClimbed),
        ]
        for (name, total) in totals {
            guard let total else { continue }
            guard total.isFinite, total >= 0, total <= Self.maximumTotal else {
                return "\(name) \(total) must be a number from 0 to \(Self.maximumTotal)"
            }
        }
        guard events.count <= Self.maximumEvents else {
            return "a workout holds at most \(Self.maximumEvents) events, not \(events.count)"
        }
        for (index, event) in events.enumerated() {
            let place = "event \(index + 1) of the workout"
            if let reason = Instant.invalidityReason(start: event.start.milliseconds, end: event.end.milliseconds) {
                return "\(place): \(reason)"
            }
            guard event.start >= start, event.end <= end else {
                return "\(place): must lie within the workout's interval"
            }
            if let reason = event.metadata.invalidityReason { return "\(place): \(reason)" }
        }
        return routesInvalidityReason
    }

    /// How many locations the routes hold together.
    public var routeLocationCount: Int { routes.reduce(0) { $0 + $1.locations.count } }

    /// Why a store would reject this workout's routes, or `nil`: at most ``maximumRoutes`` routes of at most
    /// ``maximumRouteLocations`` locations together, each route with a location at least, its locations valid, in
    /// time order (two may share a time) and within ``routeMargin`` of the workout's interval, and its metadata
    /// valid.
    public var routesInvalidityReason: String? {
        guard start.isSupported, end.isSupported else { return "the workout's interval is outside the years 1-9999" }
        guard routes.count <= Self.maximumRoutes else {
            return "a workout holds at most \(Self.maximumRoutes) routes, not \(routes.count)"
        }
        let locations = routeLocationCount
        guard locations <= Self.maximumRouteLocations else {
            return "a workout's routes hold at most \(Self.maximumRouteLocations) locations, not \(locations)"
        }
        let earliest = start.milliseconds - Self.routeMargin
        let latest = end.milliseconds + Self.routeMargin
        for (routeIndex, route) in routes.enumerated() {
            let place = "route \(routeIndex + 1) of the workout"
            if let reason = route.metadata.invalidityReason { return "\(place): \(reason)" }
            guard !route.locations.isEmpty else { return "\(place) holds no location" }
            var previous = Int64.min
            for (index, location) in route.locations.enumerated() {
                let position = "\(place), location \(index + 1)"
                if let reason = location.invalidityReason { return "\(position): \(reason)" }
                let time = location.time.milliseconds
                guard time >= earliest, time <= latest else {
                    return "\(position): its time must lie within an hour of the workout's interval"
                }
                guard time >= previous else { return "\(position): locations must be in time order" }
                previous = time
            }
        }
        return nil
    }
}

/// One page of a workout query.
public struct WorkoutPage: Hashable, Sendable {
    public var workouts: [Workout]
    /// Pass as ``SampleQuery/cursor`` to get the next page; `nil` when this was the last.
    public var next: SampleCursor?

    public init(workouts: [Workout], next: SampleCursor?) {
        self.workouts = workouts
        self.next = next
    }
}

extension StatisticsQuery {
    /// The statistics of `type` over `workout`'s interval, for the workout's subject: one bucket from its start to
    /// its end (HealthKit's statistics of a workout are those of the samples during it), in UTC.
    ///
    /// - Throws: ``StatisticsBucketError`` for a workout that ends when it starts.
    public init(type: HealthType, during workout: Workout) throws(StatisticsBucketError) {
        self.init(
            type: type, buckets: try StatisticsBuckets.buckets(borders: [workout.start, workout.end]),
            subjects: workout.subject.map { [$0] })
    }
}
