import DBus
import Foundation
import Health
import HealthBus
import SQLiteStore
import Synchronization
import Testing
import WearhouseClient

/// The API served in-process on a private bus, through the Swift client.
@Suite(.serialized) struct ServerTests {
    static let noon: Int64 = 1_735_732_800_000  // 2025-01-01T12:00:00Z

    @Test func writesNeedPermissionAndReadsWithoutItSeeOwnSamples() async throws {
        try await withAPI { api in
            let client = try await api.client()
            defer { Task { await client.close() } }
            let app = try await api.identify(client)
            #expect(app.hasSuffix(":app1"))

            // No grant: the write fails with a named error that says what to do.
            do {
                _ = try await client.save([heartRate(Self.noon, 70)])
                Issue.record("a write without permission succeeded")
            } catch let error as HealthBusError {
                #expect(error.name == HealthBusError.Name.notAuthorized)
                #expect(error.message.contains("wearhouse grant '\(app)' --write heartRate"))
            }
            // The request waits for the owner, who grants writing only.
            #expect(try await client.requestAuthorization(read: [.heartRate], write: [.heartRate]) == (app, true))
            #expect(try await api.store.apps().first { $0.app == app }?.pendingRead == ["heartRate"])
            try await api.store.setAuthorization(
                app: app, [TypeAuthorization(type: "heartRate", read: false, share: true)])
            #expect(try await client.requestAuthorization(read: [.heartRate], write: [.heartRate]).pending == false)
            #expect(
                try await client.save([heartRate(Self.noon, 70), heartRate(Self.noon + 1_000, 71)]) == [
                    .inserted, .inserted,
                ])
            // The gateway's samples are there, but a reader without permission sees only its own, and no error.
            try await api.gatewayHeartRate(count: 5, from: Self.noon)
            let own = try await client.samples(SampleQuery(type: .heartRate))
            #expect(own.samples.count == 2)
            #expect(own.samples.allSatisfy { $0.source.identifier == app })
            #expect(own.cursor == nil)
            let ownStatistics = try await client.statistics(
                of: .heartRate, from: Instant(milliseconds: Self.noon), to: Instant(milliseconds: Self.noon + 60_000))
            #expect(ownStatistics.count == 2)
            // With read permission, everything.
            try await api.store.setAuthorization(
                app: app, [TypeAuthorization(type: "heartRate", read: true, share: true)])
            #expect(try await client.samples(SampleQuery(type: .heartRate)).samples.count == 7)
            // Apps delete only their own samples.
            let everything = try await client.samples(SampleQuery(type: .heartRate)).samples
            #expect(try await client.delete(everything.map(\.id)) == 2)

            // The access log shows every call that reached the store, the refused write included.
            let log = try await api.store.accessLog(limit: 50).filter { $0.caller == .app(app) }
            let operations = log.reversed().map { "\($0.operation.rawValue)\($0.denied ? "!" : "")" }
            #expect(
                operations == [
                    "save!", "request", "request", "save", "query", "statistics", "query", "query", "delete",
                ])
        }
    }

    @Test func badArgumentsGetNamedErrors() async throws {
        try await withAPI { api in
            let client = try await api.client()
            defer { Task { await client.close() } }
            let bus = client.connection
            func call(_ member: String, _ arguments: [DBusValue]) async -> String? {
                await rawCallError(bus, member, arguments)
            }
            let none = DBusValue.vardict([:])
            #expect(await call("QuerySamples", [.string("heartrate"), none]) == HealthBusError.Name.unknownType)
            #expect(
                await call("QuerySamples", [.string("heartRate"), .vardict(["unit": .string("kg")])])
                    == HealthBusError.Name.incompatibleUnit)
            #expect(
                await call(
                    "QuerySamples", [.string("heartRate"), .vardict(["from": .int64(10), "to": .int64(5)])])
                    == HealthBusError.Name.invalidArgument)
            #expect(
                await call("QuerySamples", [.string("heartRate"), .vardict(["form": .int64(10)])])
                    == HealthBusError.Name.invalidArgument)
            #expect(
                await call("QuerySamples", [.string("heartRate"), .vardict(["limit": .string("all")])])
                    == HealthBusError.Name.invalidArgument)
            #expect(
                await call("QuerySamples", [.string("heartRate"), .vardict(["cursor": .string("stepCount/a/1/2/x")])])
                    == HealthBusError.Name.invalidArgument)
            for sort in [["middle"], ["start", "start"], ["start", "end", "start"], []] {
                #expect(
                    await call("QuerySamples", [.string("heartRate"), .vardict(["sort": .strings(sort)])])
                        == HealthBusError.Name.invalidArgument, "\(sort)")
            }
            #expect(
                await call(
                    "QuerySamples",
                    [.string("heartRate"), .vardict(["sort": .strings(["-end"]), "ascending": .boolean(false)])])
                    == HealthBusError.Name.invalidArgument)
            #expect(
                await call("QuerySamples", [.string("heartRate"), .vardict(["sort": .string("start")])])
                    == HealthBusError.Name.invalidArgument)
            let keys = (0...HealthBusAPI.maximumMetadataEntries).map { "key\($0)" }
            #expect(
                await call("QuerySamples", [.string("heartRate"), .vardict(["metadataKeys": .strings(keys)])])
                    == HealthBusError.Name.limitExceeded)
            #expect(
                await call("Statistics", [.string("heartRate"), .int64(20), .int64(10), none])
                    == HealthBusError.Name.invalidArgument)
            #expect(
                await call("Statistics", [.string("heartbeatSeries"), .int64(0), .int64(10), none])
                    == HealthBusError.Name.invalidArgument)
            #expect(
                await call(
                    "StatisticsCollection",
                    [.string("stepCount"), .int64(0), .int64(Self.noon), .string("1m"), none])
                    == HealthBusError.Name.limitExceeded)
            #expect(
                await call("StatisticsCollection", [.string("stepCount"), .int64(0), .int64(10), .string("1y"), none])
                    == HealthBusError.Name.invalidArgument)
            #expect(
                await call(
                    "StatisticsCollection",
                    [
                        .string("stepCount"), .int64(0), .int64(10), .string("1d"),
                        .vardict(["timeZone": .string("Mars")]),
                    ])
                    == HealthBusError.Name.invalidArgument)
            #expect(
                await call("Changes", [.string("heartRate"), .int64(-1), .uint32(0)])
                    == HealthBusError.Name.invalidArgument)
            #expect(await call("DeleteSamples", [.strings(["not-an-id"])]) == HealthBusError.Name.invalidArgument)
            #expect(await call("Observe", [.strings(["heartRate", "mood"])]) == HealthBusError.Name.unknownType)
            #expect(
                await call("RequestAuthorization", [.strings(["steps"]), .strings([])])
                    == HealthBusError.Name.unknownType)
            // A wrong signature is refused by the bus layer before any of this.
            #expect(await call("QuerySamples", [.string("heartRate")]) == DBusError.Name.unknownMethod)

            // Saving: too many at once, a wrong unit, an invalid value (the whole batch is refused).
            let app = try await api.identify(client)
            try await api.store.setAuthorization(
                app: app, [TypeAuthorization(type: "heartRate", read: true, share: true)])
            let tooMany = (0..<(HealthBusAPI.maximumBatchSize + 1)).map { heartRate(Int64($0) * 1_000, 60) }
            #expect(await errorName { _ = try await client.save(tooMany) } == HealthBusError.Name.limitExceeded)
            let wrongUnit = SampleWire.encode(heartRate(0, 60), forSaving: true)
            var members = wrongUnit.structMembers ?? []
            members[4] = .string("km")
            #expect(
                await call("SaveSamples", [.array(HealthBusAPI.sampleType, [.struct(members)])])
                    == HealthBusError.Name.incompatibleUnit)
            // 1.5 count/s is 90 count/min: converted, and stored.
            members[4] = .string("count/s")
            members[3] = .double(1.5)
            #expect(await call("SaveSamples", [.array(HealthBusAPI.sampleType, [.struct(members)])]) == nil)
            #expect(try await client.samples(SampleQuery(type: .heartRate)).samples.first.map(value) == 90)
            #expect(
                await errorName { _ = try await client.save([heartRate(0, 61), heartRate(1_000, 900)]) }
                    == HealthBusError.Name.invalidSample)
            #expect(try await client.samples(SampleQuery(type: .heartRate)).samples.count == 1)
            // Someone else's source.
            var foreign = members
            foreign[5] = .vardict(["source": .string("org.wearhouse.gateway")])
            #expect(
                await call("SaveSamples", [.array(HealthBusAPI.sampleType, [.struct(foreign)])])
                    == HealthBusError.Name.invalidArgument)
        }
    }

    @Test func aMillionSampleRequestIsPaged() async throws {
        try await withAPI { api in
            try await api.gatewayHeartRate(count: 12_000, from: Self.noon)
            let client = try await api.client()
            defer { Task { await client.close() } }
            let app = try await api.identify(client)
            try await api.store.setAuthorization(
                app: app, [TypeAuthorization(type: "heartRate", read: true, share: false)])
            var cursor: String?
            var pages: [Int] = []
            var seen: [Int64] = []
            repeat {
                let page = try await client.samples(SampleQuery(type: .heartRate, limit: 1_000_000), cursor: cursor)
                pages.append(page.samples.count)
                seen += page.samples.map(start)
                cursor = page.cursor
            } while cursor != nil
            #expect(pages == [5_000, 5_000, 2_000])
            #expect(seen == (0..<12_000).map { Self.noon + Int64($0) * 1_000 })
            // Newest first, in another unit.
            let newest = try await client.samples(
                SampleQuery(type: .heartRate, ascending: false, limit: 2), unit: try HealthUnit("count/s"))
            #expect(newest.samples.map(start) == [Self.noon + 11_999_000, Self.noon + 11_998_000])
            #expect(newest.cursor != nil)
            // Sort descriptors: by end descending, paged; a cursor continues only its own order.
            let byEnd = SampleQuery(
                type: .heartRate, sort: [SampleSortDescriptor(.end, ascending: false)], limit: 4_000)
            var backwards: [Int64] = []
            cursor = nil
            repeat {
                let page = try await client.samples(byEnd, cursor: cursor)
                backwards += page.samples.map(start)
                cursor = page.cursor
            } while cursor != nil
            #expect(backwards == seen.reversed())
            let first = try await client.samples(byEnd).cursor
            #expect(
                await errorName { _ = try await client.samples(SampleQuery(type: .heartRate), cursor: first) }
                    == HealthBusError.Name.invalidArgument)
            // Changes page too.
            let changes = try await client.changes(of: .heartRate, since: 0, limit: 1_000_000)
            #expect(changes.added.count == 5_000 && changes.more)
        }
    }

    @Test func aBusyCallerDoesNotStallTheOthers() async throws {
        try await withAPI { api in
            try await api.gatewayHeartRate(count: 12_000, from: Self.noon)
            let hog = try await api.client()
            let other = try await api.client()
            defer {
                Task {
                    await hog.close()
                    await other.close()
                }
            }
            let hogApp = try await api.identify(hog)
            _ = try await api.identify(other)
            try await api.store.setAuthorization(
                app: hogApp, [TypeAuthorization(type: "heartRate", read: true, share: false)])
            // 40 pages of 5,000 samples at once: 8 are taken, the rest refused at once.
            let hogAnswers = AnswerCount()
            let refused = await withTaskGroup(of: String?.self) { group in
                for _ in 0..<40 {
                    group.addTask {
                        let name = await errorName {
                            _ = try await hog.samples(SampleQuery(type: .heartRate, limit: 5_000))
                        }
                        hogAnswers.add()
                        return name
                    }
                }
                // Meanwhile another app is answered: the bus thread is free (its identity comes back before the
                // hog has all its answers), and the store queue, which holds at most the hog's 8 calls, takes its
                // query too. No wall-clock limits: the order of answers shows it on a loaded machine as well.
                let identity = try? await other.identity()
                let hogAnswersBeforeIdentity = hogAnswers.value
                let query = try? await other.samples(SampleQuery(type: .heartRate))
                #expect(identity != nil)
                #expect(hogAnswersBeforeIdentity < 40)
                #expect(query != nil)  // answered (empty: it may read nothing), not refused
                var refused = 0
                for await name in group where name == HealthBusError.Name.limitExceeded { refused += 1 }
                return refused
            }
            #expect(refused > 0)
            #expect(refused <= 40 - HealthBusAPI.maximumCallsInFlight)
            // Once the hog's calls are answered, it may call again.
            #expect(try await hog.samples(SampleQuery(type: .heartRate, limit: 10)).samples.count == 10)
        }
    }

    @Test func observersHearOnlyOfTypesTheyMayRead() async throws {
        try await withAPI { api in
            let reader = try await api.client()
            let stranger = try await api.client()
            defer {
                Task {
                    await reader.close()
                    await stranger.close()
                }
            }
            let readerApp = try await api.identify(reader)
            _ = try await api.identify(stranger)
            try await api.store.setAuthorization(
                app: readerApp, [TypeAuthorization(type: "heartRate", read: true, share: false)])
            let (anchor, additions) = try await reader.observe([.heartRate, .stepCount])
            let (_, nothing) = try await stranger.observe([.heartRate])
            #expect(api.server.observerCount == 2)
            // The gateway writes heart rate (straight into the store, as it does).
            try await api.gatewayHeartRate(count: 3, from: Self.noon)
            var iterator = additions.makeAsyncIterator()
            let addition = await iterator.next()
            #expect(addition?.type == "heartRate")
            let changes = try await reader.changes(of: .heartRate, since: anchor)
            #expect(changes.added.count == 3)
            #expect(changes.anchor == addition?.anchor)
            // The stranger heard nothing (it may not read heart rate); give the poller a few rounds.
            let heard = await firstElement(of: nothing, within: .milliseconds(600))
            #expect(heard == nil)
            // Leaving the bus ends the observation.
            await stranger.close()
            try await waitUntil { api.server.observerCount == 1 }
            let log = try await api.store.accessLog(limit: 20)
            #expect(log.filter { $0.operation == .observe }.count == 3)
        }
    }

    @Test func introspectionMatchesTheShippedXML() async throws {
        try await withAPI { api in
            let reply = try await api.serverConnection.call(
                HealthBusAPI.busName, path: HealthBusAPI.objectPath, interface: "org.freedesktop.DBus.Introspectable",
                member: "Introspect")
            let served = try InterfaceShape(xml: reply.first?.stringValue ?? "")
            let shipped = try InterfaceShape(contentsOf: repositoryRoot.appendingPathComponent(shippedXML))
            #expect(served == shipped)
            #expect(served.methods.count == HealthBusAPI.interface.methods.count)
        }
    }
}

/// The error name of a call made without the client (arguments as they are), or `nil` when it succeeded.
func rawCallError(_ bus: DBusConnection, _ member: String, _ arguments: [DBusValue]) async -> String? {
    do {
        _ = try await bus.call(
            HealthBusAPI.busName, path: HealthBusAPI.objectPath, interface: HealthBusAPI.interfaceName, member: member,
            arguments: arguments, timeout: .seconds(10))
        return nil
    } catch {
        #expect(!error.message.isEmpty)
        return error.name
    }
}

private func value(_ sample: BusSample) -> Double? {
    if case .quantity(let quantity) = sample { quantity.value } else { nil }
}

private func start(_ sample: BusSample) -> Int64 {
    switch sample {
    case .quantity(let quantity): quantity.start.milliseconds
    case .heartbeats(let series): series.start.milliseconds
    case .correlation(let correlation): correlation.start.milliseconds
    case .workout(let workout): workout.start.milliseconds
    }
}

/// The first element within `timeout`, or `nil`.
func firstElement(of observation: HealthClient.Observation, within timeout: Duration) async -> HealthClient.Addition? {
    await withTaskGroup(of: HealthClient.Addition?.self) { group in
        group.addTask {
            var iterator = observation.makeAsyncIterator()
            return await iterator.next()
        }
        group.addTask {
            try? await Task.sleep(for: timeout)
            observation.cancel()
            return nil
        }
        let first = await group.next() ?? nil
        group.cancelAll()
        observation.cancel()
        return first
    }
}

/// Waits (up to 5 s) until `condition` holds.
func waitUntil(_ condition: () -> Bool) async throws {
    let deadline = ContinuousClock.now + .seconds(5)
    while !condition() {
        guard ContinuousClock.now < deadline else {
            Issue.record("condition not met in 5 s")
            return
        }
        try await Task.sleep(for: .milliseconds(20))
    }
}

/// How many answers came back so far, counted from concurrent tasks.
private final class AnswerCount: Sendable {
    private let count = Mutex(0)
    func add() { count.withLock { $0 += 1 } }
    var value: Int { count.withLock { $0 } }
}
