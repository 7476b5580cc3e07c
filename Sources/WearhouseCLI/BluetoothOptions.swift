import BlueZ
import DBus
import Foundation
import GATT
import Gateway

/// What the Bluetooth commands share: the options naming bluetoothd's bus and the adapter, and connecting to it.
enum BluetoothOptions {
    /// `--bus <address>`: bluetoothd's bus, the system bus unless given.
    static func bus<Options: CommandOptions>(
        _ path: any WritableKeyPath<Options, DBusAddress> & Sendable
    ) -> Option<Options> {
        .value(
            "bus", value: "address", path,
            help: "The D-Bus bus of bluetoothd: system (honours DBUS_SYSTEM_BUS_ADDRESS), session, or an address.",
            format: { address in
                switch address {
                case .system: "system"
                case .session: "session"
                case .address(let text): text
                }
            }
        ) { text throws(UsageError) in
            switch text {
            case "system": return .system
            case "session": return .session
            default:
                guard text.contains(":") else { throw UsageError("--bus: \(echo(text)) is not a D-Bus address") }
                return .address(text)
            }
        }
    }

    /// `--bus <address>` as text, for the commands that hand it to the configuration (`bluetooth.bus`).
    static func bus<Options: CommandOptions>(
        _ path: any WritableKeyPath<Options, String?> & Sendable
    ) -> Option<Options> {
        .text(
            "bus", value: "address", path,
            help: "The D-Bus bus of bluetoothd: system, session, or an address (default: the configuration's).")
    }

    /// `--adapter <address>`.
    static func adapter<Options: CommandOptions>(
        _ path: any WritableKeyPath<Options, String?> & Sendable
    ) -> Option<Options> {
        .text("adapter", value: "address", path, help: "The adapter to use (default: the first powered).")
    }

    /// Connects to bluetoothd's bus and starts the client (with the pairing agent: `NoInputNoOutput`, or
    /// `DisplayYesNo` showing passkeys on `console` when `confirmPasskey`; not the default agent, which stays the
    /// service's: bluetoothd asks the caller's own agent about the pairing it asked for).
    static func connect(
        _ address: DBusAddress, console: Console, confirmPasskey: Bool = false
    ) async -> (DBusConnection, BlueZCentral)? {
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
            guard confirmPasskey else { return (bus, try await BlueZCentral.start(on: bus, agentIsDefault: false)) }
            let central = try await BlueZCentral.start(
                on: bus, agentCapability: "DisplayYesNo", agentIsDefault: false,
                onPasskey: { device, passkey, kind in
                    let digits = String(passkey)
                    let code = String(repeating: "0", count: max(0, 6 - digits.count)) + digits
                    switch kind {
                    case .confirm:
                        console.err("passkey \(code): check that the sensor shows the same, and confirm there\n")
                    case .display:
                        console.err("passkey \(code): type it on the sensor\n")
                    }
                })
            return (bus, central)
        } catch {
            console.error("cannot talk to bluetoothd on \(address): \(error)")
            await bus.close()
            return nil
        }
    }
}

/// Location names for help texts.
let locationNames = "chest, wrist, finger, hand, ear-lobe, foot, other, in-shoe, top-of-shoe, hip, ..."
