/// Who wrote a sample: an app or the gateway, with its version (HealthKit's `HKSource` + `HKSourceRevision`).
public struct Source: Hashable, Sendable, Codable {
    /// A stable identifier, e.g. `org.wearhouse.gateway` or an app's D-Bus name or unit.
    public var identifier: String
    public var version: String?

    public init(identifier: String, version: String? = nil) {
        self.identifier = identifier
        self.version = version
    }
}

/// The hardware that measured a sample (HealthKit's `HKDevice`); for BLE sensors, from Device Information.
public struct Device: Hashable, Sendable, Codable {
    public var name: String?
    public var manufacturer: String?
    public var model: String?
    public var hardwareVersion: String?
    public var firmwareVersion: String?
    public var softwareVersion: String?
    public var serialNumber: String?
    /// A local identifier such as the BLE address.
    public var localIdentifier: String?

    public init(
        name: String? = nil, manufacturer: String? = nil, model: String? = nil, hardwareVersion: String? = nil,
        firmwareVersion: String? = nil, softwareVersion: String? = nil, serialNumber: String? = nil,
        localIdentifier: String? = nil
    ) {
        self.name = name
        self.manufacturer = manufacturer
        self.model = model
        self.hardwareVersion = hardwareVersion
        self.firmwareVersion = firmwareVersion
        self.softwareVersion = softwareVersion
        self.serialNumber = serialNumber
        self.localIdentifier = localIdentifier
    }

    /// The identity a priority list and the natural key use: local identifier, else serial, else model.
    public var key: String {
        localIdentifier ?? serialNumber.map { "serial:\($0)" }
            ?? [manufacturer, model, name].compactMap { $0 }.joined(separator: "/")
    }
}

/// A (source, device) pair: what priority lists rank and what the merge keeps apart.
public struct Provenance: Hashable, Sendable, Comparable, CustomStringConvertible {
    public var source: String
    /// The device key, or `nil` for samples without a device (entered by hand, computed).
    public var device: String?

    public init(source: String, device: String?) {
        self.source = source
        self.device = device
    }

    public var description: String { device.map { "\(source)[\($0)]" } ?? source }

    public static func < (lhs: Self, rhs: Self) -> Bool {
        (lhs.source, lhs.device ?? "") < (rhs.source, rhs.device ?? "")
    }
}
