import DBus
import Testing

@testable import FakeDevices

/// How the rig's peripheral host reads a central's connection from bluetoothd's signals
/// (``PeripheralHost/connectionChange(_:adapterPath:)``).
@Suite struct PeripheralHostSignalTests {
    static let adapter = "/org/bluez/hci3"
    static let central = "/org/bluez/hci3/dev_00_AA_01_02_00_02"

    static func interfacesAdded(_ path: String, _ interfaces: [String: [String: DBusValue]]) -> DBusSignal {
        DBusSignal(
            path: "/", interface: "org.freedesktop.DBus.ObjectManager", member: "InterfacesAdded",
            arguments: [
                .objectPath(path),
                .dictionary(
                    key: .string, value: .dictionary(key: .string, value: .variant),
                    interfaces.sorted { $0.key < $1.key }.map {
                        DBusDictEntry(key: .string($0.key), value: .vardict($0.value))
                    }),
            ])
    }

    static func propertiesChanged(_ path: String, _ interface: String, _ changed: [String: DBusValue]) -> DBusSignal {
        DBusSignal(
            path: path, interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged",
            arguments: [.string(interface), .vardict(changed), .strings([])])
    }

    @Test func aCentralsObjectMadeAnewAsItConnectsIsAConnection() {
        // bluetoothd dropped the central it kept nothing of; its next connection brings the object back connected.
        let signal = Self.interfacesAdded(
            Self.central,
            [
                "org.bluez.Device1": ["Address": .string("00:AA:01:02:00:02"), "Connected": .boolean(true)],
                "org.freedesktop.DBus.Introspectable": [:],
            ])
        let change = PeripheralHost.connectionChange(signal, adapterPath: Self.adapter)
        #expect(change?.device == Self.central)
        #expect(change?.connected == true)
    }

    @Test func connectedChangesAndRemovalsAreConnectionsTooAndNothingElseIs() {
        let connected = PeripheralHost.connectionChange(
            Self.propertiesChanged(Self.central, "org.bluez.Device1", ["Connected": .boolean(true)]),
            adapterPath: Self.adapter)
        #expect(connected?.device == Self.central && connected?.connected == true)
        let removed = PeripheralHost.connectionChange(
            DBusSignal(
                path: "/", interface: "org.freedesktop.DBus.ObjectManager", member: "InterfacesRemoved",
                arguments: [
                    .objectPath(Self.central), .strings(["org.freedesktop.DBus.Properties", "org.bluez.Device1"]),
                ]),
            adapterPath: Self.adapter)
        #expect(removed?.device == Self.central && removed?.connected == false)
        let nothing = [
            // discovered, not connected
            Self.interfacesAdded(Self.central, ["org.bluez.Device1": ["Connected": .boolean(false)]]),
            // the central's GATT objects as the sensor's adapter resolves them
            Self.interfacesAdded(Self.central + "/service0008", ["org.bluez.GattService1": [:]]),
            // a device of another adapter
            Self.interfacesAdded(
                "/org/bluez/hci31/dev_00_AA_01_02_00_02", ["org.bluez.Device1": ["Connected": .boolean(true)]]),
            // another property
            Self.propertiesChanged(Self.central, "org.bluez.Device1", ["RSSI": .int16(-40)]),
            // the adapter itself
            Self.propertiesChanged(Self.adapter, "org.bluez.Adapter1", ["Powered": .boolean(false)]),
        ]
        for signal in nothing { #expect(PeripheralHost.connectionChange(signal, adapterPath: Self.adapter) == nil) }
    }
}
