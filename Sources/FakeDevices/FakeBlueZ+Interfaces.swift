public import DBus

/// The org.bluez interface descriptions FakeBlueZ serves, with BlueZ 5.66's member names and D-Bus types
/// (`docs/bluez.md`, "Objects and interfaces" and F1: GATT client objects have no `Handle` property in 5.66).
extension FakeBlueZ {
    /// `org.bluez.AgentManager1` on `/org/bluez`.
    public static let agentManagerInterface = DBusInterface(
        name: "org.bluez.AgentManager1",
        methods: [
            .init("RegisterAgent", inputs: [.init("agent", .objectPath), .init("capability", .string)]),
            .init("UnregisterAgent", inputs: [.init("agent", .objectPath)]),
            .init("RequestDefaultAgent", inputs: [.init("agent", .objectPath)]),
        ])

    /// `org.bluez.Adapter1` on `/org/bluez/hci0`.
    public static let adapterInterface = DBusInterface(
        name: "org.bluez.Adapter1",
        methods: [
            .init("StartDiscovery"),
            .init("StopDiscovery"),
            .init("SetDiscoveryFilter", inputs: [.init("properties", .dictionary(key: .string, value: .variant))]),
            .init("RemoveDevice", inputs: [.init("device", .objectPath)]),
            .init("GetDiscoveryFilters", outputs: [.init("filters", .array(.string))]),
        ],
        properties: [
            .init("Address", .string), .init("AddressType", .string), .init("Name", .string),
            .init("Alias", .string, access: .readwrite), .init("Class", .uint32),
            .init("Powered", .boolean, access: .readwrite), .init("Discoverable", .boolean, access: .readwrite),
            .init("DiscoverableTimeout", .uint32, access: .readwrite),
            .init("Pairable", .boolean, access: .readwrite), .init("PairableTimeout", .uint32, access: .readwrite),
            .init("Discovering", .boolean), .init("UUIDs", .array(.string)), .init("Modalias", .string),
            .init("Roles", .array(.string)),
        ])

    /// `org.bluez.Device1` on `/org/bluez/hci0/dev_AA_BB_CC_DD_EE_FF`.
    public static let deviceInterface = DBusInterface(
        name: "org.bluez.Device1",
        methods: [
            .init("Disconnect"), .init("Connect"),
            .init("ConnectProfile", inputs: [.init("UUID", .string)]),
            .init("DisconnectProfile", inputs: [.init("UUID", .string)]),
            .init("Pair"), .init("CancelPairing"),
        ],
        properties: [
            .init("Address", .string), .init("AddressType", .string), .init("Name", .string),
            .init("Alias", .string, access: .readwrite), .init("Appearance", .uint16), .init("Icon", .string),
            .init("Paired", .boolean), .init("Bonded", .boolean), .init("Trusted", .boolean, access: .readwrite),
            .init("Blocked", .boolean, access: .readwrite), .init("LegacyPairing", .boolean),
            .init("RSSI", .int16), .init("Connected", .boolean), .init("UUIDs", .array(.string)),
            .init("Adapter", .objectPath), .init("ServicesResolved", .boolean),
            .init("WakeAllowed", .boolean, access: .readwrite),
        ])

    /// `org.bluez.GattService1` on `…/serviceXXXX`.
    public static let gattServiceInterface = DBusInterface(
        name: "org.bluez.GattService1",
        properties: [
            .init("UUID", .string), .init("Device", .objectPath), .init("Primary", .boolean),
            .init("Includes", .array(.objectPath)),
        ])

    /// `ReadValue(a{sv}) → ay` and `WriteValue(ay, a{sv})`, which characteristics and descriptors share.
    static let valueMethods: [DBusInterface.Method] = [
        .init(
            "ReadValue", inputs: [.init("options", .dictionary(key: .string, value: .variant))],
            outputs: [.init("value", .array(.byte))]),
        .init(
            "WriteValue",
            inputs: [.init("value", .array(.byte)), .init("options", .dictionary(key: .string, value: .variant))]),
    ]

    /// `org.bluez.GattCharacteristic1` on `…/serviceXXXX/charYYYY`.
    public static let gattCharacteristicInterface = DBusInterface(
        name: "org.bluez.GattCharacteristic1",
        methods: valueMethods + [
            .init("StartNotify"), .init("StopNotify"),
            .init(
                "AcquireNotify", inputs: [.init("options", .dictionary(key: .string, value: .variant))],
                outputs: [.init("fd", .unixFD), .init("mtu", .uint16)]),
            .init(
                "AcquireWrite", inputs: [.init("options", .dictionary(key: .string, value: .variant))],
                outputs: [.init("fd", .unixFD), .init("mtu", .uint16)]),
        ],
        properties: [
            .init("UUID", .string), .init("Service", .objectPath), .init("Value", .array(.byte)),
            .init("Notifying", .boolean), .init("Flags", .array(.string)), .init("MTU", .uint16),
            .init("NotifyAcquired", .boolean), .init("WriteAcquired", .boolean),
        ])

    /// `org.bluez.GattDescriptor1` on `…/charYYYY/descZZZZ` (the CCCD of notifying characteristics).
    public static let gattDescriptorInterface = DBusInterface(
        name: "org.bluez.GattDescriptor1",
        methods: valueMethods,
        properties: [.init("UUID", .string), .init("Characteristic", .objectPath), .init("Value", .array(.byte))])

    /// `org.bluez.Battery1` on a connected device with a Battery service.
    public static let batteryInterface = DBusInterface(
        name: "org.bluez.Battery1", properties: [.init("Percentage", .byte)])
}
