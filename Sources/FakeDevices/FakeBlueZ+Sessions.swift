internal import DBus

/// Sessions tied to a client's connection (discovery, notify, agent) end when the client leaves the bus, as in
/// bluetoothd.
extension FakeBlueZ {
    /// Watches `NameOwnerChanged` for clients leaving; the watch ends when the connection closes.
    func watchClients() async throws {
        let rule = DBusMatchRule(
            sender: "org.freedesktop.DBus", interface: "org.freedesktop.DBus", member: "NameOwnerChanged")
        let changes = try await bus.subscribe(to: rule)
        // allowed: watches clients for as long as FakeBlueZ's connection lives; the stream ends when it closes
        Task { [weak self] in
            for await signal in changes {
                guard let self else { return }
                let strings = signal.arguments.compactMap(\.stringValue)
                guard strings.count == 3, strings[0].hasPrefix(":"), strings[2].isEmpty else { continue }
                await self.clientLeft(strings[0])
            }
        }
    }

    /// Ends every session `client` held.
    func clientLeft(_ client: String) {
        if discoverySessions.removeValue(forKey: client) != nil, discoverySessions.isEmpty { endDiscovery() }
        discoveryFilters[client] = nil
        filteredSenders.remove(client)
        agents[client] = nil
        if defaultAgent == client { defaultAgent = nil }
        for devicePath in devicePaths {
            guard let characteristics = devices[devicePath]?.characteristics else { continue }
            for (path, info) in characteristics where info.notifySenders.contains(client) {
                devices[devicePath]?.characteristics[path]?.notifySenders.remove(client)
                if info.notifySenders.count == 1 { setNotifying(false, at: path) }
            }
        }
    }
}
