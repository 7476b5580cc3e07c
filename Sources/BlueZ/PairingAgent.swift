public import DBus
internal import Synchronization

/// The `org.bluez.Agent1` a headless gateway serves (`docs/bluez.md`, R15): registered (the service's as the
/// default agent, a one-shot command's as its own only) with capability `NoInputNoOutput` (LE sensors pair Just
/// Works; `DisplayYesNo` for numeric comparison, whose passkey it shows), it accepts confirmation and authorization
/// only for devices being paired right now (``allow(_:)``), and refuses everything else with
/// `org.bluez.Error.Rejected`. PIN codes and passkeys are never guessed. bluetoothd calls it asynchronously while
/// our `Pair` call waits, which is why every D-Bus call here is asynchronous.
public final class PairingAgent: Sendable {
    /// Where the agent is served.
    public static let path = "/org/wearhouse/agent"
    /// `org.bluez.Agent1` as bluetoothd calls it.
    public static let interface = DBusInterface(
        name: "org.bluez.Agent1",
        methods: [
            .init("Release"),
            .init("RequestPinCode", inputs: [.init("device", .objectPath)], outputs: [.init("pincode", .string)]),
            .init("DisplayPinCode", inputs: [.init("device", .objectPath), .init("pincode", .string)]),
            .init("RequestPasskey", inputs: [.init("device", .objectPath)], outputs: [.init("passkey", .uint32)]),
            .init(
                "DisplayPasskey",
                inputs: [.init("device", .objectPath), .init("passkey", .uint32), .init("entered", .uint16)]),
            .init("RequestConfirmation", inputs: [.init("device", .objectPath), .init("passkey", .uint32)]),
            .init("RequestAuthorization", inputs: [.init("device", .objectPath)]),
            .init("AuthorizeService", inputs: [.init("device", .objectPath), .init("uuid", .string)]),
            .init("Cancel"),
        ])

    let bus: DBusConnection
    let capability: String
    let isDefault: Bool
    let onPasskey: (@Sendable (_ device: String, _ passkey: UInt32, _ kind: PasskeyKind) -> Void)?
    private let state = Mutex(State())

    /// Why bluetoothd shows the agent a passkey.
    public enum PasskeyKind: Sendable {
        /// `RequestConfirmation`: numeric comparison; the sensor shows the same number and asks its wearer.
        case confirm
        /// `DisplayPasskey`: the wearer types it on the sensor.
        case display
    }

    private struct State {
        var allowed: Set<String> = []
        var exported = false
        var calls: [String] = []
    }

    /// An agent on `bus` (not yet registered). `capability` is `NoInputNoOutput` for a gateway; `DisplayYesNo`
    /// (`wearhouse pair --confirm-passkey`) makes LE Secure Connections pair a sensor with a display by numeric
    /// comparison: the passkey of a device being paired goes to `onPasskey` (to be shown) and is accepted.
    /// `isDefault` asks bluetoothd to make it the default agent, the one asked about pairings nobody called `Pair`
    /// for (a bonded sensor asking for security again): the service's is; a one-shot command's is not, since
    /// bluetoothd asks the agent of the client that called `Pair` about its pairing, and taking the default from the
    /// service (or another agent on the machine) would leave it with an agent that exits within seconds.
    public init(
        bus: DBusConnection, capability: String = "NoInputNoOutput", isDefault: Bool = true,
        onPasskey: (@Sendable (_ device: String, _ passkey: UInt32, _ kind: PasskeyKind) -> Void)? = nil
    ) {
        self.bus = bus
        self.capability = capability
        self.isDefault = isDefault
        self.onPasskey = onPasskey
    }

    /// Serves the object (once) and registers it with bluetoothd (as the default agent when `isDefault`). Called
    /// again after every bluetoothd restart (R2). Failures (no bluetoothd yet) are ignored: the next restart
    /// registers it.
    public func register() async {
        let needsExport = state.withLock { state in
            defer { state.exported = true }
            return !state.exported
        }
        if needsExport {
            let handler: DBusMethodHandler = { [weak self] _, call in
                self?.handle(call) ?? .error(name: "org.bluez.Error.Rejected", message: "Agent gone")
            }
            do {
                try await bus.export(
                    Self.path, interfaces: [DBusExportedInterface(Self.interface, methodHandler: handler)])
            } catch {
                state.withLock { $0.exported = false }
                return
            }
        }
        let arguments: [DBusValue] = [.objectPath(Self.path), .string(capability)]
        _ = try? await bus.call(
            BlueZObjectCache.serviceName, path: "/org/bluez", interface: "org.bluez.AgentManager1",
            member: "RegisterAgent", arguments: arguments, timeout: .seconds(5))
        guard isDefault else { return }
        _ = try? await bus.call(
            BlueZObjectCache.serviceName, path: "/org/bluez", interface: "org.bluez.AgentManager1",
            member: "RequestDefaultAgent", arguments: [.objectPath(Self.path)], timeout: .seconds(5))
    }

    /// Unregisters from bluetoothd (at stop).
    public func unregister() async {
        _ = try? await bus.call(
            BlueZObjectCache.serviceName, path: "/org/bluez", interface: "org.bluez.AgentManager1",
            member: "UnregisterAgent", arguments: [.objectPath(Self.path)], timeout: .seconds(2))
    }

    /// Accepts requests about the device at `path` until ``disallow(_:)``.
    public func allow(_ path: String) { state.withLock { _ = $0.allowed.insert(path) } }

    public func disallow(_ path: String) { state.withLock { _ = $0.allowed.remove(path) } }

    /// The methods bluetoothd called, in order (`RequestConfirmation`, ...), for tests and diagnostics.
    public var calls: [String] { state.withLock { $0.calls } }

    func handle(_ call: DBusMethodCall) -> DBusReply {
        let device = call.arguments.first?.objectPathValue
        let allowed = state.withLock { state in
            state.calls.append(call.member)
            return device.map { state.allowed.contains($0) } ?? false
        }
        let rejected = DBusReply.error(name: "org.bluez.Error.Rejected", message: "Not a sensor being paired")
        let passkey = call.arguments.dropFirst().first?.uint32Value
        switch call.member {
        case "DisplayPasskey":
            // Called again as the wearer types (the third argument counts the digits): shown once.
            if allowed, let device, let passkey, call.arguments.dropFirst(2).first?.uint16Value ?? 0 == 0 {
                onPasskey?(device, passkey, .display)
            }
            return .empty
        case "Release", "Cancel", "DisplayPinCode":
            return .empty
        case "RequestConfirmation":
            guard allowed else { return rejected }
            if let device, let passkey { onPasskey?(device, passkey, .confirm) }
            return .empty
        case "RequestAuthorization", "AuthorizeService":
            return allowed ? .empty : rejected
        case "RequestPinCode", "RequestPasskey":
            return .error(name: "org.bluez.Error.Rejected", message: "This gateway has no way to enter a code")
        default:
            return .error(name: "org.bluez.Error.Rejected", message: "Unknown request")
        }
    }
}
