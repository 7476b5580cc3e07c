import Foundation
import Health
import HealthBus
import SQLiteStore
import Support
import TestSupport
import Testing

/// The real service on a private bus, called by programs running as other users (busctl, gdbus and the Python
/// example under `setpriv`): each sees exactly what its grants allow.
@Suite(.serialized, .enabled(if: MultiUser.available, MultiUser.skipReason))
struct MultiUserTests {
    static let script = repositoryRoot.appendingPathComponent("examples/todays_heart_rate.py").path

    /// Under the shipped unit's settings (a service user that is not root, the unit's capabilities and user
    /// namespace), another user's callers are named by what the kernel says: the executable whatever `argv[0]` says
    /// (`exec -a`), and a script by its resolved path however it was started.
    @Test func callersAreNamedByTheKernelUnderTheUnitsSettings() async throws {
        let (alice, serviceUser) = (MultiUser.users[0], MultiUser.users[1])
        let service = try await RunningService.start(serviceUser: serviceUser)
        defer { service.stop() }
        let busctl = [
            "/usr/bin/busctl", "call", "org.wearhouse.Health1", "/org/wearhouse/Health1", "org.wearhouse.Health1",
            "Identity",
        ]
        let plain = try service.run(busctl, as: alice)
        #expect(plain.stdout == "su \"uid\(alice):/usr/bin/busctl\" \(alice)\n", "\(plain.stderr)")
        let disguised = try service.run(
            ["/bin/bash", "-c", "exec -a /usr/bin/other " + busctl.joined(separator: " ")], as: alice)
        #expect(disguised.stdout == plain.stdout, "\(disguised.stderr)")

        let scripts = service.directory.appendingPathComponent("scripts")
        try FileManager.default.createDirectory(at: scripts, withIntermediateDirectories: true)
        try """
        import dbus
        api = dbus.SystemBus().get_object("org.wearhouse.Health1", "/org/wearhouse/Health1")
        print(api.Identity(dbus_interface="org.wearhouse.Health1")[0])

        """.write(to: scripts.appendingPathComponent("probe.py"), atomically: true, encoding: .utf8)
        let relative = try service.run(
            ["/bin/sh", "-c", "cd '\(scripts.path)' && exec /usr/bin/python3 ./probe.py"], as: alice)
        #expect(relative.stdout == "uid\(alice):\(scripts.path)/probe.py\n", "\(relative.stderr)")
        let absolute = try service.run(["/usr/bin/python3", scripts.path + "/probe.py"], as: alice)
        #expect(absolute.stdout == relative.stdout, "\(absolute.stderr)")
    }

    @Test func twoUsersSeeExactlyWhatTheirGrantsAllow() async throws {
        let service = try await RunningService.start()
        defer { service.stop() }
        let (alice, bob) = (MultiUser.users[0], MultiUser.users[1])
        let aliceApp = "uid\(alice):/usr/bin/busctl"
        let bobApp = "uid\(bob):/usr/bin/busctl"
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        // The gateway stored three heart-rate samples.
        let owner = try SQLiteHealthStore(path: service.storePath)
        let gateway = Source(identifier: "org.wearhouse.gateway")
        _ = try await owner.save(
            (1...3).map { index in
                let at = Instant(milliseconds: now - 3_000 + Int64(index) * 500)
                return QuantitySample(type: .heartRate, start: at, end: at, value: 60, source: gateway)
            }, as: .owner)

        // Both ask; both requests wait for the owner.
        for (uid, app) in [(alice, aliceApp), (bob, bobApp)] {
            let asked = try service.busctl(
                "RequestAuthorization", ["asas", "1", "heartRate", "1", "heartRate"], as: uid)
            #expect(asked.stdout == "sb \"\(app)\" true\n", "\(asked.stderr)")
        }
        let pending = try service.wearhouse(["apps", "--json"]).stdout
        #expect(pending.contains("\"app\":\"\(aliceApp)\"") && pending.contains("\"pending_read\":[\"heartRate\"]"))
        // The owner lets Alice read and write heart rate, and Bob only write it.
        #expect(try service.wearhouse(["grant", aliceApp, "--read", "heartRate", "--write", "heartRate"]).status == 0)
        #expect(try service.wearhouse(["grant", bobApp, "--write", "heartRate"]).status == 0)

        // Both write heart rate.
        for (uid, offset) in [(alice, 400), (bob, 300)] {
            let saved = try service.busctl(
                "SaveSamples",
                ["a(sxxdsa{sv})", "1", "heartRate", "\(now - Int64(offset))", "\(now - Int64(offset))", "70", "", "0"],
                as: uid)
            #expect(saved.stdout == "as 1 \"inserted\"\n", "\(saved.stderr)")
        }
        // A denied writer gets NotAuthorized: Bob's busctl for steps, Bob's gdbus (an app without grants) at all.
        let steps = try service.busctl(
            "SaveSamples", ["a(sxxdsa{sv})", "1", "stepCount", "\(now - 60_000)", "\(now)", "80", "count", "0"], as: bob
        )
        #expect(steps.status != 0)
        #expect(steps.stderr.contains("may not write stepCount; call RequestAuthorization"))
        let gdbus = try service.run(
            [
                "/usr/bin/gdbus", "call", "--system", "--dest", "org.wearhouse.Health1", "--object-path",
                "/org/wearhouse/Health1", "--method", "org.wearhouse.Health1.SaveSamples",
                "[('heartRate', int64 \(now), int64 \(now), 70.0, 'count/min', @a{sv} {})]",
            ], as: bob)
        #expect(gdbus.status != 0)
        #expect(gdbus.stderr.contains("org.wearhouse.Error.NotAuthorized"), "\(gdbus.stderr)")
        #expect(gdbus.stderr.contains("wearhouse grant 'uid\(bob):/usr/bin/gdbus' --write heartRate"))

        // Alice reads everything; Bob, without read permission, only his own sample, and no error.
        let aliceReads = try service.busctl("QuerySamples", ["sa{sv}", "heartRate", "0"], as: alice)
        #expect(aliceReads.stdout.hasPrefix("a(sxxdsa{sv})s 5 "), "\(aliceReads.stderr)")
        let bobReads = try service.busctl("QuerySamples", ["sa{sv}", "heartRate", "0"], as: bob)
        #expect(bobReads.status == 0)
        #expect(bobReads.stdout.hasPrefix("a(sxxdsa{sv})s 1 "), "\(bobReads.stderr)")
        #expect(bobReads.stdout.contains("\"source\" s \"\(bobApp)\""))
        #expect(!bobReads.stdout.contains("org.wearhouse.gateway"))

        // The Python example as both users: Alice's may read heart rate, Bob's request is denied.
        let since = ["--since", "\(now - 60_000)"]
        let aliceScript = "uid\(alice):\(Self.script)"
        let bobScript = "uid\(bob):\(Self.script)"
        for uid in [alice, bob] {
            let asked = try service.run(["/usr/bin/python3", Self.script, "--request"] + since, as: uid)
            #expect(asked.status == 0, "\(asked.stderr)")
            #expect(asked.stdout.contains("app: uid\(uid):\(Self.script)"))
            #expect(asked.stdout.contains("asked the store's owner"))
        }
        #expect(try service.wearhouse(["grant", aliceScript, "--read", "heartRate"]).status == 0)
        #expect(try service.wearhouse(["revoke", bobScript]).status == 0)
        let directory = service.directory
        let aliceOutput = directory.appendingPathComponent("alice-follow.txt")
        let bobOutput = directory.appendingPathComponent("bob-follow.txt")
        let followers = [
            try service.background(
                ["/usr/bin/python3", Self.script, "--follow", "4"] + since, as: alice, output: aliceOutput),
            try service.background(
                ["/usr/bin/python3", Self.script, "--follow", "4"] + since, as: bob, output: bobOutput),
        ]
        defer { for follower in followers { follower.signal(SIGTERM) } }
        try await waitFor { text(aliceOutput).contains("observing") && text(bobOutput).contains("observing") }
        #expect(text(aliceOutput).contains("heart rate today: 5 samples"))
        #expect(text(bobOutput).contains("no heart rate today"))
        // The gateway stores a new sample: Alice's follower hears of it, Bob's does not.
        let latest = Instant(milliseconds: now)
        _ = try await owner.save(
            [QuantitySample(type: .heartRate, start: latest, end: latest, value: 88, source: gateway)], as: .owner)
        try await waitFor { text(aliceOutput).contains("added: heartRate 1 sample(s)") }
        #expect(text(aliceOutput).contains("88 count/min"))
        let ends = followers.map { $0.wait() }
        #expect(ends.allSatisfy { $0.succeeded }, "\(text(aliceOutput))\n\(text(bobOutput))")
        #expect(!text(bobOutput).contains("added:"), "\(text(bobOutput))")

        // The access log shows each call, by app.
        let log = try await owner.accessLog(limit: 200)
        func entries(_ app: String) -> [String] {
            log.filter { $0.caller == .app(app) }.reversed().map {
                "\($0.operation.rawValue) \($0.type ?? "-") \($0.sampleCount)\($0.denied ? " denied" : "")"
            }
        }
        #expect(entries(aliceApp) == ["request - 2", "save heartRate 1", "query heartRate 5"])
        #expect(
            entries(bobApp) == [
                "request - 2", "save heartRate 1", "save stepCount 0 denied", "query heartRate 1",
            ])
        #expect(entries("uid\(bob):/usr/bin/gdbus") == ["save heartRate 0 denied"])
        #expect(entries(aliceScript).contains("observe heartRate 0"))
        #expect(entries(aliceScript).contains("statistics heartRate 5"))
        #expect(entries(bobScript).contains("statistics heartRate 0"))
        #expect(entries(bobScript).contains("observe heartRate 0"))
        #expect(service.stop() == 0)
    }

    /// Every `$` (an app, as UID 1000 or another user) and `#` (the owner) line of docs/app-api.md's console
    /// blocks, in order, against a fresh store; output as printed (exactly when run as UID 1000, whose ids the
    /// page shows; otherwise the reply signatures and error messages' starts).
    @Test func theDocumentedExamplesWorkAsPrinted() async throws {
        let service = try await RunningService.start()
        defer { service.stop() }
        let steps = try ConsoleExamples(page: "docs/app-api.md").sections.flatMap { $0 }
        #expect(steps.count >= 10)
        try ConsoleExamples.check(steps, on: service, as: MultiUser.users[0])
    }
}

/// `busctl introspect` on the real service (no root needed).
@Suite(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/busctl"), "needs busctl"))
struct ServiceIntrospectionTests {
    @Test func busctlIntrospectMatchesTheShippedXML() async throws {
        let service = try await RunningService.start()
        defer { service.stop() }
        let xml = try service.run([
            "/usr/bin/busctl", "introspect", "--xml-interface", "org.wearhouse.Health1", "/org/wearhouse/Health1",
        ])
        #expect(xml.status == 0, "\(xml.stderr)")
        let served = try InterfaceShape(xml: xml.stdout)
        let shipped = try InterfaceShape(contentsOf: repositoryRoot.appendingPathComponent(shippedXML))
        #expect(served == shipped, "served:\n\(served)\nshipped:\n\(shipped)")
        let table = try service.run([
            "/usr/bin/busctl", "introspect", "org.wearhouse.Health1", "/org/wearhouse/Health1",
        ])
        #expect(table.stdout.contains(".QuerySamples") && table.stdout.contains(".SamplesAdded"))
        #expect(service.stop() == 0)
    }
}

private func text(_ url: URL) -> String {
    (try? String(contentsOf: url, encoding: .utf8)) ?? ""
}

/// Waits (up to 10 s) until `condition` holds, or records an issue.
private func waitFor(_ condition: () -> Bool) async throws {
    let deadline = ContinuousClock.now + .seconds(10)
    while !condition() {
        guard ContinuousClock.now < deadline else {
            Issue.record("condition not met in 10 s")
            return
        }
        try await Task.sleep(for: .milliseconds(50))
    }
}
