import DBus
import Foundation
import Health
import Testing

@testable import HealthBus

/// The wire format and caller identification, without a bus.
@Suite struct WireTests {
    static let strap = Device(name: "Polar H10", manufacturer: "Polar Electro Oy", serialNumber: "690A1321")

    @Test func quantitySamplesRoundTrip() throws {
        let sample = QuantitySample(
            type: .distanceWalkingRunning, start: Instant(seconds: 100), end: Instant(seconds: 160),
            startOffsetSeconds: 3_600, value: 120, source: Source(identifier: "uid1000:/usr/bin/app", version: "2"),
            device: Self.strap, subject: "alice",
            metadata: [
                "note": .string("track"), MetadataKey.wasUserEntered: .bool(true), "laps": .number(3),
                "when": .date(Instant(milliseconds: 5)), "pace": .quantity(4.5, unit: "min/km"),
            ])
        let wire = SampleWire.encode(sample)
        #expect(wire.signature == "(sxxdsa{sv})")
        #expect(try SampleWire.decode(wire) == .quantity(sample))
        // In another unit on the way out, and back to the canonical one on the way in.
        let inKilometres = SampleWire.encode(sample, unit: try HealthUnit("km"))
        #expect(inKilometres.structMembers?[3] == .double(0.12))
        #expect(inKilometres.structMembers?[4] == .string("km"))
        #expect(try SampleWire.decode(inKilometres) == .quantity(sample))
    }

    @Test func heartbeatSeriesRoundTrip() throws {
        let series = HeartbeatSeriesSample(
            start: Instant(seconds: 0), end: Instant(seconds: 2),
            beats: [
                Beat(offsetMilliseconds: 800, rrMilliseconds: 800),
                Beat(offsetMilliseconds: 1_900, rrMilliseconds: 900, precededByGap: true),
            ], source: Source(identifier: "gateway"))
        let wire = SampleWire.encode(series)
        #expect(wire.structMembers?[3] == .double(2))
        #expect(try SampleWire.decode(wire) == .heartbeats(series))
    }

    @Test func workoutRoutesRoundTripWithUnknownsAsNaN() throws {
        let start = Instant(seconds: 1_000)
        let route = WorkoutRoute(
            locations: [
                RouteLocation(
                    time: start, latitude: 51.5, longitude: -0.1, altitude: 12.5, horizontalAccuracy: 4,
                    verticalAccuracy: 3, speed: 2.75, course: 180),
                RouteLocation(time: start.adding(milliseconds: 1_250), latitude: 51.5001, longitude: -0.1001),
            ], metadata: ["syncVersion": .integer(2)])
        let workout = Workout(
            activityType: .running, start: start, end: Instant(seconds: 1_600), routes: [route, route],
            source: Source(identifier: "gateway"))
        let wire = SampleWire.encode(workout)
        #expect(wire.signature == "(sxxdsa{sv})")
        let routes = try #require(wire.structMembers?[5].stringKeyedValue?["routes"])
        #expect(routes.signature == "aa{sv}")
        let second = try #require(routes.arrayElements?.first?.stringKeyedValue?["locations"]?.arrayElements?.last)
        #expect(second.signature == "(xddddddd)")
        #expect(second.structMembers?[3].doubleValue?.isNaN == true)
        #expect(try SampleWire.decode(wire) == .workout(workout))
        #expect(try SampleWire.checkSize(wire) == 0)

        // More routes, or more locations, than a workout holds are refused before they are read.
        var many = workout
        many.routes = Array(repeating: route, count: Workout.maximumRoutes + 1)
        #expect(throws: HealthBusError.self) { try SampleWire.checkSize(SampleWire.encode(many)) }
        var long = workout
        long.routes = [
            WorkoutRoute(
                locations: Array(repeating: route.locations[1], count: Workout.maximumRouteLocations / 2 + 1))
        ]
        long.routes.append(long.routes[0])
        #expect(throws: HealthBusError.self) { try SampleWire.checkSize(SampleWire.encode(long)) }
        // A route of the wrong shape names itself.
        var shapes = wire.structMembers ?? []
        var properties = shapes[5].stringKeyedValue ?? [:]
        properties["routes"] = .array(HealthBusAPI.options, [.vardict(ordered: [("locations", .int64(3))])])
        shapes[5] = .vardict(ordered: properties.sorted { $0.key < $1.key }.map { ($0.key, $0.value) })
        do {
            _ = try SampleWire.decode(.struct(shapes))
            Issue.record("decoded a route of the wrong shape")
        } catch {
            #expect(error.message.contains("route 1: a route is a{sv}"), "\(error.message)")
        }
    }

    @Test(arguments: [
        (
            DBusValue.struct([.string("heartrate"), .int64(0), .int64(0), .double(70), .string(""), .vardict([:])]),
            HealthBusError.Name.unknownType
        ),
        (
            .struct([.string("heartRate"), .int64(0), .int64(0), .double(70), .string("kg"), .vardict([:])]),
            HealthBusError.Name.incompatibleUnit
        ),
        (
            .struct([.string("heartRate"), .int64(0), .int64(0), .double(70), .string("beats"), .vardict([:])]),
            HealthBusError.Name.incompatibleUnit
        ),
        (
            .struct([.string("heartRate"), .int64(10), .int64(0), .double(70), .string(""), .vardict([:])]),
            HealthBusError.Name.invalidSample
        ),
        (
            .struct([
                .string("heartRate"), .int64(0), .int64(0), .double(70), .string(""),
                .vardict(["colour": .string("red")]),
            ]),
            HealthBusError.Name.invalidArgument
        ),
        (
            .struct([.string("heartbeatSeries"), .int64(0), .int64(0), .double(0), .string(""), .vardict([:])]),
            HealthBusError.Name.invalidArgument
        ),
    ])
    func badSamplesGetNamedErrors(wire: DBusValue, name: String) {
        #expect {
            _ = try SampleWire.decode(wire)
        } throws: { error in
            (error as? HealthBusError)?.name == name && !((error as? HealthBusError)?.message.isEmpty ?? true)
        }
    }

    @Test func cursorsContinueOnlyTheirOwnQuery() throws {
        let cursor = SampleCursor(
            start: Instant(milliseconds: 1), end: Instant(milliseconds: 2), id: "01941f29-7c00-8d2b-8c79-2c6c88f024da")
        let up = SampleOrder.chronological(ascending: true)
        let text = CursorWire.encode(cursor, type: .heartRate, order: up)
        #expect(try CursorWire.decode(text, type: .heartRate, order: up) == cursor)
        #expect(throws: HealthBusError.self) { try CursorWire.decode(text, type: .stepCount, order: up) }
        #expect(throws: HealthBusError.self) {
            try CursorWire.decode(text, type: .heartRate, order: .chronological(ascending: false))
        }
        // Another order of the same first key is another query.
        let mixed = SampleOrder([SampleSortDescriptor(.start), SampleSortDescriptor(.end, ascending: false)])
        #expect(throws: HealthBusError.self) { try CursorWire.decode(text, type: .heartRate, order: mixed) }
        #expect(
            try CursorWire.decode(
                CursorWire.encode(cursor, type: .heartRate, order: mixed), type: .heartRate, order: mixed)
                == cursor)
        #expect(throws: HealthBusError.self) { try CursorWire.decode("garbage", type: .heartRate, order: up) }
        #expect(try CursorWire.decode("", type: .heartRate, order: up) == nil)
    }

    @Test func unitsFromCgroups() {
        #expect(AppIdentity.unit(fromCgroup: "0::/system.slice/heart-monitor.service\n") == "heart-monitor.service")
        #expect(
            AppIdentity.unit(
                fromCgroup: "0::/user.slice/user-1000.slice/user@1000.service/app.slice/today.service\n")
                == "today.service")
        #expect(
            AppIdentity.unit(
                fromCgroup:
                    "0::/user.slice/user-1000.slice/user@1000.service/app.slice/app-flatpak-org.example.Today-4242.scope\n"
            ) == "flatpak:org.example.Today")
        // Terminals, sessions, containers and user managers name no app.
        #expect(AppIdentity.unit(fromCgroup: "0::/user.slice/user-1000.slice/session-3.scope\n") == nil)
        #expect(AppIdentity.unit(fromCgroup: "0::/user.slice/user-1000.slice/user@1000.service\n") == nil)
        #expect(AppIdentity.unit(fromCgroup: "0::/\n") == nil)
        #expect(AppIdentity.unit(fromCgroup: "1:name=systemd:/system.slice/legacy.service\n") == "legacy.service")
    }

    @Test func programsAndScripts() {
        #expect(
            AppIdentity.program(executable: "/usr/bin/busctl", arguments: ["busctl"], workingDirectory: "/")
                == "/usr/bin/busctl")
        #expect(
            AppIdentity.program(
                executable: "/usr/bin/python3.11", arguments: ["python3", "-u", "bin/today.py", "--bus", "x"],
                workingDirectory: "/home/ann") == "/home/ann/bin/today.py")
        #expect(
            AppIdentity.program(
                executable: "/usr/bin/python3.11", arguments: ["python3", "-m", "today"], workingDirectory: nil)
                == "/usr/bin/python3.11 -m today")
        #expect(
            AppIdentity.program(
                executable: "/usr/bin/bash", arguments: ["bash", "-c", "busctl"], workingDirectory: nil)
                == "/usr/bin/bash")
        // Without the exe link (another user's process, the service without CAP_SYS_PTRACE), not the command line:
        // the caller chooses its first word.
        #expect(AppIdentity.program(executable: nil, arguments: ["/usr/bin/other"], workingDirectory: nil) == nil)
        #expect(AppIdentity.resolve(uid: 7, pid: UInt32.max).appID == "uid7")
        #expect(
            AppIdentity.flatpakID(fromInfo: "[Application]\nname=org.example.Today\nruntime=x\n[Instance]\n")
                == "org.example.Today")
        #expect(AppIdentity.flatpakID(fromInfo: "[Instance]\nname=org.example.Other\n") == nil)
        #expect(AppIdentity.flatpakID(fromInfo: "[Application]\nname=../../x\n") == nil)
        #expect(AppIdentity(uid: 1000, program: "/usr/bin/busctl").appID == "uid1000:/usr/bin/busctl")
        #expect(
            AppIdentity(uid: 1000, unit: "today.service", program: "/usr/bin/today").appID == "uid1000:today.service")
        #expect(AppIdentity(uid: 7).appID == "uid7")
    }

    @Test func identifiesThisProcess() throws {
        let me = AppIdentity.resolve(uid: getuid(), pid: UInt32(getpid()))
        #expect(me.program == (try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")))
        #expect(me.appID.hasPrefix("uid\(getuid()):"))
    }
}
