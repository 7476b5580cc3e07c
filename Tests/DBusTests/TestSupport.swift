import Foundation
import TestSupport
import Testing

@testable import DBus

/// Two connections to one private bus: `server` serves objects, `client` calls them.
struct Peers {
    let bus: PrivateBus
    let server: DBusConnection
    let client: DBusConnection
    let serverName: String
    let clientName: String
}

/// Starts a private bus, connects two peers, runs `body`, then closes both and stops the bus.
func withPeers(_ body: (Peers) async throws -> Void) async throws {
    try await withPrivateBus { bus in
        let server = try await DBusConnection.connect(to: .address(bus.address))
        let client = try await DBusConnection.connect(to: .address(bus.address))
        let peers = Peers(
            bus: bus, server: server, client: client, serverName: await server.uniqueName,
            clientName: await client.uniqueName)
        do {
            try await body(peers)
        } catch {
            await client.close()
            await server.close()
            throw error
        }
        await client.close()
        await server.close()
    }
}

/// A pipe whose read end is wrapped in a ``DBusFileDescriptor``; the write end is returned raw (caller closes).
func makePipe() throws -> (read: DBusFileDescriptor, write: Int32) {
    var fds: [Int32] = [-1, -1]
    guard pipe(&fds) == 0 else { throw DBusTestError.pipeFailed }
    return (try DBusFileDescriptor(adopting: fds[0]), fds[1])
}

/// The raw echo object: answers any call with its own arguments.
let echoPath = "/org/example/echo"

func serveEcho(on connection: DBusConnection) async throws {
    _ = try await connection.addRawHandler(at: echoPath) { _, call in
        call.member == "Echo" ? .values(call.arguments) : nil
    }
}

/// Values of every D-Bus type, including the nested and empty shapes BlueZ uses.
enum Samples {
    static let basic: [DBusValue] = [
        .byte(0), .byte(255), .boolean(true), .boolean(false),
        .int16(.min), .int16(-1), .uint16(.max), .int32(.min), .int32(42), .uint32(.max),
        .int64(.min), .int64(.max), .uint64(.max), .double(3.141_592_653_589_793), .double(-0.5), .double(.infinity),
        .string(""), .string("héllo ✓ 💓"), .objectPath("/"), .objectPath("/org/bluez/hci0/dev_C0_FF_EE_00_11_22"),
        .signature(""), .signature("a{oa{sa{sv}}}"),
    ]

    static let containers: [DBusValue] = [
        .array(.int32, [.int32(1), .int32(-2), .int32(3)]),
        .array(.string, []),
        .bytes([]),
        .bytes([0, 1, 0x7F, 0x80, 0xFF]),
        .array(.array(.int32), [.array(.int32, []), .array(.int32, [.int32(7)])]),
        .array(.struct([.objectPath, .uint16]), [.struct([.objectPath("/a"), .uint16(1)])]),
        .struct([.int32(1), .string("two"), .variant(.double(3))]),
        .struct([.struct([.byte(1)]), .array(.variant, [])]),
        .vardict([:]),
        .vardict([
            "Address": .string("C0:FF:EE:00:11:22"), "RSSI": .int16(-60), "Connected": .boolean(true),
            "UUIDs": .strings(["0000180d-0000-1000-8000-00805f9b34fb"]),
            "ManufacturerData": .dictionary(
                key: .uint16, value: .variant,
                [
                    DBusDictEntry(key: .uint16(0x006B), value: .variant(.bytes([1, 2, 3])))
                ]),
        ]),
        .dictionary(
            key: .int32, value: .array(.string),
            [
                DBusDictEntry(key: .int32(1), value: .strings(["a", "b"])),
                DBusDictEntry(key: .int32(2), value: .strings([])),
            ]),
        .dictionary(key: .byte, value: .variant, []),
        .variant(.variant(.variant(.string("deep")))),
        .variant(.array(.variant, [.variant(.uint64(1)), .variant(.vardict(["x": .boolean(false)]))])),
        getManagedObjectsShape,
        .dictionary(key: .objectPath, value: DBusObjectTree.interfacesType, []),
    ]

    /// `a{oa{sa{sv}}}`, as GetManagedObjects returns it.
    static let getManagedObjectsShape = DBusValue.dictionary(
        key: .objectPath, value: DBusObjectTree.interfacesType,
        [
            DBusDictEntry(
                key: .objectPath("/org/bluez/hci0"),
                value: .dictionary(
                    key: .string, value: .dictionary(key: .string, value: .variant),
                    [
                        DBusDictEntry(
                            key: .string("org.bluez.Adapter1"),
                            value: .vardict(["Powered": .boolean(true), "Address": .string("00:11:22:33:44:55")])),
                        DBusDictEntry(key: .string("org.freedesktop.DBus.Properties"), value: .vardict([:])),
                    ])),
            DBusDictEntry(
                key: .objectPath("/org/bluez/hci0/dev_C0_FF_EE_00_11_22/service000c/char000d"),
                value: .dictionary(
                    key: .string, value: .dictionary(key: .string, value: .variant),
                    [
                        DBusDictEntry(
                            key: .string("org.bluez.GattCharacteristic1"),
                            value: .vardict([
                                "Value": .bytes([0x16, 0x48, 0x00, 0x04]), "Flags": .strings(["notify"]),
                                "Notifying": .boolean(false),
                            ]))
                    ])),
        ])

    static var all: [DBusValue] { basic + containers }
}

enum DBusTestError: Error {
    case pipeFailed
}
