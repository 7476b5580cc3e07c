internal import Foundation
public import Health
internal import Support

/// The sensor registry as both engines store it: a row per sensor whose device and services are JSON text,
/// written and read here so that the two engines' rows mean the same.
public enum SensorRegistryColumns {
    /// A registry row that cannot be read back.
    public struct UnreadableSensor: Error, Hashable, Sendable, CustomStringConvertible {
        public var description: String
    }

    /// The columns both engines' `sensors` tables hold, in the order ``sensor(address:adapter:name:label:subject:location:device:services:paired:notifyMode:enrolledAt:)`` takes them.
    public static let selectList =
        "address, adapter, name, label, subject, location, device, services, paired, notify_mode, enrolled_ms"

    /// The sensor of one row. A notify mode written by a newer wearhouse falls back to the default.
    public static func sensor(
        address: String, adapter: String?, name: String?, label: String?, subject: String?, location: String?,
        device: String?, services: String?, paired: Bool, notifyMode: String?, enrolledAt: Int64
    ) throws(UnreadableSensor) -> RegisteredSensor {
        RegisteredSensor(
            address: address, adapter: adapter, name: name, label: label, subject: subject, location: location,
            device: try decode(Device.self, device, address: address),
            services: try decode([String].self, services, address: address) ?? [], paired: paired,
            notifyMode: NotifyMode(rawValue: notifyMode ?? "") ?? .properties,
            enrolledAt: Instant(milliseconds: enrolledAt))
    }

    /// `text` normalized as a registry key (upper-case `AA:BB:CC:DD:EE:FF`).
    ///
    /// - Throws: ``InvalidSensorAddressError`` when it is not a Bluetooth address.
    public static func address(_ text: String) throws -> String {
        guard let address = RegisteredSensor.normalizedAddress(text) else {
            throw InvalidSensorAddressError(address: text)
        }
        return address
    }

    /// The JSON text of a device or a service list, keys sorted (so equal values give equal text).
    public static func json(_ value: some Encodable) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    private static func decode<Value: Decodable>(
        _ type: Value.Type, _ text: String?, address: String
    ) throws(UnreadableSensor) -> Value? {
        guard let text else { return nil }
        do {
            return try JSONDecoder().decode(type, from: Data(text.utf8))
        } catch {
            throw UnreadableSensor(description: "sensor \(address): unreadable \(type)")
        }
    }
}
