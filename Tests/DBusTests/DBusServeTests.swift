import Foundation
import TestSupport
import Testing

@testable import DBus

/// Served objects: methods, properties, ObjectManager and introspection, seen from a second connection and
/// from the real `busctl`.
@Suite(.timeLimit(.minutes(1))) struct DBusServeTests {
    static let device = DBusInterface(
        name: "org.example.Device1",
        methods: [
            .init("Connect"),
            .init("Echo", inputs: [.init("text", .string)], outputs: [.init("text", .string)]),
            .init("Broken", outputs: [.init("count", .uint32)]),
        ],
        signals: [.init("Tapped", arguments: [.init("count", .uint32)])],
        properties: [
            .init("Name", .string), .init("Connected", .boolean), .init("RSSI", .int16),
            .init("Alias", .string, access: .readwrite), .init("Trusted", .boolean, access: .readwrite),
            .init("Secret", .string, access: .write),
        ])

    static func deviceInterface(name: String) -> DBusExportedInterface {
        DBusExportedInterface(
            device,
            properties: [
                "Name": .string(name), "Connected": .boolean(false), "Alias": .string(name), "Trusted": .boolean(false),
            ],
            methodHandler: { connection, call in
                switch call.member {
                case "Connect":
                    do {
                        try connection.updateProperties(
                            ["Connected": .boolean(true)], interface: device.name, path: call.path)
                    } catch {
                        return .error(error)
                    }
                    return .empty
                case "Echo": return .values(call.arguments)
                case "Broken": return .values([.string("not a uint32")])
                default: return .error(name: DBusError.Name.failed, message: "unexpected")
                }
            },
            propertyWriteHandler: { _, _, name, value in
                name == "Alias" && value == .string("")
                    ? .reject(name: "org.example.Error.Invalid", message: "empty alias") : .accept
            })
    }

    static let root = "/org/example"
    static let devicePath = "/org/example/hci0/dev_1"

    /// Serves `/` (object manager), `/org/example/hci0/dev_1` and takes a well-known name.
    static func serve(_ peers: Peers) async throws {
        try await peers.server.export("/", interfaces: [], objectManager: true)
        try await peers.server.export(devicePath, interfaces: [deviceInterface(name: "strap")])
        let first = try await peers.server.requestName("org.example.Fake")
        #expect(first == .primaryOwner)
        let second = try await peers.server.requestName("org.example.Fake")
        #expect(second == .alreadyOwner)
    }

    @Test func methodsAreCheckedAndAnswered() async throws {
        try await withPeers { peers in
            try await Self.serve(peers)
            // A raw handler that declines: the call goes on to the exported object, arguments intact.
            _ = try await peers.server.addRawHandler(at: Self.devicePath) { _, _ in nil }
            let client = peers.client
            let echo = try await client.call(
                "org.example.Fake", path: Self.devicePath, interface: Self.device.name, member: "Echo",
                arguments: [.string("hi")])
            #expect(echo == [.string("hi")])
            // No interface given: found by member name.
            let found = try await client.call(
                "org.example.Fake", path: Self.devicePath, interface: nil, member: "Echo", arguments: [.string("x")])
            #expect(found == [.string("x")])
            let wrongSignature = await #expect(throws: DBusError.self) {
                try await client.call(
                    "org.example.Fake", path: Self.devicePath, interface: Self.device.name, member: "Echo",
                    arguments: [.int32(1)])
            }
            #expect(wrongSignature?.name == DBusError.Name.unknownMethod)
            let badReply = await #expect(throws: DBusError.self) {
                try await client.call(
                    "org.example.Fake", path: Self.devicePath, interface: Self.device.name, member: "Broken")
            }
            #expect(badReply?.name == DBusError.Name.failed)
            let missing = await #expect(throws: DBusError.self) {
                try await client.call(
                    "org.example.Fake", path: "/org/example/hci0/dev_2", interface: Self.device.name, member: "Connect")
            }
            #expect(missing?.name == DBusError.Name.unknownObject)
        }
    }

    @Test func propertiesGetGetAllSetAndChanged() async throws {
        try await withPeers { peers in
            try await Self.serve(peers)
            let client = peers.client
            let changes = try await client.subscribe(
                to: DBusMatchRule(
                    interface: DBusInterface.properties.name, member: "PropertiesChanged", pathNamespace: Self.root))
            var changeIterator = changes.makeAsyncIterator()

            let all = try await client.getAllProperties(
                interface: Self.device.name, path: Self.devicePath, destination: "org.example.Fake")
            #expect(
                all == [
                    "Name": .string("strap"), "Connected": .boolean(false), "Alias": .string("strap"),
                    "Trusted": .boolean(false),
                ])
            let name = try await client.getProperty(
                "Name", interface: Self.device.name, path: Self.devicePath, destination: "org.example.Fake")
            #expect(name == .string("strap"))
            let absent = await #expect(throws: DBusError.self) {
                try await client.getProperty(
                    "RSSI", interface: Self.device.name, path: Self.devicePath, destination: "org.example.Fake")
            }
            #expect(absent?.name == DBusError.Name.invalidArgs)
            let writeOnly = await #expect(throws: DBusError.self) {
                try await client.getProperty(
                    "Secret", interface: Self.device.name, path: Self.devicePath, destination: "org.example.Fake")
            }
            #expect(writeOnly?.name == DBusError.Name.invalidArgs)

            try await client.setProperty(
                "Trusted", to: .boolean(true), interface: Self.device.name, path: Self.devicePath,
                destination: "org.example.Fake")
            let trusted = try #require(await changeIterator.next())
            #expect(
                trusted.arguments == [.string(Self.device.name), .vardict(["Trusted": .boolean(true)]), .strings([])])
            #expect(
                await peers.server.propertyValue("Trusted", interface: Self.device.name, path: Self.devicePath)
                    == .boolean(true))

            let readOnly = await #expect(throws: DBusError.self) {
                try await client.setProperty(
                    "Name", to: .string("x"), interface: Self.device.name, path: Self.devicePath,
                    destination: "org.example.Fake")
            }
            #expect(readOnly?.name == DBusError.Name.propertyReadOnly)
            let wrongType = await #expect(throws: DBusError.self) {
                try await client.setProperty(
                    "Alias", to: .int32(1), interface: Self.device.name, path: Self.devicePath,
                    destination: "org.example.Fake")
            }
            #expect(wrongType?.name == DBusError.Name.invalidArgs)
            let rejected = await #expect(throws: DBusError.self) {
                try await client.setProperty(
                    "Alias", to: .string(""), interface: Self.device.name, path: Self.devicePath,
                    destination: "org.example.Fake")
            }
            #expect(rejected?.name == "org.example.Error.Invalid")

            // A method that changes a property: the signal comes before the reply.
            _ = try await client.call(
                "org.example.Fake", path: Self.devicePath, interface: Self.device.name, member: "Connect")
            let connected = try #require(await changeIterator.next())
            #expect(connected.arguments[1] == .vardict(["Connected": .boolean(true)]))

            // Repeated values still emit, and invalidation removes.
            try await peers.server.updateProperties(
                ["Connected": .boolean(true)], invalidated: ["Alias"], interface: Self.device.name,
                path: Self.devicePath)
            let repeated = try #require(await changeIterator.next())
            #expect(
                repeated.arguments == [
                    .string(Self.device.name), .vardict(["Connected": .boolean(true)]), .strings(["Alias"]),
                ])
            let afterInvalidation = try await client.getAllProperties(
                interface: Self.device.name, path: Self.devicePath, destination: "org.example.Fake")
            #expect(afterInvalidation["Alias"] == nil)
            await #expect(throws: DBusError.self) {
                try await peers.server.updateProperties(
                    ["Connected": .string("yes")], interface: Self.device.name, path: Self.devicePath)
            }
            #expect(changes.droppedCount == 0)
        }
    }

    @Test func objectManagerListsAndAnnouncesObjects() async throws {
        try await withPeers { peers in
            try await Self.serve(peers)
            let client = peers.client
            let announcements = try await client.subscribe(
                to: DBusMatchRule(interface: DBusInterface.objectManager.name))
            var iterator = announcements.makeAsyncIterator()

            let objects = try await client.managedObjects(destination: "org.example.Fake")
            #expect(Set(objects.keys) == [Self.devicePath])
            let device = try #require(objects[Self.devicePath])
            #expect(
                Set(device.keys) == [
                    Self.device.name, "org.freedesktop.DBus.Introspectable", "org.freedesktop.DBus.Properties",
                ])
            #expect(device[Self.device.name]?["Name"] == .string("strap"))
            #expect(device["org.freedesktop.DBus.Properties"] == [:])

            // The raw reply has exactly the GetManagedObjects shape.
            let raw = try await client.call(
                "org.example.Fake", path: "/", interface: DBusInterface.objectManager.name, member: "GetManagedObjects")
            #expect(raw.map(\.signature) == ["a{oa{sa{sv}}}"])

            let battery = DBusInterface(name: "org.example.Battery1", properties: [.init("Percentage", .byte)])
            try await peers.server.export("/org/example/hci0/dev_2", interfaces: [Self.deviceInterface(name: "pod")])
            let added = try #require(await iterator.next())
            #expect(added.member == "InterfacesAdded")
            #expect(added.path == "/")
            #expect(added.arguments.first == .objectPath("/org/example/hci0/dev_2"))
            #expect(
                Set(added.arguments.last?.stringKeyedValue?.keys.map { $0 } ?? []) == [
                    Self.device.name, "org.freedesktop.DBus.Introspectable", "org.freedesktop.DBus.Properties",
                ])

            try await peers.server.export(
                Self.devicePath, interfaces: [DBusExportedInterface(battery, properties: ["Percentage": .byte(80)])])
            let batteryAdded = try #require(await iterator.next())
            #expect(
                batteryAdded.arguments == [
                    .objectPath(Self.devicePath),
                    .dictionary(
                        key: .string, value: .dictionary(key: .string, value: .variant),
                        [
                            DBusDictEntry(
                                key: .string("org.example.Battery1"), value: .vardict(["Percentage": .byte(80)]))
                        ]),
                ])

            try await peers.server.removeInterfaces(["org.example.Battery1"], from: Self.devicePath)
            let batteryRemoved = try #require(await iterator.next())
            #expect(batteryRemoved.arguments == [.objectPath(Self.devicePath), .strings(["org.example.Battery1"])])

            try await peers.server.unexport("/org/example/hci0/dev_2")
            let removed = try #require(await iterator.next())
            #expect(removed.member == "InterfacesRemoved")
            #expect(
                removed.arguments == [
                    .objectPath("/org/example/hci0/dev_2"),
                    .strings([
                        Self.device.name, "org.freedesktop.DBus.Introspectable", "org.freedesktop.DBus.Properties",
                    ]),
                ])
            let vanished = await #expect(throws: DBusError.self) {
                try await client.call(
                    "org.example.Fake", path: "/org/example/hci0/dev_2", interface: Self.device.name, member: "Connect")
            }
            #expect(vanished?.name == DBusError.Name.unknownObject)
            #expect(await peers.server.exportedPaths == ["/", Self.devicePath])
        }
    }

    @Test func introspectionIsGeneratedFromTheDescription() async throws {
        try await withPeers { peers in
            try await Self.serve(peers)
            let client = peers.client
            let xml = try await client.call(
                "org.example.Fake", path: Self.devicePath, interface: DBusInterface.introspectable.name,
                member: "Introspect")
            let text = try #require(xml.first?.stringValue)
            #expect(text.contains("<interface name=\"org.example.Device1\">"))
            #expect(text.contains("<method name=\"Echo\">"))
            #expect(text.contains("<arg name=\"text\" type=\"s\" direction=\"in\"/>"))
            #expect(text.contains("<signal name=\"Tapped\">"))
            #expect(text.contains("<property name=\"Alias\" type=\"s\" access=\"readwrite\"/>"))
            #expect(text.contains("<interface name=\"org.freedesktop.DBus.Properties\">"))
            #expect(!text.contains("org.freedesktop.DBus.ObjectManager"))

            let rootReply = try await client.call(
                "org.example.Fake", path: "/", interface: DBusInterface.introspectable.name, member: "Introspect")
            let rootXML = try #require(rootReply.first?.stringValue)
            #expect(rootXML.contains("org.freedesktop.DBus.ObjectManager"))
            #expect(rootXML.contains("<node name=\"org\"/>"))
            let middleReply = try await client.call(
                "org.example.Fake", path: "/org/example/hci0", interface: DBusInterface.introspectable.name,
                member: "Introspect")
            let middle = try #require(middleReply.first?.stringValue)
            #expect(middle.contains("<node name=\"dev_1\"/>"))
            #expect(!middle.contains("org.example.Device1"))
        }
    }

    @Test func busctlSeesTheServedObject() async throws {
        try await withPeers { peers in
            try await Self.serve(peers)
            let address = "--address=\(peers.bus.address)"

            let tree = try run("/usr/bin/busctl", [address, "tree", "org.example.Fake", "--list"])
            #expect(tree.status == 0, "\(tree.error)")
            #expect(tree.output.contains(Self.devicePath))
            #expect(tree.output.contains("/org/example/hci0"))

            let introspect = try run("/usr/bin/busctl", [address, "introspect", "org.example.Fake", Self.devicePath])
            #expect(introspect.status == 0, "\(introspect.error)")
            #expect(introspect.output.contains("org.example.Device1"))
            #expect(introspect.output.contains(".Name"))
            #expect(introspect.output.contains("\"strap\""))
            #expect(introspect.output.contains(".Echo"))

            let call = try run(
                "/usr/bin/busctl",
                [
                    address, "call", "org.example.Fake", Self.devicePath, "org.example.Device1", "Echo", "s",
                    "from busctl",
                ])
            #expect(call.status == 0, "\(call.error)")
            #expect(call.output.trimmingCharacters(in: .whitespacesAndNewlines) == "s \"from busctl\"")

            let property = try run(
                "/usr/bin/busctl",
                [address, "get-property", "org.example.Fake", Self.devicePath, "org.example.Device1", "Connected"])
            #expect(property.output.trimmingCharacters(in: .whitespacesAndNewlines) == "b false")

            let set = try run(
                "/usr/bin/busctl",
                [
                    address, "set-property", "org.example.Fake", Self.devicePath, "org.example.Device1", "Alias", "s",
                    "chest",
                ])
            #expect(set.status == 0, "\(set.error)")
            #expect(
                await peers.server.propertyValue("Alias", interface: Self.device.name, path: Self.devicePath)
                    == .string("chest"))

            let managed = try run(
                "/usr/bin/busctl",
                [address, "call", "org.example.Fake", "/", "org.freedesktop.DBus.ObjectManager", "GetManagedObjects"])
            #expect(managed.output.hasPrefix("a{oa{sa{sv}}} 1 \"\(Self.devicePath)\""))

            let failing = try run(
                "/usr/bin/busctl",
                [address, "call", "org.example.Fake", Self.devicePath, "org.example.Device1", "Echo", "i", "1"])
            #expect(failing.status != 0)
        }
    }
}
