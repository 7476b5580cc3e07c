import DBus
import Foundation
import Support

/// The keys of ``GatewayConfiguration``: one table drives parsing, overrides, ``GatewayConfiguration/value(forKey:)``
/// and ``GatewayConfiguration/iniText``.
extension GatewayConfiguration {
    /// A value that does not fit its key; `expected` completes "expected …".
    struct InvalidValue: Error {
        var expected: String
    }

    struct Key: Sendable {
        let section: String
        let name: String
        let read: @Sendable (GatewayConfiguration) -> String
        let write: @Sendable (inout GatewayConfiguration, String) throws(InvalidValue) -> Void
    }

    static let sectionNames = ["store", "bluetooth", "writer", "samples", "service", prioritySection]
    /// The section whose keys are types (``GatewayConfiguration/priorities``), not in ``keys``.
    static let prioritySection = "priority"

    static let keys: [Key] = [
        Key(section: "store", name: "url", read: { $0.store.url }) { configuration, text throws(InvalidValue) in
            guard !text.isEmpty else { throw InvalidValue(expected: "a path, sqlite:PATH or postgresql://...") }
            configuration.store.url = text
        },
        Key(section: "bluetooth", name: "adapter", read: { $0.bluetooth.adapter ?? "" }) {
            configuration, text throws(InvalidValue) in
            guard !text.isEmpty else {
                configuration.bluetooth.adapter = nil
                return
            }
            guard isBluetoothAddress(text) else {
                throw InvalidValue(expected: "an adapter address such as 00:1A:7D:DA:71:13, or nothing")
            }
            configuration.bluetooth.adapter = text.uppercased()
        },
        Key(section: "bluetooth", name: "bus", read: { busText($0.bluetooth.bus) }) {
            configuration, text throws(InvalidValue) in
            configuration.bluetooth.bus = try bus(text)
        },
        seconds("bluetooth", "connect-timeout", 1...600, \.bluetooth.connectTimeout),
        seconds("bluetooth", "watchdog", 1...3600, \.bluetooth.watchdog),
        seconds("bluetooth", "backoff-min", 0.01...3600, \.bluetooth.backoffMinimum),
        seconds("bluetooth", "backoff-max", 0.01...3600, \.bluetooth.backoffMaximum),
        Key(section: "bluetooth", name: "notify-mode", read: { $0.bluetooth.notifyMode.rawValue }) {
            configuration, text throws(InvalidValue) in
            guard let mode = NotifyMode(rawValue: text) else {
                throw InvalidValue(expected: NotifyMode.allCases.map(\.rawValue).joined(separator: " or "))
            }
            configuration.bluetooth.notifyMode = mode
        },
        integer("writer", "batch-size", 1...100_000, \.writer.batchSize),
        Key(
            section: "writer", name: "flush-interval",
            read: { String(wholeMilliseconds($0.writer.flushInterval)) }
        ) { configuration, text throws(InvalidValue) in
            guard let milliseconds = Int(text), (1...1000).contains(milliseconds) else {
                throw InvalidValue(expected: "milliseconds from 1 to 1000 (a sample is durable within a second)")
            }
            configuration.writer.flushInterval = .milliseconds(milliseconds)
        },
        integer("writer", "queue-capacity", 1000...10_000_000, \.writer.queueCapacity),
        seconds("samples", "heartbeat-series-window", 5...3600, \.samples.heartbeatSeriesWindow),
        Key(section: "samples", name: "time-zone", read: { $0.samples.timeZone?.identifier ?? "" }) {
            configuration, text throws(InvalidValue) in
            guard !text.isEmpty else {
                configuration.samples.timeZone = nil
                return
            }
            guard let zone = TimeZone(identifier: text) else {
                throw InvalidValue(expected: "an IANA time zone such as Europe/Berlin, or nothing for the system's")
            }
            configuration.samples.timeZone = zone
        },
        Key(section: "service", name: "log-level", read: { $0.service.logLevel.description }) {
            configuration, text throws(InvalidValue) in
            guard let level = LogLevel(name: text) else {
                throw InvalidValue(expected: LogLevel.allCases.reversed().map(\.description).joined(separator: ", "))
            }
            configuration.service.logLevel = level
        },
        seconds("service", "status-interval", 1...3600, \.service.statusInterval),
        seconds("service", "stop-timeout", 1...600, \.service.stopTimeout),
        Key(section: "service", name: "source-name", read: { $0.service.sourceName }) {
            configuration, text throws(InvalidValue) in
            guard !text.isEmpty, text.count <= 100 else {
                throw InvalidValue(expected: "a name of 1 to 100 characters")
            }
            configuration.service.sourceName = text
        },
    ]

    /// A duration key given in (possibly fractional) seconds within `range`.
    private static func seconds(
        _ section: String, _ name: String, _ range: ClosedRange<Double>,
        _ path: any WritableKeyPath<GatewayConfiguration, Duration> & Sendable
    ) -> Key {
        Key(section: section, name: name, read: { Self.seconds($0[keyPath: path]) }) {
            configuration, text throws(InvalidValue) in
            guard let value = Double(text), value.isFinite, range.contains(value) else {
                throw InvalidValue(
                    expected: "seconds from \(Self.number(range.lowerBound)) to \(Self.number(range.upperBound))")
            }
            configuration[keyPath: path] = .milliseconds(Int64((value * 1000).rounded()))
        }
    }

    /// A whole-number key within `range`.
    private static func integer(
        _ section: String, _ name: String, _ range: ClosedRange<Int>,
        _ path: any WritableKeyPath<GatewayConfiguration, Int> & Sendable
    ) -> Key {
        Key(section: section, name: name, read: { String($0[keyPath: path]) }) {
            configuration, text throws(InvalidValue) in
            guard let value = Int(text), range.contains(value) else {
                throw InvalidValue(expected: "a whole number from \(range.lowerBound) to \(range.upperBound)")
            }
            configuration[keyPath: path] = value
        }
    }

    /// Seconds as the file spells them: `40`, `0.25`.
    static func seconds(_ duration: Duration) -> String {
        number(Double(wholeMilliseconds(duration)) / 1000)
    }

    /// The duration in whole milliseconds (a static function rather than a `Duration` extension, so that it
    /// cannot collide with one elsewhere in the module).
    private static func wholeMilliseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        return seconds * 1000 + attoseconds / 1_000_000_000_000_000
    }

    private static func number(_ value: Double) -> String {
        value == value.rounded() ? String(Int64(value)) : String(value)
    }

    static func isBluetoothAddress(_ text: String) -> Bool {
        let octets = text.split(separator: ":", omittingEmptySubsequences: false)
        return octets.count == 6 && octets.allSatisfy { $0.count == 2 && $0.allSatisfy(\.isHexDigit) }
    }

    /// `""` or `system` is the system bus, `session` the user's; anything else must look like a D-Bus address
    /// (`transport:key=value,...`).
    static func bus(_ text: String) throws(InvalidValue) -> DBusAddress {
        if text.isEmpty || text == "system" { return .system }
        if text == "session" { return .session }
        guard let colon = text.firstIndex(of: ":"), colon != text.startIndex, text[colon...].contains("=") else {
            throw InvalidValue(expected: "a D-Bus address such as unix:path=/run/dbus/system_bus_socket, or nothing")
        }
        return .address(text)
    }

    static func busText(_ address: DBusAddress) -> String {
        switch address {
        case .system: ""
        case .session: "session"
        case .address(let text): text
        }
    }
}
