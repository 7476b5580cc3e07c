import Glibc
import Testing

@testable import DBus

@Suite struct DBusTypeTests {
    @Test(arguments: [
        "y", "b", "n", "q", "i", "u", "x", "t", "d", "s", "o", "g", "h", "v",
        "as", "ay", "aay", "a{sv}", "a{oa{sa{sv}}}", "(isv)", "a(oq)", "((y)v)", "a{qv}", "a{ya{sv}}",
    ])
    func parsesAndPrintsSignatures(_ signature: String) throws {
        #expect(try DBusType(signature: signature).signature == signature)
    }

    @Test func parsesBodySignatures() throws {
        #expect(try DBusType.list("") == [])
        #expect(
            try DBusType.list("sa{sv}as") == [.string, .dictionary(key: .string, value: .variant), .array(.string)])
        #expect(try DBusType.list("oa{sa{sv}}").count == 2)
    }

    @Test(arguments: ["", "a", "{sv}", "a{vs}", "a{s}", "a{svs}", "()", "(i", "i)", "z", "ss", "a{(i)s}"])
    func rejectsInvalidSignatures(_ signature: String) {
        #expect(throws: DBusError.self) { try DBusType(signature: signature) }
    }

    @Test func rejectsTooDeepOrTooLongSignatures() {
        #expect(throws: DBusError.self) { try DBusType(signature: String(repeating: "a", count: 70) + "y") }
        #expect(throws: DBusError.self) { try DBusType.list(String(repeating: "y", count: 256)) }
    }

    @Test func valueTypesAndSignatures() {
        #expect(DBusValue.vardict([:]).signature == "a{sv}")
        #expect(DBusValue.array(.string, []).signature == "as")
        #expect(DBusValue.struct([.objectPath("/"), .uint16(1)]).signature == "(oq)")
        #expect(Samples.getManagedObjectsShape.signature == "a{oa{sa{sv}}}")
        #expect(DBusValue.signature(of: [.string("a"), .vardict([:]), .strings([])]) == "sa{sv}as")
        #expect(DBusValue.variant(.int32(1)).type == .variant)
    }

    @Test func validationCatchesMismatchedContainers() {
        #expect(throws: DBusError.self) { try DBusValue.array(.string, [.int32(1)]).validate() }
        #expect(throws: DBusError.self) {
            try DBusValue.dictionary(
                key: .string, value: .variant, [DBusDictEntry(key: .string("a"), value: .int32(1))]
            )
            .validate()
        }
        #expect(throws: DBusError.self) { try DBusValue.struct([]).validate() }
        #expect(throws: DBusError.self) { try DBusValue.string("a\u{0}b").validate() }
        #expect(throws: Never.self) { try Samples.getManagedObjectsShape.validate() }
    }

    @Test func accessorsLookThroughVariants() {
        let properties = DBusValue.vardict(["Name": .string("strap"), "RSSI": .int16(-60), "Value": .bytes([1, 2])])
        let dictionary = properties.stringKeyedValue
        #expect(dictionary?["Name"]?.stringValue == "strap")
        #expect(dictionary?["RSSI"]?.int16Value == -60)
        #expect(dictionary?["Value"]?.bytesValue == [1, 2])
        #expect(DBusValue.variant(.variant(.boolean(true))).boolValue == true)
        #expect(DBusValue.int32(1).stringValue == nil)
        #expect(DBusValue.strings(["a", "b"]).stringArrayValue == ["a", "b"])
    }

    @Test func matchRulesQuoteTheirValues() {
        let rule = DBusMatchRule(
            interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged", pathNamespace: "/org/bluez",
            arguments: [0: "it's"], argumentPaths: [1: "/org/bluez/"])
        #expect(
            rule.description
                == "type='signal',interface='org.freedesktop.DBus.Properties',member='PropertiesChanged',"
                + "path_namespace='/org/bluez',arg0='it'\\''s',arg1path='/org/bluez/'")
    }

    @Test func fileDescriptorsCompareByOpenFile() throws {
        let (read, write) = try makePipe()
        defer { close(write) }
        let copy = try DBusFileDescriptor(duplicating: read.rawValue)
        #expect(copy.rawValue != read.rawValue)
        #expect(copy == read)
        let (other, otherWrite) = try makePipe()
        defer { close(otherWrite) }
        #expect(other != read)
    }

    @Test func timeoutsConvertToMicroseconds() {
        #expect(DBusConnection.microseconds(.seconds(25)) == 25_000_000)
        #expect(DBusConnection.microseconds(.milliseconds(1500)) == 1_500_000)
        #expect(DBusConnection.microseconds(.zero) == 1)
        #expect(DBusConnection.microseconds(.seconds(-3)) == 1)
    }

    @Test func objectPaths() {
        #expect(DBusObjectTree.isValidPath("/"))
        #expect(DBusObjectTree.isValidPath("/org/bluez/hci0/dev_C0_FF_EE_00_11_22"))
        #expect(!DBusObjectTree.isValidPath("/org/"))
        #expect(!DBusObjectTree.isValidPath("org"))
        #expect(!DBusObjectTree.isValidPath("/org//bluez"))
        #expect(!DBusObjectTree.isValidPath("/org/blue-z"))
        #expect(DBusObjectTree.parent(of: "/org/bluez") == "/org")
        #expect(DBusObjectTree.parent(of: "/org") == "/")
        #expect(DBusObjectTree.parent(of: "/") == nil)
    }
}
