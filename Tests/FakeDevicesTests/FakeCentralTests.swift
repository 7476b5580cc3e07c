import FakeDevices
import GATT
import Support
import Testing

/// Reads the next `count` events (the fake yields them synchronously, so they are already buffered).
func next(_ count: Int, from events: inout AsyncStream<CentralEvent>.Iterator) async -> [CentralEvent] {
    var out: [CentralEvent] = []
    for _ in 0..<count {
        guard let event = await events.next() else { break }
        out.append(event)
    }
    return out
}

func characteristic(_ uuid: BluetoothUUID, in table: [CharacteristicInfo]) throws -> CharacteristicInfo {
    try #require(table.first { $0.uuid == uuid })
}

/// Discovery, connection order, notifications and GATT operations through the fake central.
@Suite(.timeLimit(.minutes(1))) struct FakeCentralTests {
    static let strapScript = PeripheralScript(
        kind: .chestStrap, address: "C0:FF:EE:00:00:01", seed: 1, batteryDrainInterval: .seconds(2))
    static let podScript = PeripheralScript(kind: .footpod, address: "F0:0D:00:00:00:02", seed: 2)

    static func make() -> (FakeCentral, strap: PeripheralID, pod: PeripheralID) {
        let central = FakeCentral()
        let strap = central.add(strapScript)
        let pod = central.add(podScript)
        return (central, strap, pod)
    }

    @Test func discoverConnectSubscribeTwoPeripherals() async throws {
        let (central, strap, pod) = Self.make()
        var events = central.events().makeAsyncIterator()

        // Connecting to a device the stack has never seen fails: rediscover.
        await #expect(throws: CentralError.self) { try await central.connect(strap, timeout: .seconds(5)) }
        try await central.startDiscovery(services: [.heartRateService], on: nil)
        let heartOnly = await next(1, from: &events)
        guard case .discovered(let info) = heartOnly.first else {
            throw CentralError(.other, operation: "", detail: "")
        }
        #expect(info.id == strap && info.name == Self.strapScript.name && info.services == [.heartRateService])
        try await central.startDiscovery(services: [], on: FakeCentral.defaultAdapter.address)
        #expect(await next(2, from: &events).count == 2)
        #expect(try await central.knownPeripherals().map(\.id) == [strap, pod])

        try await central.connect(strap, timeout: .seconds(5))
        #expect(
            await next(2, from: &events) == [
                .connectionChanged(strap, connected: true), .servicesResolved(strap, resolved: true),
            ])
        try await central.connect(pod, timeout: .seconds(5))
        #expect(
            await next(2, from: &events) == [
                .connectionChanged(pod, connected: true), .servicesResolved(pod, resolved: true),
            ])
        let strapTable = try await central.characteristics(of: strap)
        let podTable = try await central.characteristics(of: pod)
        #expect(strapTable.first?.handle == "/org/bluez/hci0/dev_C0_FF_EE_00_00_01/service0001/char0002")
        try await central.startNotifications(
            characteristic(.heartRateMeasurement, in: strapTable), of: strap, mode: .properties)
        try await central.startNotifications(characteristic(.rscMeasurement, in: podTable), of: pod, mode: .properties)

        central.advance(by: .seconds(10))
        let delivered = await next(20, from: &events).compactMap { event -> GATTNotification? in
            guard case .notification(let notification) = event else { return nil }
            return notification
        }
        #expect(delivered.count == 20)
        #expect(zip(delivered, delivered.dropFirst()).allSatisfy { $0.receivedAt <= $1.receivedAt })
        #expect(Set(delivered.map(\.peripheral)) == [strap, pod])
        // The battery notified (it drains every 2 s) but nobody subscribed: nothing arrived.
        #expect(delivered.allSatisfy { $0.characteristic != .batteryLevel })
        let sent = try #require(central.groundTruth(of: strap)).emissions
        #expect(sent.contains { $0.characteristic == .batteryLevel })
        #expect(
            central.deliveredNotifications(of: strap).map(\.value)
                == sent.filter { $0.characteristic == .heartRateMeasurement }.map(\.value))
        let statistics = await central.statistics()
        #expect(statistics.notifications == 20 && statistics.droppedEvents == 0)
        #expect(statistics.events > statistics.notifications)

        try await central.disconnect(strap)
        #expect(
            await next(2, from: &events) == [
                .servicesResolved(strap, resolved: false), .connectionChanged(strap, connected: false),
            ])
        // Only the connected footpod delivers now; nothing else is in the stream before the sentinel.
        central.advance(by: .seconds(3))
        let afterDisconnect = await next(3, from: &events)
        #expect(
            afterDisconnect.allSatisfy {
                if case .notification(let n) = $0 { n.peripheral == pod } else { false }
            })
        central.stopStack()
        #expect(await next(1, from: &events) == [.stackUnavailable])
    }

    @Test func identicalConsecutivePayloadsAreDeliveredTwice() async throws {
        let script = PeripheralScript(
            kind: .chestStrap, address: "C0:FF:EE:00:00:03", faults: PeripheralFaults(duplicateEvery: 1))
        let central = FakeCentral(peripherals: [script.makePeripheral()])
        let id = PeripheralID(adapter: FakeCentral.defaultAdapter.address, address: script.address)
        try await central.startDiscovery(services: [], on: nil)
        try await central.connect(id, timeout: .seconds(5))
        let table = try await central.characteristics(of: id)
        try await central.startNotifications(
            characteristic(.heartRateMeasurement, in: table), of: id, mode: .properties)
        central.advance(by: .seconds(5))
        let values = central.deliveredNotifications(of: id).map(\.value)
        #expect(values.count == 10)
        for index in stride(from: 0, to: 10, by: 2) { #expect(values[index] == values[index + 1]) }
    }

    @Test func aCommandGoesOutWhateverTheFlagsAsFakeBlueZSendsIt() async throws {
        let (central, strap, _) = Self.make()
        try await central.startDiscovery(services: [], on: nil)
        try await central.connect(strap, timeout: .seconds(5))
        let table = try await central.characteristics(of: strap)
        // Neither has write-without-response: BlueZ 5.66 sends the command anyway (docs/bluez.md, F13).
        try await central.write(
            [0x01], to: characteristic(.heartRateControlPoint, in: table), of: strap, withResponse: false)
        try await central.write(
            [0x01], to: characteristic(.bodySensorLocation, in: table), of: strap, withResponse: false)
        let request = await #expect(throws: CentralError.self) {
            try await central.write(
                [0x01], to: characteristic(.bodySensorLocation, in: table), of: strap, withResponse: true)
        }
        #expect(request?.kind == .notPermitted)
    }

    @Test func readsDeviceInformationAndAnswersControlPoints() async throws {
        let (central, strap, pod) = Self.make()
        try await central.startDiscovery(services: [], on: nil)
        try await central.connect(strap, timeout: .seconds(5))
        try await central.connect(pod, timeout: .seconds(5))
        let table = try await central.characteristics(of: strap)
        let truth = DeviceInformationProfile(script: Self.strapScript)
        let manufacturer = try await central.read(characteristic(.manufacturerNameString, in: table), of: strap)
        #expect(try ManufacturerNameString(decoding: manufacturer).value == truth.manufacturer)
        let serial = try await central.read(characteristic(.serialNumberString, in: table), of: strap)
        #expect(try SerialNumberString(decoding: serial).value == truth.serialNumber)
        let pnp = try await central.read(characteristic(.pnpID, in: table), of: strap)
        #expect(try PnPID(decoding: pnp) == truth.pnpID)
        let location = try await central.read(characteristic(.bodySensorLocation, in: table), of: strap)
        #expect(try BodySensorLocation(decoding: location) == .chest)

        let hrm = try characteristic(.heartRateMeasurement, in: table)
        await #expect(throws: CentralError.self) { try await central.read(hrm, of: strap) }
        do {
            _ = try await central.read(hrm, of: strap)
        } catch {
            #expect(error.kind == .notPermitted)
        }
        let controlPoint = try characteristic(.heartRateControlPoint, in: table)
        try await central.write([0x01], to: controlPoint, of: strap, withResponse: true)
        do {
            try await central.write([0x02], to: controlPoint, of: strap, withResponse: true)
            Issue.record("0x02 is not a Heart Rate Control Point command")
        } catch {
            #expect(error.kind == .other && error.detail.contains("0x80"))
        }

        // SC Control Point: the answer comes as an indication, delivered once subscribed.
        let podTable = try await central.characteristics(of: pod)
        let sc = try characteristic(.scControlPoint, in: podTable)
        try await central.startNotifications(sc, of: pod, mode: .properties)
        try await central.write(
            SCControlPoint.requestSupportedSensorLocations.encoded(), to: sc, of: pod, withResponse: true)
        let answer = try #require(central.deliveredNotifications(of: pod).last)
        #expect(try SCControlPoint(decoding: answer.value).supportedSensorLocations == Footpod.supportedLocations)
        do {
            try await central.startNotifications(sc, of: pod, mode: .acquired)
            Issue.record("AcquireNotify on an indicate-only characteristic")
        } catch {
            #expect(error.kind == .notPermitted)
        }
    }

    @Test func eventsThatDoNotFitAreDroppedAndCounted() async throws {
        let central = FakeCentral(peripherals: [Self.strapScript.makePeripheral()], eventBufferCapacity: 4)
        let id = PeripheralID(adapter: FakeCentral.defaultAdapter.address, address: Self.strapScript.address)
        let stream = central.events()
        try await central.startDiscovery(services: [], on: nil)
        try await central.connect(id, timeout: .seconds(5))
        let table = try await central.characteristics(of: id)
        try await central.startNotifications(
            characteristic(.heartRateMeasurement, in: table), of: id, mode: .properties)
        central.advance(by: .seconds(10))
        let statistics = await central.statistics()
        #expect(statistics.notifications == 10)
        #expect(statistics.droppedEvents == 3 + 10 - 4)
        var iterator = stream.makeAsyncIterator()
        #expect(await next(4, from: &iterator).count == 4)
    }
    @Test func trustRemoveAndUnsubscribe() async throws {
        let (central, strap, _) = Self.make()
        let first = central.events()
        var second = central.events().makeAsyncIterator()
        try await central.startDiscovery(services: [.heartRateService], on: nil)
        try await central.connect(strap, timeout: .seconds(5))
        try await central.setTrusted(strap, true)
        #expect(try await central.knownPeripherals().first?.trusted == true)
        let hrm = try characteristic(.heartRateMeasurement, in: try await central.characteristics(of: strap))
        try await central.startNotifications(hrm, of: strap, mode: .acquired)
        central.advance(by: .seconds(2))
        try await central.stopNotifications(hrm, of: strap)
        central.advance(by: .seconds(5))
        let delivered = central.deliveredNotifications(of: strap)
        #expect(delivered.count == 2)
        let wallStart: Int64 = 1_780_000_000_000_000
        for notification in delivered {
            let wall = Double(notification.receivedAt.wallMicroseconds - wallStart)
            #expect(abs(wall - notification.receivedAt.monotonic / .microseconds(1)) < 1)
        }

        try await central.remove(strap)
        let expected: [CentralEvent] = [
            .discovered(
                PeripheralInfo(id: strap, name: Self.strapScript.name, services: [.heartRateService], rssi: -60)),
            .connectionChanged(strap, connected: true), .servicesResolved(strap, resolved: true),
            .notification(delivered[0]), .notification(delivered[1]),
            .servicesResolved(strap, resolved: false), .connectionChanged(strap, connected: false),
            .peripheralRemoved(strap),
        ]
        // Both streams saw the same events.
        #expect(await next(expected.count, from: &second) == expected)
        var firstIterator = first.makeAsyncIterator()
        #expect(await next(expected.count, from: &firstIterator) == expected)
        #expect(try await central.knownPeripherals().isEmpty)
        let gone = await FakeCentralFaultTests.failure { () throws(CentralError) in
            try await central.connect(strap, timeout: .seconds(5))
        }
        #expect(gone?.kind == .deviceMissing)
    }
}
