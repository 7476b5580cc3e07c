internal import DBus

/// Pair, with agent callbacks as bluetoothd makes them.
extension FakeBlueZ {
    /// The passkey FakeBlueZ asks agents to confirm.
    public static let pairingPasskey: UInt32 = 123_456

    /// Connects if needed, then pairs. With no agent for the caller (its own, else the default one) or a
    /// `NoInputNoOutput` agent, pairing is Just Works and needs no callback (5.66 assumes NoInputNoOutput when
    /// no agent is registered). Otherwise the agent gets `RequestConfirmation(device, passkey)` and Pair answers
    /// after it: `AuthenticationRejected` / `AuthenticationCanceled` / `AuthenticationFailed` when it refuses.
    func pair(_ call: DBusMethodCall) -> DBusReply {
        let path = call.path
        guard devices[path]?.pendingPair == nil else {
            return .error(name: BlueZErrorName.inProgress, message: "In Progress")
        }
        if devices[path]?.connected != true { connect(path) }
        let agent = call.sender.flatMap { agents[$0] != nil ? $0 : nil } ?? defaultAgent
        guard let agent, let registration = agents[agent], registration.capability != "NoInputNoOutput" else {
            completePairing(path)
            return .empty
        }
        devices[path]?.pendingPair = call
        // allowed: the Pair call is answered later (deferred reply), when the agent has answered
        Task { await self.askAgent(agent, at: registration.path, toConfirm: path) }
        return .deferred
    }

    private func askAgent(_ agent: String, at agentPath: String, toConfirm path: String) async {
        let outcome: DBusReply
        do {
            _ = try await bus.call(
                agent, path: agentPath, interface: "org.bluez.Agent1", member: "RequestConfirmation",
                arguments: [.objectPath(path), .uint32(Self.pairingPasskey)], timeout: .seconds(30))
            outcome = .empty
        } catch {
            switch error.name {
            case "org.bluez.Error.Rejected":
                outcome = .error(name: "org.bluez.Error.AuthenticationRejected", message: "Authentication Rejected")
            case "org.bluez.Error.Canceled":
                outcome = .error(name: "org.bluez.Error.AuthenticationCanceled", message: "Authentication Canceled")
            default:
                outcome = .error(name: "org.bluez.Error.AuthenticationFailed", message: "Authentication Failed")
            }
        }
        // CancelPairing may have answered meanwhile.
        guard let pending = devices[path]?.pendingPair else { return }
        devices[path]?.pendingPair = nil
        if outcome == .empty { completePairing(path) }
        emit("reply to Pair") { bus in try bus.reply(to: pending, with: outcome) }
    }

    /// Paired=true, Bonded=true; the peripheral now serves its protected characteristics.
    func completePairing(_ path: String) {
        guard var device = devices[path], !device.paired else { return }
        device.paired = true
        device.temporary = false
        device.peripheral.setPaired(true)
        devices[path] = device
        setDeviceProperties(["Paired": .boolean(true), "Bonded": .boolean(true)], at: path)
    }

    /// Answers a waiting Pair with `AuthenticationCanceled`; `DoesNotExist` when no pairing is in progress.
    func cancelPairing(_ path: String) -> DBusReply {
        guard let pending = devices[path]?.pendingPair else {
            return .error(name: BlueZErrorName.doesNotExist, message: "Does Not Exist")
        }
        devices[path]?.pendingPair = nil
        emit("cancel Pair") { bus in
            try bus.reply(
                to: pending,
                with: .error(name: "org.bluez.Error.AuthenticationCanceled", message: "Authentication Canceled"))
        }
        return .empty
    }
}
