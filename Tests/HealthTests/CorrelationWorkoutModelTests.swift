import Foundation
import Health
import Testing

/// HealthKit's numbering of workout activity and event types, names at the edges, and the validity rules of
/// correlations and workouts (`docs/store-semantics.md`, items 27 and 28).
@Suite struct CorrelationWorkoutModelTests {
    @Test func activityAndEventTypesHaveHealthKitsNumbers() {
        let numbers: [(WorkoutActivityType, Int)] = [
            (.americanFootball, 1), (.cycling, 13), (.running, 37), (.swimming, 46), (.walking, 52), (.yoga, 57),
            (.barre, 58), (.highIntensityIntervalTraining, 63), (.pickleball, 79), (.cooldown, 80),
            (.swimBikeRun, 82), (.transition, 83), (.underwaterDiving, 84), (.other, 3_000),
        ]
        for (type, number) in numbers { #expect(type.rawValue == number, "\(type)") }
        #expect(WorkoutActivityType.allCases.count == 84)
        #expect(WorkoutActivityType(name: "running") == .running)
        #expect(WorkoutActivityType(name: "37") == .running)
        #expect(WorkoutActivityType(name: "81") == nil)
        #expect(WorkoutActivityType(name: "jogging") == nil)
        #expect(WorkoutEvent.Kind.allCases.map(\.rawValue) == Array(1...8))
        #expect(WorkoutEvent.Kind(name: "pauseOrResumeRequest")?.rawValue == 8)
    }

    @Test func correlationsAndWorkoutsSayWhyTheyAreInvalid() throws {
        let source = Source(identifier: "com.example")
        let now = Instant(seconds: 1_000)
        #expect(
            Correlation.bloodPressure(systolic: 120, diastolic: 80, at: now, source: source).invalidityReason == nil)
        var other = Correlation.bloodPressure(systolic: 120, diastolic: 80, at: now, source: source)
        other.objects[1] = QuantitySample(
            type: .bloodPressureDiastolic, start: now, end: now, value: 80, source: Source(identifier: "com.other"))
        #expect(other.invalidityReason?.contains("source and subject") == true)
        let water = try #require(HealthTypeCatalog.type("dietaryWater"))
        let meal = Correlation(
            type: .food, start: now, end: Instant(seconds: 2_000),
            objects: [
                QuantitySample(
                    type: water, start: Instant(seconds: 2_500), end: Instant(seconds: 2_500), value: 0.3,
                    source: source)
            ],
            source: source)
        #expect(meal.invalidityReason?.contains("within the correlation's interval") == true)
        let notCorrelation = Correlation(type: .heartRate, start: now, end: now, objects: [], source: source)
        #expect(notCorrelation.invalidityReason?.contains("not a correlation type") == true)
        var run = Workout(activityType: .running, start: now, end: Instant(seconds: 4_600), source: source)
        #expect(run.duration == 3_600)
        #expect(run.invalidityReason == nil)
        run.totalDistance = .infinity
        #expect(run.invalidityReason?.contains("totalDistance") == true)
        let statistics = try StatisticsQuery(type: .heartRate, during: run)
        #expect(statistics.buckets.map(\.start) == [now])
        #expect(statistics.buckets.map(\.end) == [Instant(seconds: 4_600)])
    }

    @Test func routeLocationsSayWhyTheyAreInvalid() {
        let at = Instant(seconds: 1_000)
        func location(_ change: (inout RouteLocation) -> Void) -> RouteLocation {
            var location = RouteLocation(
                time: at, latitude: 51.5, longitude: -0.1, altitude: 10, horizontalAccuracy: 5, verticalAccuracy: 3,
                speed: 2.5, course: 90)
            change(&location)
            return location
        }
        #expect(location { _ in }.invalidityReason == nil)
        #expect(location { $0.latitude = -90 }.invalidityReason == nil)
        #expect(location { $0.longitude = 180 }.invalidityReason == nil)
        #expect(location { $0.course = 0 }.invalidityReason == nil)
        let cases: [(RouteLocation, String)] = [
            (location { $0.latitude = 90.01 }, "latitude"), (location { $0.latitude = .nan }, "latitude"),
            (location { $0.longitude = -180.5 }, "longitude"), (location { $0.altitude = 100_001 }, "altitude"),
            (location { $0.altitude = -.infinity }, "altitude"),
            (location { $0.horizontalAccuracy = -1 }, "horizontal accuracy"),
            (location { $0.verticalAccuracy = 2e6 }, "vertical accuracy"), (location { $0.speed = -0.5 }, "speed"),
            (location { $0.course = 360 }, "course"), (location { $0.course = -1 }, "course"),
            (location { $0.time = Instant(milliseconds: Instant.supportedMilliseconds.upperBound + 1) }, "time"),
        ]
        for (location, words) in cases {
            let reason = location.invalidityReason
            #expect(reason != nil && reason?.contains(words) == true, "\(location): \(reason ?? "valid")")
        }
    }
}
