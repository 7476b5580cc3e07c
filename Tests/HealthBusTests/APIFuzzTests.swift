import DBus
import Foundation
import Health
import HealthBus
import SQLiteStore
import Support
import Testing
import WearhouseClient

/// The D-Bus API fuzzer: random methods with random arguments, well-typed and ill-typed, from random callers
/// whose grants the owner changes at random, against the real server on a private bus. After every call: the
/// service answered (with a reply or one of the API's errors), and no caller got a sample (or a statistic's
/// source) of a type it may not read unless it wrote it; at the end, the access log holds an entry per call that
/// reached the store.
///
/// `WEARHOUSE_API_FUZZ_CALLS` sets the number of calls (300 by default; `make fuzz` runs many more),
/// `WEARHOUSE_API_FUZZ_SEED` replays a run (the seed is printed first).
@Suite(.serialized) struct APIFuzzTests {
    static let noon: Int64 = 1_735_732_800_000  // 2025-01-01T12:00:00Z
    static let types = HealthTypeCatalog.all.map(\.identifier)
    static let methods = [
        "Types", "Identity", "RequestAuthorization", "SaveSamples", "DeleteSamples", "QuerySamples", "Statistics",
        "StatisticsCollection", "Changes", "Observe", "StopObserving", "Sources", "Priorities", "SetPriority",
        "ResetPriority",
    ]

    @Test func randomCallsFromRandomCallersBreakNothing() async throws {
        let environment = ProcessInfo.processInfo.environment
        let calls =
            environment["WEARHOUSE_API_FUZZ_CALLS"].flatMap { Int($0) }.map { min(max($0, 1), 10_000_000) } ?? 300
        let seed =
            environment["WEARHOUSE_API_FUZZ_SEED"].flatMap { UInt64($0) }
            ?? UInt64(truncatingIfNeeded: Int64(Date().timeIntervalSince1970 * 1_000_000))
        print("API fuzzer: \(calls) calls, seed \(seed) (replay: WEARHOUSE_API_FUZZ_SEED=\(seed))")
        var fuzzer = Fuzzer(random: SplitMix64(seed: seed))
        try await withAPI { api in
            try await api.gatewayHeartRate(count: 20, from: Self.noon)
            var clients: [(client: HealthClient, app: String)] = []
            for _ in 0..<4 {
                let client = try await api.client()
                clients.append((client, try await api.identify(client)))
            }
            var grants: [String: [String: (read: Bool, share: Bool)]] = [:]
            var expected: [String: [AccessLogEntry.Operation: Int]] = [:]
            var unsure: [String: Int] = [:]  // statistics calls that may or may not have reached the store
            for index in 0..<calls {
                if fuzzer.chance(0.1) {
                    let app = clients[fuzzer.below(clients.count)].app
                    var set: [String: (read: Bool, share: Bool)] = [:]
                    for type in Self.types { set[type] = (fuzzer.chance(0.5), fuzzer.chance(0.6)) }
                    grants[app] = set
                    try await api.store.setAuthorization(
                        app: app,
                        set.map { TypeAuthorization(type: $0.key, read: $0.value.read, share: $0.value.share) })
                }
                let (client, app) = clients[fuzzer.below(clients.count)]
                let (member, arguments) = fuzzer.call()
                let context = "call \(index + 1) (seed \(seed)): \(member) by \(app)"
                let reply: [DBusValue]
                do {
                    reply = try await client.connection.call(
                        HealthBusAPI.busName, path: HealthBusAPI.objectPath, interface: HealthBusAPI.interfaceName,
                        member: member, arguments: arguments, timeout: .seconds(30))
                } catch {
                    let name = (error as? DBusError)?.name ?? "\(error)"
                    let known =
                        name.hasPrefix("org.wearhouse.Error.") || name == DBusError.Name.unknownMethod
                        || name == "org.freedesktop.DBus.Error.InvalidArgs"
                    #expect(known, "\(context): \(error)")
                    #expect(name != HealthBusError.Name.failed, "\(context): \(error)")
                    if name == HealthBusError.Name.notAuthorized { expected[app, default: [:]][.save, default: 0] += 1 }
                    continue
                }
                let readable = { (type: String) in grants[app]?[type]?.read ?? false }
                Self.check(member, arguments, reply, app: app, readable: readable, context: context)
                fuzzer.remember(reply)
                if let operation = Self.operation(member, reply) {
                    expected[app, default: [:]][operation, default: 0] += 1
                }
                if member == "StatisticsCollection", reply.first?.arrayElements?.isEmpty ?? true {
                    // No buckets (the store was not asked), or buckets without results (it was, and logged it).
                    unsure[app, default: 0] += 1
                }
            }
            // The service still answers, and logged every call that reached the store.
            defer { for (client, _) in clients { Task { await client.close() } } }
            #expect(try await clients[0].client.identity().app == clients[0].app)
            let log = try await api.store.accessLog(limit: 1_000_000)
            for (app, operations) in expected {
                for (operation, count) in operations {
                    let logged = log.filter { $0.caller == .app(app) && $0.operation == operation }.count
                    if operation == .save || operation == .delete {
                        // Writes of a minute add up to one line per type (the SQLite engine's write log).
                        #expect(logged > 0, "\(app): \(count) \(operation) calls, none logged (seed \(seed))")
                    } else {
                        let most = count + (operation == .statistics ? unsure[app, default: 0] : 0)
                        #expect(
                            (count...most).contains(logged),
                            "\(app): \(count)-\(most) \(operation) calls, \(logged) logged (seed \(seed))")
                    }
                }
            }
        }
    }

    /// The access-log operation a successful call leaves, if it reached the store.
    static func operation(_ member: String, _ reply: [DBusValue]) -> AccessLogEntry.Operation? {
        switch member {
        case "QuerySamples", "Sources": .query
        case "Statistics": .statistics
        case "StatisticsCollection": (reply.first?.arrayElements?.isEmpty ?? true) ? nil : .statistics
        case "Changes": .changes
        case "SaveSamples": (reply.first?.arrayElements?.isEmpty ?? true) ? nil : .save
        case "DeleteSamples": .delete
        case "RequestAuthorization": .request
        default: nil
        }
    }

    /// No sample of a type the app may not read, unless the app wrote it; no statistic naming another source.
    static func check(
        _ member: String, _ arguments: [DBusValue], _ reply: [DBusValue], app: String, readable: (String) -> Bool,
        context: String
    ) {
        func own(_ source: String) -> Bool { source == app || source.hasPrefix(app + "[") }
        switch member {
        case "QuerySamples", "Changes":
            for value in reply.first?.arrayElements ?? [] {
                guard let sample = try? SampleWire.decode(value) else {
                    Issue.record("\(context): a sample that does not decode: \(value)")
                    continue
                }
                let type = value.structMembers?.first?.stringValue ?? ""
                #expect(readable(type) || own(sample.source.identifier), "\(context): \(type) of \(sample.source)")
            }
        case "Sources":
            let type = arguments.first?.stringValue ?? ""
            guard !readable(type) else { return }
            for value in reply.first?.arrayElements ?? [] {
                let source = value.structMembers?.first?.stringValue ?? ""
                #expect(own(source), "\(context): the sources of \(type) name \(source)")
            }
        case "Statistics", "StatisticsCollection":
            let type = arguments.first?.stringValue ?? ""
            guard !readable(type) else { return }
            let results = member == "Statistics" ? Array(reply.prefix(1)) : reply.first?.arrayElements ?? []
            for result in results {
                let fields = result.stringKeyedValue ?? [:]
                let named =
                    (fields["sources"]?.stringArrayValue ?? [])
                    + [fields["source"]?.stringValue].compactMap {
                        $0
                    }
                for source in named { #expect(own(source), "\(context): \(type) statistics name \(source)") }
            }
        default:
            break
        }
    }
}

/// Random calls: mostly well-typed, with values around the edges (unknown types, inverted ranges, huge limits,
/// other sources' ids), and now and then ill-typed or of no method.
struct Fuzzer {
    var random: SplitMix64
    /// Ids seen in replies, to delete or save under.
    var ids: [String] = []

    mutating func below(_ bound: Int) -> Int { Int(random.next() % UInt64(max(bound, 1))) }
    mutating func chance(_ probability: Double) -> Bool { random.unit() < probability }
    mutating func pick<T>(_ values: [T]) -> T { values[below(values.count)] }

    mutating func type() -> String {
        chance(0.05) ? pick(["", "heartrate", "mood", String(repeating: "x", count: 2_000)]) : pick(APIFuzzTests.types)
    }

    mutating func types() -> DBusValue {
        .strings((0..<pick([0, 1, 2, 3, 9, 70])).map { _ in type() })
    }

    mutating func time() -> Int64 {
        chance(0.05)
            ? pick([Int64.min, -1, 0, Int64.max, 253_402_300_800_000])
            : APIFuzzTests.noon + Int64(below(7_200)) * 1_000 - 3_600_000
    }

    mutating func strings() -> DBusValue {
        .strings((0..<pick([0, 1, 2, 1_001])).map { _ in pick(["org.wearhouse.gateway", "app1", "", "alice"]) })
    }

    mutating func options(_ keys: [String]) -> DBusValue {
        var entries: [String: DBusValue] = [:]
        for key in keys where chance(0.3) {
            switch key {
            case "from", "to", "anchor": entries[key] = .int64(time())
            case "limit", "maxHold": entries[key] = .int64(pick([-1, 0, 1, 10, 1_000_000]))
            case "sources", "devices", "subjects": entries[key] = strings()
            case "ascending", "strictStart", "strictEnd", "exact", "separateBySource":
                entries[key] = .boolean(chance(0.5))
            case "unit": entries[key] = .string(pick(["count/min", "count/s", "kg", "", "m"]))
            case "timeZone": entries[key] = .string(pick(["UTC", "Europe/Berlin", "Mars"]))
            case "cursor": entries[key] = .string(pick(["", "heartRate/a/1/2/x", "garbage"]))
            case "metadata": entries[key] = .vardict(["wasUserEntered": .boolean(true)])
            default: entries[key] = .string("?")
            }
        }
        if chance(0.05) { entries["bogus"] = .int32(1) }
        return .vardict(entries)
    }

    mutating func sample() -> DBusValue {
        let type = chance(0.9) ? pick(["heartRate", "stepCount", "stepCadence", "distanceWalkingRunning"]) : type()
        let start = time()
        let end = chance(0.1) ? start &- 1 : start &+ Int64(below(3)) * 60_000
        var properties: [String: DBusValue] = [:]
        if chance(0.1) {
            properties["id"] = .string(ids.isEmpty || chance(0.5) ? UUID().uuidString : pick(ids))
        }
        if chance(0.05) { properties["source"] = .string("org.wearhouse.gateway") }
        if chance(0.1) { properties["metadata"] = .vardict(["externalUUID": .string("e\(below(5))")]) }
        if chance(0.1) { properties["subject"] = .string("alice") }
        return .struct([
            .string(type), .int64(start), .int64(end), .double(chance(0.05) ? .nan : Double(below(200))),
            .string(chance(0.8) ? "" : pick(["count/min", "count", "km", "beats"])), .vardict(properties),
        ])
    }

    /// A method and its arguments.
    mutating func call() -> (String, [DBusValue]) {
        if chance(0.03) { return ("Frobnicate", []) }
        let member = pick(APIFuzzTests.methods)
        if chance(0.05) { return (member, [.int32(7), .string("x")]) }  // ill-typed
        let none = DBusValue.vardict([:])
        switch member {
        case "RequestAuthorization": return (member, [types(), types()])
        case "SaveSamples":
            return (member, [.array(HealthBusAPI.sampleType, (0..<pick([0, 1, 2, 5])).map { _ in sample() })])
        case "DeleteSamples":
            return (
                member, [.strings((0..<pick([0, 1, 3])).map { _ in ids.isEmpty || chance(0.3) ? "x" : pick(ids) })]
            )
        case "QuerySamples":
            return (
                member,
                [
                    .string(type()),
                    options([
                        "from", "to", "strictStart", "strictEnd", "sources", "devices", "subjects", "metadata",
                        "ascending", "limit", "cursor", "unit",
                    ]),
                ]
            )
        case "Statistics":
            return (
                member,
                [.string(type()), .int64(time()), .int64(time()), options(["unit", "sources", "exact", "maxHold"])]
            )
        case "StatisticsCollection":
            return (
                member,
                [
                    .string(type()), .int64(time()), .int64(time()), .string(pick(["15m", "1h", "1d", "1y", ""])),
                    options(["unit", "sources", "timeZone", "anchor", "separateBySource"]),
                ]
            )
        case "Changes":
            return (member, [.string(type()), .int64(pick([0, -1, 5, Int64.max])), .uint32(pick([0, 1, 10]))])
        case "Observe", "StopObserving": return (member, [types()])
        case "Sources": return (member, [.string(type())])
        case "SetPriority", "ResetPriority":
            let target = DBusValue.string(pick(["stepCount", "activeEnergyBurned", "default", "heartRate", "zz", ""]))
            guard member == "SetPriority" else { return (member, [target]) }
            let entries = (0..<pick([0, 1, 3])).map { _ in
                pick(["app", "app[]", "org.wearhouse.gateway[AA:BB]", "a,b", "", "x[*]", "[", "app[d"])
            }
            return (member, [target, .strings(entries), .string(pick(["gapFill", "exclude", "none"]))])
        default: return (member, chance(0.9) ? [] : [none])
        }
    }

    /// Keeps the ids a reply shows.
    mutating func remember(_ reply: [DBusValue]) {
        for value in reply.first?.arrayElements ?? [] {
            if let id = value.structMembers?.last?.stringKeyedValue?["id"]?.stringValue {
                if ids.count > 200 { ids.removeFirst(100) }
                ids.append(id)
            }
        }
    }
}
