import BlueZ
import DBus
import Foundation
import GATT
import Gateway

/// The options the Bluetooth commands share: which bus bluetoothd is on, which adapter, how long to wait.
enum BluetoothOptions {
    static let bus = (
        name: "bus", value: "address",
        help: "The D-Bus bus of bluetoothd: system (default, honours DBUS_SYSTEM_BUS_ADDRESS), session, or an address."
    )
    static let adapter = (name: "adapter", value: "address", help: "The adapter to use (default: the first powered).")

    struct Invalid: Error {
        var message: String
    }

    /// `--bus` as a D-Bus address (the system bus by default).
    static func address(_ arguments: Arguments) throws(Invalid) -> DBusAddress {
        switch arguments.option("bus") {
        case nil, "system": return .system
        case "session": return .session
        case let text?:
            guard text.contains(":") else { throw Invalid(message: "--bus: '\(text)' is not a D-Bus address") }
            return .address(text)
        }
    }

    /// `--name seconds` as a duration, or `fallback`.
    static func seconds(_ arguments: Arguments, _ name: String, default fallback: Duration?) throws(Invalid)
        -> Duration?
    {
        guard let text = arguments.option(name) else { return fallback }
        guard let seconds = Double(text), seconds > 0, seconds < 1e9 else {
            throw Invalid(message: "--\(name) must be a positive number of seconds, not '\(text)'")
        }
        return .milliseconds(Int64(seconds * 1000))
    }

    /// Connects to bluetoothd's bus and starts the client (with the pairing agent).
    static func connect(_ address: DBusAddress, console: Console) async -> (DBusConnection, BlueZCentral)? {
        let bus: DBusConnection
        do {
            bus = try await DBusConnection.connect(to: address)
        } catch {
            console.error(
                "cannot connect to the D-Bus \(address): \(error)",
                hint: "Is dbus running? 'wearhouse doctor' checks the usual suspects.")
            return nil
        }
        do {
            return (bus, try await BlueZCentral.start(on: bus))
        } catch {
            console.error("cannot talk to bluetoothd on \(address): \(error)")
            await bus.close()
            return nil
        }
    }
}

/// Location names for help texts.
let locationNames = "chest, wrist, finger, hand, ear-lobe, foot, other, in-shoe, top-of-shoe, hip, ..."
