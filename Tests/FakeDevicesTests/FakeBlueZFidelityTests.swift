import DBus
import FakeDevices
import Foundation
import GATT
import Glibc
import TestSupport
import Testing

/// FakeBlueZ where a real client (bleak, `Tests/BlueZClients/bleak_fakebluez.py`) found it unlike bluetoothd 5.66:
/// advertising while discovering, the end of discovery, a sensor that needs pairing, writes, read options, the
/// CCCD, AcquireWrite and the discovery filter (`docs/bluez.md`, F10-F17).
@Suite(.serialized) struct FakeBlueZFidelityTests {
    static let strapPath = "/org/bluez/hci0/dev_C0_FF_EE_00_00_01"
    static let footpodPath = "/org/bluez/hci0/dev_C0_FF_EE_00_00_02"
    static let lockedPath = "/org/bluez/hci0/dev_C0_FF_EE_00_00_05"
    static let hrmUUID = "00002a37-0000-1000-8000-00805f9b34fb"
    static let locationUUID = "00002a38-0000-1000-8000-00805f9b34fb"
    static let controlPointUUID = "00002a39-0000-1000-8000-00805f9b34fb"
    static let manufacturerUUID = "00002a29-0000-1000-8000-00805f9b34fb"
    static let characteristic = "org.bluez.GattCharacteristic1"
    static let adapter = "org.bluez.Adapter1"

    static let scenario = FakeBlueZScenario(peripherals: [
        .init(kind: .chestStrap, address: "C0:FF:EE:00:00:01", seed: 7, known: true),
        .init(kind: .footpod, address: "C0:FF:EE:00:00:02", seed: 3),
        .init(
            kind: .chestStrap, address: "C0:FF:EE:00:00:05", seed: 2, faults: .init(requiresPairing: true), known: true),
    ])

    static func rssiChanges(_ signals: [DBusSignal], at path: String) -> Int {
        signals.filter { $0.changes("RSSI", at: path) }.count
    }

    @Test func aDeviceAdvertisesAgainOnEveryIntervalWhileAFilterIsSet() async throws {
        try await FakeBlueZFixture.run(Self.scenario) { fixture in
            try await fixture.call(
                "/org/bluez/hci0", Self.adapter, "SetDiscoveryFilter", [.vardict(["Transport": .string("le")])])
            try await fixture.call("/org/bluez/hci0", Self.adapter, "StartDiscovery")
            try await fixture.log.wait("footpod found") { $0.contains { $0.adds("org.bluez.Device1") } }
            // The known strap, already served, is reported by RSSI.
            try await fixture.log.wait("strap's RSSI") { Self.rssiChanges($0, at: Self.strapPath) == 1 }
            fixture.log.clear()
            // One advertisement every 500 ms of the clock, and each one is a PropertiesChanged(RSSI), the RSSI
            // unchanged: a client that starts listening late still hears the sensor.
            for _ in 0..<4 { await fixture.fake.advance(by: FakeBlueZ.advertisingInterval) }
            try await fixture.log.wait("four adverts each") {
                Self.rssiChanges($0, at: Self.footpodPath) == 4 && Self.rssiChanges($0, at: Self.strapPath) == 4
            }
            // Less than an interval later: nothing new.
            await fixture.fake.advance(by: .milliseconds(100))
            try await fixture.call("/org/bluez/hci0", Self.adapter, "StopDiscovery")
            let signals = try await fixture.log.wait("Discovering=false") {
                $0.contains { $0.changes("Discovering", to: .boolean(false)) }
            }
            #expect(Self.rssiChanges(signals, at: Self.footpodPath) == 4)
        }
    }

    @Test func withoutAFilterAnUnchangedRSSIIsReportedOncePerDiscovery() async throws {
        try await FakeBlueZFixture.run(Self.scenario) { fixture in
            try await fixture.call("/org/bluez/hci0", Self.adapter, "StartDiscovery")
            try await fixture.log.wait("footpod found") { $0.contains { $0.adds("org.bluez.Device1") } }
            try await fixture.log.wait("strap's RSSI") { Self.rssiChanges($0, at: Self.strapPath) == 1 }
            for _ in 0..<4 { await fixture.fake.advance(by: FakeBlueZ.advertisingInterval) }
            try await fixture.call("/org/bluez/hci0", Self.adapter, "StopDiscovery")
            let signals = try await fixture.log.wait("Discovering=false") {
                $0.contains { $0.changes("Discovering", to: .boolean(false)) }
            }
            // bluetoothd reports RSSI moves of 8 dBm or more only; the simulated RSSI does not move.
            #expect(Self.rssiChanges(signals, at: Self.strapPath) == 1)
        }
    }

    @Test func stopDiscoveryInvalidatesRSSIAndTemporaryDevicesGoAfterTheirTimeout() async throws {
        try await FakeBlueZFixture.run(Self.scenario) { fixture in
            try await fixture.call(
                "/org/bluez/hci0", Self.adapter, "SetDiscoveryFilter", [.vardict(["Transport": .string("le")])])
            try await fixture.call("/org/bluez/hci0", Self.adapter, "StartDiscovery")
            try await fixture.log.wait("footpod found") { $0.contains { $0.adds("org.bluez.Device1") } }
            try await fixture.call("/org/bluez/hci0", Self.adapter, "StopDiscovery")
            let signals = try await fixture.log.wait("Discovering=false") {
                $0.contains { $0.changes("Discovering", to: .boolean(false)) }
            }
            // RSSI is invalidated on every device the run found, before Discovering=false (src/adapter.c
            // discovery_cleanup).
            let stop = try #require(signals.firstIndex { $0.changes("Discovering", to: .boolean(false)) })
            for path in [Self.strapPath, Self.footpodPath] {
                let invalidation = signals.firstIndex {
                    $0.member == "PropertiesChanged" && $0.path == path
                        && $0.arguments.last?.stringArrayValue == ["RSSI"]
                }
                #expect(invalidation.map { $0 < stop } == true, "\(path)")
            }
            var objects = try await fixture.client.managedObjects(destination: "org.bluez")
            #expect(objects[Self.footpodPath]?["org.bluez.Device1"]?["RSSI"] == nil)
            #expect(objects[Self.footpodPath] != nil)
            // The footpod, only found by discovery, goes 30 s after its last advertisement; known devices stay.
            fixture.log.clear()
            await fixture.fake.advance(by: .seconds(29))
            await fixture.fake.advance(by: .seconds(1))
            try await fixture.log.wait("footpod removed") {
                $0.contains { $0.member == "InterfacesRemoved" && $0.arguments.first == .objectPath(Self.footpodPath) }
            }
            objects = try await fixture.client.managedObjects(destination: "org.bluez")
            #expect(objects[Self.footpodPath] == nil)
            #expect(objects[Self.strapPath] != nil)
        }
    }

    @Test func aConnectedDiscoveredDeviceIsNoLongerTemporary() async throws {
        try await FakeBlueZFixture.run(Self.scenario) { fixture in
            try await fixture.call("/org/bluez/hci0", Self.adapter, "StartDiscovery")
            try await fixture.log.wait("footpod found") { $0.contains { $0.adds("org.bluez.Device1") } }
            try await fixture.call("/org/bluez/hci0", Self.adapter, "StopDiscovery")
            try await fixture.connectAndResolve(Self.footpodPath)
            try await fixture.call(Self.footpodPath, "org.bluez.Device1", "Disconnect")
            await fixture.fake.advance(by: .seconds(60))
            let objects = try await fixture.client.managedObjects(destination: "org.bluez")
            #expect(objects[Self.footpodPath]?["org.bluez.Device1"] != nil)
        }
    }

    @Test func aSensorThatNeedsPairingRefusesNotificationsUntilPaired() async throws {
        try await FakeBlueZFixture.run(Self.scenario) { fixture in
            try await fixture.connectAndResolve(Self.lockedPath)
            let hrm = try await fixture.characteristicPath(Self.hrmUUID, of: Self.lockedPath)
            let refused = await #expect(throws: DBusError.self) {
                try await fixture.call(hrm, Self.characteristic, "StartNotify")
            }
            #expect(refused?.name == "org.bluez.Error.NotPermitted")
            #expect(refused?.message == "Not paired")
            fixture.log.clear()
            await fixture.fake.advance(by: .seconds(5))
            #expect(await fixture.fake.deliveredNotifications(of: "C0:FF:EE:00:00:05").isEmpty)
            try await fixture.call(Self.lockedPath, "org.bluez.Device1", "Pair")
            try await fixture.call(hrm, Self.characteristic, "StartNotify")
            await fixture.fake.advance(by: .seconds(5))
            try await fixture.log.wait("notifications") { $0.contains { $0.changes("Value", at: hrm) } }
        }
    }

    @Test func aCommandIsSentWhateverTheFlagsAndOtherWriteTypesAreNotSupported() async throws {
        try await FakeBlueZFixture.run(Self.scenario) { fixture in
            try await fixture.connectAndResolve(Self.strapPath)
            let controlPoint = try await fixture.characteristicPath(Self.controlPointUUID, of: Self.strapPath)
            let location = try await fixture.characteristicPath(Self.locationUUID, of: Self.strapPath)
            // The control point has `write` only; a command to it goes out and is answered at once.
            try await fixture.call(
                controlPoint, Self.characteristic, "WriteValue", [.bytes([1]), .vardict(["type": .string("command")])])
            try await fixture.call(
                location, Self.characteristic, "WriteValue", [.bytes([1]), .vardict(["type": .string("command")])])
            let unsupported = await #expect(throws: DBusError.self) {
                try await fixture.call(location, Self.characteristic, "WriteValue", [.bytes([1]), .vardict([:])])
            }
            #expect(unsupported?.name == "org.bluez.Error.NotSupported")
            let bogus = await #expect(throws: DBusError.self) {
                try await fixture.call(
                    controlPoint, Self.characteristic, "WriteValue",
                    [.bytes([1]), .vardict(["type": .string("bogus")])])
            }
            #expect(bogus?.name == "org.bluez.Error.NotSupported")
            let badOffset = await #expect(throws: DBusError.self) {
                try await fixture.call(
                    controlPoint, Self.characteristic, "WriteValue", [.bytes([1]), .vardict(["offset": .string("1")])])
            }
            #expect(badOffset?.name == "org.bluez.Error.InvalidArguments")
            // A request to a characteristic without `write` gets the peripheral's refusal.
            let request = await #expect(throws: DBusError.self) {
                try await fixture.call(
                    location, Self.characteristic, "WriteValue", [.bytes([1]), .vardict(["type": .string("request")])])
            }
            #expect(request?.name == "org.bluez.Error.NotPermitted")
            #expect(request?.message == "Write not permitted")
        }
    }

    @Test func readValueHonoursTheOffsetAndChecksItsType() async throws {
        try await FakeBlueZFixture.run(Self.scenario) { fixture in
            try await fixture.connectAndResolve(Self.strapPath)
            let name = try await fixture.characteristicPath(Self.manufacturerUUID, of: Self.strapPath)
            let whole = try #require(
                try await fixture.call(name, Self.characteristic, "ReadValue", [.vardict([:])]).first?.bytesValue)
            #expect(whole.count > 2)
            let tail = try await fixture.call(
                name, Self.characteristic, "ReadValue", [.vardict(["offset": .uint16(2)])])
            #expect(tail.first?.bytesValue == Array(whole.dropFirst(2)))
            let end = try await fixture.call(
                name, Self.characteristic, "ReadValue", [.vardict(["offset": .uint16(UInt16(whole.count))])])
            #expect(end.first?.bytesValue == [])
            let past = await #expect(throws: DBusError.self) {
                try await fixture.call(
                    name, Self.characteristic, "ReadValue", [.vardict(["offset": .uint16(UInt16(whole.count + 1))])])
            }
            // 5.66 names ATT 0x07 InvalidArguments "Invalid offset" (seen in the VM, traffic-bluez-5.66.txt).
            #expect(past?.name == "org.bluez.Error.InvalidArguments")
            #expect(past?.message == "Invalid offset")
            let wrongType = await #expect(throws: DBusError.self) {
                try await fixture.call(name, Self.characteristic, "ReadValue", [.vardict(["offset": .uint32(2)])])
            }
            #expect(wrongType?.name == "org.bluez.Error.InvalidArguments")
            #expect(wrongType?.message == "Invalid arguments in method call")
        }
    }

    @Test func theCCCDReadsWhatStartNotifyWrote() async throws {
        try await FakeBlueZFixture.run(Self.scenario) { fixture in
            try await fixture.connectAndResolve(Self.strapPath)
            let hrm = try await fixture.characteristicPath(Self.hrmUUID, of: Self.strapPath)
            let objects = try await fixture.client.managedObjects(destination: "org.bluez")
            let cccd = try #require(objects.keys.first { $0.hasPrefix(hrm + "/desc") })
            let descriptor = "org.bluez.GattDescriptor1"
            #expect(try await fixture.call(cccd, descriptor, "ReadValue", [.vardict([:])]).first?.bytesValue == [0, 0])
            try await fixture.call(hrm, Self.characteristic, "StartNotify")
            #expect(try await fixture.call(cccd, descriptor, "ReadValue", [.vardict([:])]).first?.bytesValue == [1, 0])
            try await fixture.log.wait("descriptor Value") { $0.contains { $0.changes("Value", to: .bytes([1, 0])) } }
            try await fixture.call(hrm, Self.characteristic, "StopNotify")
            #expect(try await fixture.call(cccd, descriptor, "ReadValue", [.vardict([:])]).first?.bytesValue == [0, 0])
            let write = await #expect(throws: DBusError.self) {
                try await fixture.call(cccd, descriptor, "WriteValue", [.bytes([1, 0]), .vardict([:])])
            }
            #expect(write?.name == "org.bluez.Error.NotPermitted")
        }
    }

    @Test func theDiscoveryFilterIsCheckedAsBlueZChecksIt() async throws {
        try await FakeBlueZFixture.run(Self.scenario) { fixture in
            let bad: [[String: DBusValue]] = [
                ["Transport": .string("bogus")], ["UUIDs": .strings(["zz"])], ["RSSI": .int32(-60)],
                ["RSSI": .int16(-200)], ["Pathloss": .uint16(200)], ["RSSI": .int16(-60), "Pathloss": .uint16(10)],
                ["DuplicateData": .string("yes")], ["Bogus": .boolean(true)],
            ]
            for filter in bad {
                let error = await #expect(throws: DBusError.self, "\(filter)") {
                    try await fixture.call("/org/bluez/hci0", Self.adapter, "SetDiscoveryFilter", [.vardict(filter)])
                }
                #expect(error?.name == "org.bluez.Error.InvalidArguments", "\(filter)")
            }
            try await fixture.call(
                "/org/bluez/hci0", Self.adapter, "SetDiscoveryFilter",
                [
                    .vardict([
                        "Transport": .string("le"),
                        "UUIDs": .strings(["180d", "00001814-0000-1000-8000-00805f9b34fb"]),
                        "RSSI": .int16(-90), "DuplicateData": .boolean(false), "Pattern": .string(""),
                    ])
                ])
            try await fixture.call("/org/bluez/hci0", Self.adapter, "SetDiscoveryFilter", [.vardict([:])])
        }
    }

    @Test func acquireWriteHandsOutASocketWhoseDatagramsAreCommands() async throws {
        let daemon = try await PrivateBus.start()
        defer { daemon.stop() }
        let echo = EchoPeripheral()
        let fake = try await FakeBlueZ.start(
            on: .address(daemon.address), scenario: FakeBlueZScenario(peripherals: []), peripherals: [echo])
        let client = try await DBusConnection.connect(to: .address(daemon.address))
        do {
            let log = SignalLog.collecting(try await client.subscribe(to: DBusMatchRule(sender: await fake.uniqueName)))
            let fixture = FakeBlueZFixture(daemon: daemon, fake: fake, client: client, log: log)
            let path = FakeBlueZ.devicePath(echo.identity.address)
            try await fixture.connectAndResolve(path)
            let echoPath = try await fixture.characteristicPath(EchoPeripheral.uuid.description, of: path)
            let objects = try await client.managedObjects(destination: "org.bluez")
            #expect(objects[echoPath]?[Self.characteristic]?["WriteAcquired"] == .boolean(false))
            try await fixture.call(echoPath, Self.characteristic, "StartNotify")
            let reply = try await fixture.call(echoPath, Self.characteristic, "AcquireWrite", [.vardict([:])])
            let socket = try #require(reply.first?.fileDescriptorValue)
            #expect(reply.last == .uint16(23))
            try await log.wait("WriteAcquired=true") { $0.contains { $0.changes("WriteAcquired", to: .boolean(true)) } }
            let twice = await #expect(throws: DBusError.self) {
                try await fixture.call(echoPath, Self.characteristic, "AcquireWrite", [.vardict([:])])
            }
            #expect(twice?.name == "org.bluez.Error.NotPermitted")
            #expect(twice?.message == "Write acquired")
            let sent = [UInt8]([7, 8, 9]).withUnsafeBytes { send(socket.rawValue, $0.baseAddress, $0.count, 0) }
            #expect(sent == 3)
            await fake.advance(by: .milliseconds(100))
            // The peripheral took the command and echoed it as a notification.
            try await log.wait("echo") { $0.contains { $0.changes("Value", to: .bytes([7, 8, 9]), at: echoPath) } }
            await fake.dropConnection(of: echo.identity.address)
            try await log.wait("WriteAcquired=false") {
                $0.contains { $0.changes("WriteAcquired", to: .boolean(false)) }
            }
            var poller = pollfd(fd: socket.rawValue, events: Int16(POLLIN), revents: 0)
            #expect(poll(&poller, 1, 0) == 1 && poller.revents & Int16(POLLHUP) != 0)
            // Disconnected: nothing to acquire.
            let strapless = await #expect(throws: DBusError.self) {
                try await fixture.call(echoPath, Self.characteristic, "AcquireWrite", [.vardict([:])])
            }
            #expect(strapless?.name == "org.bluez.Error.Failed")
            #expect(strapless?.message == "Not connected")
        } catch {
            await client.close()
            await fake.stop()
            throw error
        }
        await client.close()
        await fake.stop()
    }

    @Test func acquireWriteIsNotSupportedWithoutWriteWithoutResponse() async throws {
        try await FakeBlueZFixture.run(Self.scenario) { fixture in
            try await fixture.connectAndResolve(Self.strapPath)
            let controlPoint = try await fixture.characteristicPath(Self.controlPointUUID, of: Self.strapPath)
            let error = await #expect(throws: DBusError.self) {
                try await fixture.call(controlPoint, Self.characteristic, "AcquireWrite", [.vardict([:])])
            }
            #expect(error?.name == "org.bluez.Error.NotSupported")
        }
    }
}

/// A peripheral with one characteristic that takes write commands and notifies back what it was sent.
struct EchoPeripheral: SimulatedPeripheral {
    static let uuid = BluetoothUUID(high: 0x1234_5678_0000_1000, low: 0x8000_0080_5F9B_34FB)
    static let service = BluetoothUUID(high: 0x1234_0000_0000_1000, low: 0x8000_0080_5F9B_34FB)
    let identity = PeripheralIdentity(address: "C0:FF:EE:00:00:0E", name: "Echo", advertisedServices: [service])
    let services = [
        ServiceDefinition(
            uuid: service,
            characteristics: [CharacteristicDefinition(uuid: uuid, properties: [.writeWithoutResponse, .notify])])
    ]
    var requiresPairing: Bool { false }
    var groundTruth = GroundTruth()
    private var queued: [[UInt8]] = []

    mutating func read(_ characteristic: BluetoothUUID) throws(ATTError) -> [UInt8] { throw .readNotPermitted }

    mutating func write(_ value: [UInt8], to characteristic: BluetoothUUID) throws(ATTError) {
        queued.append(value)
    }

    mutating func advance(to time: Duration) -> [PeripheralEmission] {
        defer { queued = [] }
        return queued.map { PeripheralEmission(characteristic: Self.uuid, value: $0, at: time, isIndication: false) }
    }
}
