import FakeDevices
import GATT
import Support
import Testing

/// Each injected fault surfaces with the error kind and the events a session must react to.
@Suite(.timeLimit(.minutes(1))) struct FakeCentralFaultTests {
    static let script = PeripheralScript(kind: .chestStrap, address: "C0:FF:EE:00:00:01", seed: 1)
    static let id = PeripheralID(adapter: FakeCentral.defaultAdapter.address, address: script.address)

    static func discovered(_ script: PeripheralScript = script) async throws -> FakeCentral {
        let central = FakeCentral(peripherals: [script.makePeripheral()])
        try await central.startDiscovery(services: [], on: nil)
        return central
    }

    /// The error `body` throws, or `nil`.
    static func failure(_ body: () async throws(CentralError) -> Void) async -> CentralError? {
        do {
            try await body()
            return nil
        } catch {
            return error
        }
    }

    @Test func connectFaultsSurfaceWithBlueZsErrors() async throws {
        let central = try await Self.discovered()
        var events = central.events().makeAsyncIterator()
        central.injectConnectFault(.abortByLocal, for: Self.id)
        central.injectConnectFault(.inProgress, for: Self.id)
        central.injectConnectFault(.failed("le-connection-timeout"), for: Self.id)
        let abort = await Self.failure { () throws(CentralError) in
            try await central.connect(Self.id, timeout: .seconds(5))
        }
        #expect(abort?.kind == .transient && abort?.detail == "org.bluez.Error.Failed: le-connection-abort-by-local")
        let busy = await Self.failure { () throws(CentralError) in
            try await central.connect(Self.id, timeout: .seconds(5))
        }
        #expect(busy?.kind == .inProgress)
        let timeout = await Self.failure { () throws(CentralError) in
            try await central.connect(Self.id, timeout: .seconds(5))
        }
        #expect(timeout?.kind == .transient && timeout?.detail.contains("le-connection-timeout") == true)
        // Failed connects change nothing; the next one works.
        try await central.connect(Self.id, timeout: .seconds(5))
        #expect(
            await next(2, from: &events) == [
                .connectionChanged(Self.id, connected: true), .servicesResolved(Self.id, resolved: true),
            ])
    }

    @Test func aConnectWithoutReplyTimesOutOnTheManualClock() async throws {
        let central = try await Self.discovered()
        central.injectConnectFault(.noReply, for: Self.id)
        async let attempt = Self.failure { () throws(CentralError) in
            try await central.connect(Self.id, timeout: .seconds(30))
        }
        while central.pendingConnects().isEmpty { await Task.yield() }
        let second = await Self.failure { () throws(CentralError) in
            try await central.connect(Self.id, timeout: .seconds(5))
        }
        #expect(second?.kind == .inProgress)
        central.advance(by: .seconds(29))
        #expect(central.pendingConnects() == [Self.id])
        central.advance(by: .seconds(1))
        #expect(await attempt?.kind == .timeout)
        #expect(central.pendingConnects().isEmpty)

        // Disconnect cancels a pending connect.
        central.injectConnectFault(.noReply, for: Self.id)
        async let cancelled = Self.failure { () throws(CentralError) in
            try await central.connect(Self.id, timeout: .seconds(30))
        }
        while central.pendingConnects().isEmpty { await Task.yield() }
        try await central.disconnect(Self.id)
        #expect(await cancelled?.kind == .transient)
    }

    @Test func adapterRemovedAndReAdded() async throws {
        let central = try await Self.discovered()
        try await central.pair(Self.id, timeout: .seconds(30))
        var events = central.events().makeAsyncIterator()
        central.removeAdapter(FakeCentral.defaultAdapter.address)
        #expect(
            await next(3, from: &events) == [
                .servicesResolved(Self.id, resolved: false), .connectionChanged(Self.id, connected: false),
                .adapterRemoved(FakeCentral.defaultAdapter.address),
            ])
        #expect(try await central.adapters().isEmpty)
        let missing = await Self.failure { () throws(CentralError) in
            try await central.connect(Self.id, timeout: .seconds(5))
        }
        #expect(missing?.kind == .deviceMissing)
        let noAdapter = await Self.failure { () throws(CentralError) in
            try await central.startDiscovery(services: [], on: FakeCentral.defaultAdapter.address)
        }
        #expect(noAdapter?.kind == .unavailable)

        central.addAdapter(FakeCentral.defaultAdapter.address)
        let back = await next(2, from: &events)
        #expect(back.first == .adapterAdded(FakeCentral.defaultAdapter))
        guard case .discovered(let info) = back.last else {
            Issue.record("the paired device comes back with the adapter: \(back)")
            return
        }
        #expect(info.id == Self.id && info.paired && !info.connected)
        try await central.connect(Self.id, timeout: .seconds(5))
        #expect(await next(2, from: &events).count == 2)
    }

    @Test func stackGoesAwayAndComesBack() async throws {
        let central = try await Self.discovered()
        try await central.connect(Self.id, timeout: .seconds(5))
        let table = try await central.characteristics(of: Self.id)
        let hrm = try characteristic(.heartRateMeasurement, in: table)
        try await central.startNotifications(hrm, of: Self.id, mode: .properties)
        var events = central.events().makeAsyncIterator()

        central.stopStack()
        // bluetoothd sends nothing per device when it dies.
        #expect(await next(1, from: &events) == [.stackUnavailable])
        let unavailable = await Self.failure { () throws(CentralError) in _ = try await central.adapters() }
        #expect(unavailable?.kind == .unavailable)
        let read = await Self.failure { () throws(CentralError) in _ = try await central.read(hrm, of: Self.id) }
        #expect(read?.kind == .unavailable)
        central.advance(by: .seconds(5))

        central.startStack()
        #expect(await next(1, from: &events) == [.stackAvailable])
        // An unpaired device is forgotten with bluetoothd's memory: rediscover, reconnect, resubscribe.
        #expect(try await central.knownPeripherals().isEmpty)
        try await central.startDiscovery(services: [.heartRateService], on: nil)
        try await central.connect(Self.id, timeout: .seconds(5))
        _ = await next(3, from: &events)
        central.advance(by: .seconds(2))
        #expect(central.deliveredNotifications(of: Self.id).isEmpty)
        try await central.startNotifications(hrm, of: Self.id, mode: .properties)
        central.advance(by: .seconds(2))
        #expect(central.deliveredNotifications(of: Self.id).count == 2)
        central.dropConnection(Self.id)
        #expect(
            await next(4, from: &events).suffix(2) == [
                .servicesResolved(Self.id, resolved: false), .connectionChanged(Self.id, connected: false),
            ])
    }

    @Test func aStrapThatNeedsPairingRefusesUntilPaired() async throws {
        var script = Self.script
        script.faults = PeripheralFaults(requiresPairing: true)
        let central = try await Self.discovered(script)
        var events = central.events().makeAsyncIterator()
        try await central.connect(Self.id, timeout: .seconds(5))
        let table = try await central.characteristics(of: Self.id)
        let location = try characteristic(.bodySensorLocation, in: table)
        let refused = await Self.failure { () throws(CentralError) in _ = try await central.read(location, of: Self.id)
        }
        #expect(refused?.kind == .authentication)
        let hrm = try characteristic(.heartRateMeasurement, in: table)
        let subscribe = await Self.failure { () throws(CentralError) in
            try await central.startNotifications(hrm, of: Self.id, mode: .properties)
        }
        #expect(subscribe?.kind == .authentication)
        // FakeBlueZ's answer, after BlueZ 5.66 (docs/bluez.md, F10).
        #expect(subscribe?.detail == "org.bluez.Error.NotPermitted: Not paired")
        #expect(refused?.detail == "org.bluez.Error.NotPermitted: Not paired")

        central.injectPairingFailure(for: Self.id)
        let failed = await Self.failure { () throws(CentralError) in
            try await central.pair(Self.id, timeout: .seconds(30))
        }
        #expect(failed?.kind == .authentication)
        try await central.pair(Self.id, timeout: .seconds(30))
        #expect(try await central.read(location, of: Self.id) == [1])
        #expect(try await central.knownPeripherals().first?.paired == true)
        #expect(await next(2, from: &events).count == 2)
    }

    @Test func servicesChangeAfterAFirmwareUpdate() async throws {
        var script = Self.script
        script.faults = PeripheralFaults(firmwareUpdateAt: .seconds(10), updatedFirmwareRevision: "2.0.0")
        let central = try await Self.discovered(script)
        try await central.connect(Self.id, timeout: .seconds(5))
        let before = try await central.characteristics(of: Self.id)
        var events = central.events().makeAsyncIterator()
        central.advance(by: .seconds(11))
        #expect(
            await next(2, from: &events) == [
                .servicesResolved(Self.id, resolved: false), .servicesResolved(Self.id, resolved: true),
            ])
        let after = try await central.characteristics(of: Self.id)
        #expect(Set(after.map(\.uuid)) == Set(before.map(\.uuid)))
        let stale = try characteristic(.firmwareRevisionString, in: before)
        let old = await Self.failure { () throws(CentralError) in _ = try await central.read(stale, of: Self.id) }
        #expect(old?.kind == .deviceMissing)
        let fresh = try await central.read(characteristic(.firmwareRevisionString, in: after), of: Self.id)
        #expect(try FirmwareRevisionString(decoding: fresh).value == "2.0.0")
    }

    @Test func aSilentPeripheralStopsDelivering() async throws {
        var script = Self.script
        script.faults = PeripheralFaults(silentAfter: .seconds(3))
        let central = try await Self.discovered(script)
        try await central.connect(Self.id, timeout: .seconds(5))
        let table = try await central.characteristics(of: Self.id)
        try await central.startNotifications(
            characteristic(.heartRateMeasurement, in: table), of: Self.id, mode: .properties)
        central.advance(by: .seconds(60))
        #expect(central.deliveredNotifications(of: Self.id).count == 3)
        #expect(await central.statistics().notifications == 3)
    }
}

/// One connect in flight per adapter, and control points that need indications on.
@Suite(.timeLimit(.minutes(1))) struct FakeCentralSerialisationTests {
    @Test func connectsWaitForThePendingOneOnTheSameAdapter() async throws {
        let first = PeripheralScript(kind: .chestStrap, address: "C0:FF:EE:00:00:01")
        let second = PeripheralScript(kind: .footpod, address: "C0:FF:EE:00:00:02")
        let central = FakeCentral(peripherals: [first.makePeripheral(), second.makePeripheral()])
        let adapter = FakeCentral.defaultAdapter.address
        let a = PeripheralID(adapter: adapter, address: first.address)
        let b = PeripheralID(adapter: adapter, address: second.address)
        try await central.startDiscovery(services: [], on: nil)
        var events = central.events().makeAsyncIterator()
        central.injectConnectFault(.noReply, for: a)
        async let hung = FakeCentralFaultTests.failure { () throws(CentralError) in
            try await central.connect(a, timeout: .seconds(20))
        }
        while central.pendingConnects().isEmpty { await Task.yield() }
        async let waiting = FakeCentralFaultTests.failure { () throws(CentralError) in
            try await central.connect(b, timeout: .seconds(60))
        }
        while central.queuedConnects().isEmpty { await Task.yield() }
        central.advance(by: .seconds(20))
        #expect(await hung?.kind == .timeout)
        #expect(await waiting == nil)
        #expect(
            await next(2, from: &events) == [
                .connectionChanged(b, connected: true), .servicesResolved(b, resolved: true),
            ])
    }

    @Test func scControlPointNeedsIndicationsOn() async throws {
        let script = PeripheralScript(kind: .footpod, address: "F0:0D:00:00:00:02")
        let central = FakeCentral(peripherals: [script.makePeripheral()])
        let id = PeripheralID(adapter: FakeCentral.defaultAdapter.address, address: script.address)
        try await central.startDiscovery(services: [], on: nil)
        try await central.connect(id, timeout: .seconds(5))
        let sc = try characteristic(.scControlPoint, in: try await central.characteristics(of: id))
        let refused = await FakeCentralFaultTests.failure { () throws(CentralError) in
            try await central.write([0x01, 0, 0, 0, 0], to: sc, of: id, withResponse: true)
        }
        #expect(refused?.detail.contains("0x81") == true)
        try await central.startNotifications(sc, of: id, mode: .properties)
        try await central.write(SCControlPoint.setCumulativeValue(1234).encoded(), to: sc, of: id, withResponse: true)
        let answer = try #require(central.deliveredNotifications(of: id).last)
        #expect(
            try SCControlPoint(decoding: answer.value) == .response(requestOpCode: 1, value: .success, parameter: []))
        let rsc = try characteristic(.rscMeasurement, in: try await central.characteristics(of: id))
        try await central.startNotifications(rsc, of: id, mode: .acquired)
        central.advance(by: .seconds(2))
        let measurement = try RSCMeasurement(decoding: try #require(central.deliveredNotifications(of: id).last).value)
        #expect(measurement.totalDistance.map { $0 >= 1234 } == true)
    }
}
