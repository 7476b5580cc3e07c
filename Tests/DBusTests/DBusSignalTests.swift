import TestSupport
import Testing

@testable import DBus

/// Signal matches: delivery, order, drop counting, removal.
@Suite(.timeLimit(.minutes(1))) struct DBusSignalTests {
    static let interface = "org.example.Sensor1"

    @Test func matchesDeliverSignalsInOrder() async throws {
        try await withPeers { peers in
            let signals = try await peers.client.subscribe(
                to: DBusMatchRule(interface: Self.interface, member: "Beat", pathNamespace: "/org/example"))
            #expect(
                signals.rule
                    == "type='signal',interface='org.example.Sensor1',member='Beat',path_namespace='/org/example'")
            for beat in 1...3 {
                try await peers.server.emitSignal(
                    path: "/org/example/strap", interface: Self.interface, member: "Beat",
                    arguments: [.uint16(UInt16(60 + beat)), .vardict(["Contact": .boolean(true)])])
            }
            // Not matched: other path namespace, other member.
            try await peers.server.emitSignal(
                path: "/other", interface: Self.interface, member: "Beat", arguments: [.uint16(0)])
            try await peers.server.emitSignal(path: "/org/example/strap", interface: Self.interface, member: "Other")
            try await peers.server.emitSignal(
                path: "/org/example/strap", interface: Self.interface, member: "Beat", arguments: [.uint16(99)])
            var received: [DBusSignal] = []
            for await signal in signals {
                received.append(signal)
                if received.count == 4 { break }
            }
            #expect(received.map { $0.arguments.first?.uint16Value } == [61, 62, 63, 99])
            #expect(received.allSatisfy { $0.sender == peers.serverName && $0.path == "/org/example/strap" })
            #expect(received.first?.arguments.last?.stringKeyedValue?["Contact"] == .boolean(true))
            #expect(signals.droppedCount == 0)
        }
    }

    @Test func dropsAreCounted() async throws {
        try await withPeers { peers in
            let signals = try await peers.client.subscribe(
                to: DBusMatchRule(interface: Self.interface, member: "Beat"), bufferingPolicy: .bufferingOldest(2))
            for beat in 1...5 {
                try await peers.server.emitSignal(
                    path: "/strap", interface: Self.interface, member: "Beat", arguments: [.uint16(UInt16(beat))])
            }
            // A round trip to the emitter: its reply travels behind the five signals, so they have all been
            // delivered to the stream once it arrives.
            _ = try await peers.client.call(
                peers.serverName, path: "/", interface: "org.freedesktop.DBus.Peer", member: "Ping")
            #expect(signals.droppedCount == 3)
            var iterator = signals.makeAsyncIterator()
            #expect(await iterator.next()?.arguments == [.uint16(1)])
            #expect(await iterator.next()?.arguments == [.uint16(2)])
            signals.cancel()
            #expect(await iterator.next() == nil)
        }
    }

    @Test func cancelledSubscriptionsStopReceiving() async throws {
        try await withPeers { peers in
            let first = try await peers.client.subscribe(to: DBusMatchRule(interface: Self.interface))
            let second = try await peers.client.subscribe(to: DBusMatchRule(interface: Self.interface))
            first.cancel()
            try await peers.server.emitSignal(path: "/strap", interface: Self.interface, member: "Beat")
            var iterator = second.makeAsyncIterator()
            #expect(await iterator.next()?.member == "Beat")
            var firstIterator = first.makeAsyncIterator()
            #expect(await firstIterator.next() == nil)
        }
    }

    @Test func unicastSignalsReachOnlyTheirDestination() async throws {
        try await withPeers { peers in
            let third = try await DBusConnection.connect(to: .address(peers.bus.address))
            let thirdSignals = try await third.subscribe(to: DBusMatchRule(interface: Self.interface))
            let clientSignals = try await peers.client.subscribe(to: DBusMatchRule(interface: Self.interface))
            try await peers.server.emitSignal(
                path: "/strap", interface: Self.interface, member: "ForClient", destination: peers.clientName)
            try await peers.server.emitSignal(path: "/strap", interface: Self.interface, member: "ForAll")
            var clientIterator = clientSignals.makeAsyncIterator()
            #expect(await clientIterator.next()?.member == "ForClient")
            var thirdIterator = thirdSignals.makeAsyncIterator()
            #expect(await thirdIterator.next()?.member == "ForAll")
            await third.close()
            #expect(await thirdIterator.next() == nil, "closing finishes the streams")
        }
    }

    @Test func invalidRulesAreRejectedByTheBus() async throws {
        try await withPeers { peers in
            let error = await #expect(throws: DBusError.self) {
                try await peers.client.subscribe(toRule: "type='signal',nonsense='x'")
            }
            #expect(error != nil)
        }
    }
}
