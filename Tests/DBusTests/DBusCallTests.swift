import Foundation
import Synchronization
import TestSupport
import Testing

@testable import DBus

/// Method calls between two connections on a private bus.
@Suite(.timeLimit(.minutes(1))) struct DBusCallTests {
    @Test func connectsAndGetsUniqueNames() async throws {
        try await withPeers { peers in
            #expect(peers.serverName.hasPrefix(":"))
            #expect(peers.clientName.hasPrefix(":"))
            #expect(peers.serverName != peers.clientName)
            let owner = try await peers.client.nameOwner(peers.serverName)
            #expect(owner == peers.serverName)
        }
    }

    @Test func everyTypeRoundTripsThroughTheBus() async throws {
        try await withPeers { peers in
            try await serveEcho(on: peers.server)
            for value in Samples.all {
                let reply = try await peers.client.call(
                    peers.serverName, path: echoPath, interface: "org.example.Echo", member: "Echo", arguments: [value])
                #expect(reply == [value], "round trip of \(value.signature)")
                #expect(reply.first?.signature == value.signature)
            }
            // All at once, as one message body.
            let reply = try await peers.client.call(
                peers.serverName, path: echoPath, interface: "org.example.Echo", member: "Echo", arguments: Samples.all)
            #expect(reply == Samples.all)
        }
    }

    @Test func fileDescriptorsRoundTripAndStayUsable() async throws {
        try await withPeers { peers in
            try await serveEcho(on: peers.server)
            let (read, write) = try makePipe()
            defer { close(write) }
            let sent = try DBusFileDescriptor(duplicating: write)
            let reply = try await peers.client.call(
                peers.serverName, path: echoPath, interface: nil, member: "Echo",
                arguments: [.unixFD(sent), .variant(.unixFD(sent)), .array(.unixFD, [.unixFD(sent)])])
            #expect(reply == [.unixFD(sent), .variant(.unixFD(sent)), .array(.unixFD, [.unixFD(sent)])])
            let received = try #require(reply.first?.fileDescriptorValue)
            #expect(received.rawValue != sent.rawValue)
            // Writing through the descriptor that went through the bus reaches our pipe.
            var byte: UInt8 = 0x2A
            #expect(Glibc.write(received.rawValue, &byte, 1) == 1)
            var readBack: UInt8 = 0
            #expect(Glibc.read(read.rawValue, &readBack, 1) == 1)
            #expect(readBack == 0x2A)
        }
    }

    @Test func namedErrorsCarryNameAndMessage() async throws {
        try await withPeers { peers in
            _ = try await peers.server.addRawHandler(at: "/org/bluez/hci0/dev_C0_FF_EE_00_11_22") { _, call in
                .error(name: "org.bluez.Error.Failed", message: "le-connection-abort-by-local")
            }
            let error = await #expect(throws: DBusError.self) {
                try await peers.client.call(
                    peers.serverName, path: "/org/bluez/hci0/dev_C0_FF_EE_00_11_22", interface: "org.bluez.Device1",
                    member: "Connect")
            }
            #expect(error?.kind == .remote)
            #expect(error?.name == "org.bluez.Error.Failed")
            #expect(error?.message == "le-connection-abort-by-local")
            #expect(error?.operation == "org.bluez.Device1.Connect")
            #expect(error?.description.contains("dev_C0") == false, "paths stay out of description")
            #expect(error?.debugDescription.contains("dev_C0_FF_EE_00_11_22") == true)
        }
    }

    @Test func unhandledCallsGetStandardErrors() async throws {
        try await withPeers { peers in
            try await serveEcho(on: peers.server)
            let unknownMethod = await #expect(throws: DBusError.self) {
                try await peers.client.call(
                    peers.serverName, path: echoPath, interface: "org.example.Echo", member: "Nope")
            }
            #expect(unknownMethod?.name == DBusError.Name.unknownMethod)
            let unknownService = await #expect(throws: DBusError.self) {
                try await peers.client.call("org.example.Nobody", path: "/", interface: "org.example.X", member: "Y")
            }
            #expect(unknownService?.name == DBusError.Name.serviceUnknown)
        }
    }

    @Test func timeoutIsDistinguishableFromNoReply() async throws {
        try await withPeers { peers in
            var calls = try await serveSlowObject(peers)
            let clock = ContinuousClock()
            let start = clock.now
            let timedOut = await #expect(throws: DBusError.self) {
                try await peers.client.call(
                    peers.serverName, path: "/slow", interface: "org.example.Slow", member: "Wait",
                    timeout: .milliseconds(200))
            }
            #expect(timedOut?.kind == .timedOut)
            #expect(timedOut?.name == DBusError.Name.noReply)
            #expect(clock.now - start >= .milliseconds(200))

            // The peer leaves without answering: the bus answers NoReply before our deadline.
            let leaving = Task {
                try await peers.client.call(
                    peers.serverName, path: "/slow", interface: "org.example.Slow", member: "Wait",
                    timeout: .seconds(20))
            }
            // Close only once the second call has reached the server (else the bus answers that the name is gone).
            _ = await calls.next()  // the first call
            _ = await calls.next()  // the second
            await peers.server.close()
            let noReply = await #expect(throws: DBusError.self) { try await leaving.value }
            #expect(noReply?.kind == .noReply)
            #expect(clock.now - start < .seconds(10))
        }
    }

    @Test func deferredReplyWhileTheCallerServesACallback() async throws {
        // bluetoothd's Pair calls our Agent1 before it answers: the caller must serve the callback meanwhile.
        try await withPeers { peers in
            let agentCalls = Counter()
            _ = try await peers.client.addRawHandler(at: "/org/example/agent") { _, call in
                agentCalls.increment()
                return call.member == "RequestConfirmation" ? .empty : nil
            }
            let server = peers.server
            // The handler uses the connection it is given (capturing `server` would be a reference cycle).
            _ = try await server.addRawHandler(at: "/org/bluez/hci0/dev_1") { connection, call in
                guard call.member == "Pair", let caller = call.sender else { return nil }
                Task { [connection] in
                    do {
                        _ = try await connection.call(
                            caller, path: "/org/example/agent", interface: "org.bluez.Agent1",
                            member: "RequestConfirmation", arguments: [.objectPath(call.path), .uint32(123_456)])
                        try await connection.reply(to: call, with: .values([.string("paired")]))
                    } catch {
                        try? await connection.reply(to: call, with: .error(error))
                    }
                }
                return .deferred
            }
            let reply = try await peers.client.call(
                peers.serverName, path: "/org/bluez/hci0/dev_1", interface: "org.bluez.Device1", member: "Pair",
                timeout: .seconds(5))
            #expect(reply == [.string("paired")])
            #expect(agentCalls.value == 1)
            // A deferred call can be answered once only.
            await #expect(throws: DBusError.self) {
                try await server.reply(
                    to: DBusMethodCall(
                        path: "/", interface: nil, member: "Pair", sender: nil, destination: nil, signature: "",
                        arguments: [], token: 999_999),
                    with: .empty)
            }
        }
    }

    @Test func cancellationEndsAWaitingCall() async throws {
        try await withPeers { peers in
            var calls = try await serveSlowObject(peers)
            let client = peers.client
            let serverName = peers.serverName
            let waiting = Task {
                try await client.call(serverName, path: "/slow", interface: "org.example.Slow", member: "Wait")
            }
            _ = await calls.next()  // the call has reached the server
            waiting.cancel()
            let error = await #expect(throws: DBusError.self) { try await waiting.value }
            #expect(error?.kind == .cancelled)
            // The connection still works.
            let owner = try await client.nameOwner(serverName)
            #expect(owner == serverName)
        }
    }

    @Test func closeFailsPendingAndLaterCalls() async throws {
        try await withPeers { peers in
            var calls = try await serveSlowObject(peers)
            let client = peers.client
            let serverName = peers.serverName
            let waiting = Task {
                try await client.call(serverName, path: "/slow", interface: "org.example.Slow", member: "Wait")
            }
            _ = await calls.next()  // the call has reached the server
            await client.close()
            let pending = await #expect(throws: DBusError.self) { try await waiting.value }
            #expect(pending?.kind == .closed)
            let later = await #expect(throws: DBusError.self) { try await client.nameOwner(serverName) }
            #expect(later?.kind == .closed)
            #expect(client.thread.loop.hasExited, "close() joined the bus thread")
            await client.close()  // idempotent
        }
    }

    @Test func droppingTheConnectionClosesItSynchronously() async throws {
        try await withPeers { peers in
            var doomed: DBusConnection? = try await DBusConnection.connect(to: .address(peers.bus.address))
            let name = try #require(await doomed?.uniqueName)
            let gone = try await peers.client.subscribe(
                to: DBusMatchRule(
                    sender: "org.freedesktop.DBus", interface: "org.freedesktop.DBus", member: "NameOwnerChanged",
                    arguments: [0: name]))
            // Live registrations and a subscription still held by us must not keep the connection alive.
            let doomedSignals = try await doomed?.subscribe(to: DBusMatchRule(interface: "org.example.Nothing"))
            _ = try await doomed?.addRawHandler(at: "/x") { _, _ in .empty }
            try await doomed?.export("/y", interfaces: [])
            doomed = nil  // deinit: stops the loop, which closes the bus, and joins the thread
            var iterator = gone.makeAsyncIterator()
            let signal = try #require(await iterator.next())
            #expect(signal.arguments == [.string(name), .string(name), .string("")])
            var doomedIterator = doomedSignals?.makeAsyncIterator()
            #expect(await doomedIterator?.next() == nil, "the closed bus finished the stream")
        }
    }

    @Test func daemonDeathFailsPendingCalls() async throws {
        try await withPeers { peers in
            var calls = try await serveSlowObject(peers)
            let client = peers.client
            let serverName = peers.serverName
            let waiting = Task {
                try await client.call(serverName, path: "/slow", interface: "org.example.Slow", member: "Wait")
            }
            _ = await calls.next()  // the call has reached the server
            peers.bus.stop()
            let error = await #expect(throws: DBusError.self) { try await waiting.value }
            #expect(error?.kind == .noReply)
            let later = await #expect(throws: DBusError.self) { try await client.nameOwner(serverName) }
            #expect(later?.kind == .system)
        }
    }

    @Test func connectingToAMissingSocketFails() async {
        let error = await #expect(throws: DBusError.self) {
            try await DBusConnection.connect(to: .address("unix:path=/nonexistent/wearhouse-test/bus"))
        }
        #expect(error?.kind == .system)
        #expect(error?.errno == ENOENT)
    }

    @Test func actorMethodsRunOnTheBusThread() async throws {
        try await withPeers { peers in
            #expect(!peers.client.isOnBusThread)
            let pinned = Pinned(connection: peers.client)
            #expect(await pinned.runsOnBusThread())
            #expect(await pinned.uniqueNameSynchronously() == peers.clientName)
            _ = try await peers.server.addRawHandler(at: "/where") { connection, _ in
                .values([.boolean(connection.isOnBusThread)])
            }
            let reply = try await peers.client.call(peers.serverName, path: "/where", interface: nil, member: "Ask")
            #expect(reply == [.boolean(true)])
        }
    }
}

/// An actor sharing a connection's bus thread.
actor Pinned {
    let connection: DBusConnection
    nonisolated var unownedExecutor: UnownedSerialExecutor { connection.unownedExecutor }

    init(connection: DBusConnection) {
        self.connection = connection
    }

    func runsOnBusThread() -> Bool {
        connection.isOnBusThread
    }

    /// Reads the connection's state without a hop: both actors are on the same thread.
    func uniqueNameSynchronously() -> String {
        connection.assumeIsolated { $0.uniqueName }
    }
}

/// A thread-safe counter for handlers.
final class Counter: Sendable {
    private let storage = Mutex(0)
    func increment() { storage.withLock { $0 += 1 } }
    var value: Int { storage.withLock { $0 } }
}

/// Serves `/slow` on the server: every call to it is received and never answered (`.deferred`). The returned
/// iterator yields once per call that has reached the server, so a test can act after a call has arrived
/// instead of sleeping and hoping it has.
private func serveSlowObject(_ peers: Peers) async throws -> AsyncStream<Void>.Iterator {
    let (received, arrived) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .unbounded)
    _ = try await peers.server.addRawHandler(at: "/slow") { _, _ in
        arrived.yield()
        return .deferred
    }
    return received.makeAsyncIterator()
}
