/// The Device Information strings (0x2A29, 0x2A24, 0x2A25, 0x2A27, 0x2A26, 0x2A28): utf8s, no length and no
/// terminator defined. Real firmware pads with NULs or leaves garbage after one, so the value is cut at the
/// first NUL and decoded as UTF-8 with U+FFFD for invalid bytes. Decoding never fails; "" is a valid value.
public protocol DeviceInformationString: CharacteristicValue {
    var value: String { get }
    init(_ value: String)
}

extension DeviceInformationString {
    public init(decoding bytes: borrowing [UInt8]) throws(DecodeError) {
        let text = bytes.withUnsafeBufferPointer { buffer in
            String(decoding: buffer.prefix { $0 != 0 }, as: UTF8.self)
        }
        self.init(text)
    }

    public func encoded() -> [UInt8] { Array(value.utf8) }
    public var fields: [Field] { [Field("value", .string(value))] }
}

/// Manufacturer Name String (0x2A29).
public struct ManufacturerNameString: DeviceInformationString, Hashable {
    public static let uuid = BluetoothUUID.manufacturerNameString
    public static let name = "manufacturer-name-string"
    public var value: String
    public init(_ value: String) { self.value = value }
}

/// Model Number String (0x2A24).
public struct ModelNumberString: DeviceInformationString, Hashable {
    public static let uuid = BluetoothUUID.modelNumberString
    public static let name = "model-number-string"
    public var value: String
    public init(_ value: String) { self.value = value }
}

/// Serial Number String (0x2A25).
public struct SerialNumberString: DeviceInformationString, Hashable {
    public static let uuid = BluetoothUUID.serialNumberString
    public static let name = "serial-number-string"
    public var value: String
    public init(_ value: String) { self.value = value }
}

/// Hardware Revision String (0x2A27).
public struct HardwareRevisionString: DeviceInformationString, Hashable {
    public static let uuid = BluetoothUUID.hardwareRevisionString
    public static let name = "hardware-revision-string"
    public var value: String
    public init(_ value: String) { self.value = value }
}

/// Firmware Revision String (0x2A26).
public struct FirmwareRevisionString: DeviceInformationString, Hashable {
    public static let uuid = BluetoothUUID.firmwareRevisionString
    public static let name = "firmware-revision-string"
    public var value: String
    public init(_ value: String) { self.value = value }
}

/// Software Revision String (0x2A28).
public struct SoftwareRevisionString: DeviceInformationString, Hashable {
    public static let uuid = BluetoothUUID.softwareRevisionString
    public static let name = "software-revision-string"
    public var value: String
    public init(_ value: String) { self.value = value }
}

/// System ID (0x2A23): a 40-bit manufacturer-defined identifier (low bytes) and a 24-bit OUI (high bytes),
/// 8 bytes. Decoded strictly per layout: a byte-swapped `fffe` filler (as the Mi Band 4 sends) is not repaired.
public struct SystemID: CharacteristicValue, Hashable {
    public static let uuid = BluetoothUUID.systemID
    public static let name = "system-id"

    /// 40 bits.
    public var manufacturerIdentifier: UInt64
    /// 24 bits.
    public var organizationallyUniqueIdentifier: UInt32

    public init(manufacturerIdentifier: UInt64, organizationallyUniqueIdentifier: UInt32) {
        self.manufacturerIdentifier = manufacturerIdentifier & 0xFF_FFFF_FFFF
        self.organizationallyUniqueIdentifier = organizationallyUniqueIdentifier & 0xFF_FFFF
    }

    public init(decoding bytes: borrowing [UInt8]) throws(DecodeError) {
        try requireLength(bytes, 8)
        self = try ByteReader.read(bytes) { (reader) throws(DecodeError) in try Self(reading: &reader) }
    }

    private init(reading reader: inout ByteReader) throws(DecodeError) {
        manufacturerIdentifier = try reader.readUInt40("manufacturer_identifier")
        organizationallyUniqueIdentifier = try reader.readUInt24("organizationally_unique_identifier")
    }

    /// The whole identifier as one 64-bit number, OUI in the top 24 bits.
    public var value: UInt64 { UInt64(organizationallyUniqueIdentifier) << 40 | manufacturerIdentifier }

    public func encoded() -> [UInt8] {
        var writer = ByteWriter(capacity: 8)
        writer.writeUInt40(manufacturerIdentifier)
        writer.writeUInt24(organizationallyUniqueIdentifier)
        return writer.bytes
    }

    public var fields: [Field] {
        [
            Field("manufacturer_identifier", .int(manufacturerIdentifier)),
            Field("organizationally_unique_identifier", .int(organizationallyUniqueIdentifier)),
            Field("value", .string(BluetoothUUID.hex(value, digits: 16))),
        ]
    }
}

/// PnP ID (0x2A50): vendor ID source (1 Bluetooth SIG, 2 USB-IF; others reserved), vendor ID, product ID and
/// product version, 7 bytes.
public struct PnPID: CharacteristicValue, Hashable {
    public static let uuid = BluetoothUUID.pnpID
    public static let name = "pnp-id"

    public var vendorIDSource: UInt8
    public var vendorID: UInt16
    public var productID: UInt16
    public var productVersion: UInt16

    public init(vendorIDSource: UInt8, vendorID: UInt16, productID: UInt16, productVersion: UInt16) {
        self.vendorIDSource = vendorIDSource
        self.vendorID = vendorID
        self.productID = productID
        self.productVersion = productVersion
    }

    public init(decoding bytes: borrowing [UInt8]) throws(DecodeError) {
        try requireLength(bytes, 7)
        self = try ByteReader.read(bytes) { (reader) throws(DecodeError) in try Self(reading: &reader) }
    }

    private init(reading reader: inout ByteReader) throws(DecodeError) {
        vendorIDSource = try reader.readUInt8("vendor_id_source")
        vendorID = try reader.readUInt16("vendor_id")
        productID = try reader.readUInt16("product_id")
        productVersion = try reader.readUInt16("product_version")
    }

    /// `bluetooth_sig`, `usb_if` or `reserved`.
    public var vendorIDSourceName: String {
        switch vendorIDSource {
        case 1: "bluetooth_sig"
        case 2: "usb_if"
        default: "reserved"
        }
    }

    public func encoded() -> [UInt8] {
        var writer = ByteWriter(capacity: 7)
        writer.write(vendorIDSource)
        writer.write(vendorID)
        writer.write(productID)
        writer.write(productVersion)
        return writer.bytes
    }

    public var fields: [Field] {
        [
            Field("vendor_id_source", .int(vendorIDSource)),
            Field("vendor_id_source_name", .string(vendorIDSourceName)),
            Field("vendor_id", .int(vendorID)),
            Field("product_id", .int(productID)),
            Field("product_version", .int(productVersion)),
        ]
    }
}
