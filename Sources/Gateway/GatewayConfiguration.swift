public import DBus
public import Foundation
public import GATT
public import Health
public import Support

/// The service's configuration, `/etc/wearhouse/wearhouse.conf` (INI), with command-line overrides.
///
/// Every key has a default (``init()``), so a missing file means the defaults. Unknown sections and keys are
/// errors, values are checked against their ranges, and every error names the file and line (or the override)
/// and the key. `Systemd/wearhouse.conf.example` documents each key with its default.
///
/// ```swift
/// var configuration = try GatewayConfiguration.load(path: GatewayConfiguration.defaultPath)
/// configuration = try configuration.applying(overrides: ["writer.batch-size": "200"])
/// ```
public struct GatewayConfiguration: Equatable, Sendable {
    /// Where the service reads its configuration.
    public static let defaultPath = "/etc/wearhouse/wearhouse.conf"
    /// The system service's store.
    public static let defaultStoreURL = "/var/lib/wearhouse/health.db"

    /// `[store]`
    public struct Store: Equatable, Sendable {
        /// A path, `sqlite:PATH` or `postgresql://...`.
        public var url = GatewayConfiguration.defaultStoreURL
    }

    /// `[bluetooth]`
    public struct Bluetooth: Equatable, Sendable {
        /// The adapter to use; `nil`: the first powered adapter that can act as a central.
        public var adapter: AdapterAddress?
        /// The bus where bluetoothd is.
        public var bus = DBusAddress.system
        public var connectTimeout = Duration.seconds(40)
        /// How long a connected sensor may stay silent before it is reconnected.
        public var watchdog = Duration.seconds(15)
        public var backoffMinimum = Duration.milliseconds(250)
        public var backoffMaximum = Duration.seconds(60)
        public var notifyMode = NotifyMode.properties
    }

    /// `[writer]`
    public struct Writer: Equatable, Sendable {
        /// Samples per store transaction at most.
        public var batchSize = 500
        /// How long a partial batch may wait.
        public var flushInterval = Duration.milliseconds(250)
        /// Samples the queue holds before it pushes back on the sessions.
        public var queueCapacity = 100_000
    }

    /// `[samples]`
    public struct Samples: Equatable, Sendable {
        public var heartbeatSeriesWindow = Duration.seconds(60)
        /// The zone whose offset is stored beside each sample; `nil`: the system's.
        public var timeZone: TimeZone?
    }

    /// `[service]`
    public struct Service: Equatable, Sendable {
        public var logLevel = LogLevel.info
        /// How often `STATUS=` is sent to systemd.
        public var statusInterval = Duration.seconds(10)
        /// How long a graceful stop may take before the process exits without it (below the unit's
        /// `TimeoutStopSec=20`, so that the log says why).
        public var stopTimeout = Duration.seconds(15)
        /// The source name samples are stored under.
        public var sourceName = "wearhouse"
    }

    public var store = Store()
    /// `[priority]`: the source priorities the service sets in the store when it starts and on every reload, by
    /// type identifier (``defaultPriorityKey`` for `default`). Types not named keep what the store has.
    public var priorities: [String: SourcePriority] = [:]
    public var bluetooth = Bluetooth()
    public var writer = Writer()
    public var samples = Samples()
    public var service = Service()

    /// The defaults.
    public init() {}

    /// Parses an INI text on top of the defaults; errors name `file` and the line.
    public init(parsing text: String, file: String) throws(ConfigurationError) {
        let ini = try INIFile(parsing: text, name: file)
        var origins: [String: String] = [:]
        for section in ini.sections where !Self.sectionNames.contains(section.name) {
            throw ConfigurationError(
                location: "\(file):\(section.line)",
                message: "unknown section [\(section.name)]; known: "
                    + Self.sectionNames.map { "[\($0)]" }.joined(separator: ", "))
        }
        for entry in ini.entries {
            let location = "\(file):\(entry.line)"
            try set(section: entry.section, key: entry.key, value: entry.value, location: location)
            origins["\(entry.section).\(entry.key)"] = location
        }
        try validate(origins: origins, fallback: file)
    }

    /// Reads the file at `path`. A missing file gives the defaults unless `required`.
    ///
    /// - Throws: ``ConfigurationError`` when the file cannot be read or holds an error.
    public static func load(path: String, required: Bool = false) throws(ConfigurationError) -> GatewayConfiguration {
        let text: String
        do {
            // FileHandle reads special files too (/dev/null, a pipe), which FileManager.contents does not.
            guard let data = FileHandle(forReadingAtPath: path).flatMap({ try? $0.readToEnd() ?? Data() }) else {
                if !FileManager.default.fileExists(atPath: path) {
                    if required { throw ConfigurationError(location: path, message: "no such file") }
                    return GatewayConfiguration()
                }
                throw ConfigurationError(location: path, message: "cannot read the file (permissions?)")
            }
            guard let decoded = String(data: data, encoding: .utf8) else {
                throw ConfigurationError(location: path, message: "not UTF-8 text")
            }
            text = decoded
        }
        return try GatewayConfiguration(parsing: text, file: path)
    }

    /// This configuration with `overrides` applied: keys are `section.key` (`writer.batch-size`), values as in
    /// the file. Overrides are applied in key order, then the whole is checked again.
    public func applying(overrides: [String: String]) throws(ConfigurationError) -> GatewayConfiguration {
        var result = self
        var origins: [String: String] = [:]
        for (name, value) in overrides.sorted(by: { $0.key < $1.key }) {
            let location = "override \(name)"
            guard let dot = name.firstIndex(of: "."), name.index(after: dot) != name.endIndex, dot != name.startIndex
            else {
                throw ConfigurationError(location: location, message: "expected section.key, such as writer.batch-size")
            }
            let section = String(name[..<dot])
            guard Self.sectionNames.contains(section) else {
                throw ConfigurationError(location: location, message: "unknown section [\(section)]")
            }
            try result.set(
                section: section, key: String(name[name.index(after: dot)...]), value: value.trimmingSpaces,
                location: location)
            origins[name] = location
        }
        try result.validate(origins: origins, fallback: "overrides")
        return result
    }

    /// Every key as `section.key`, in file order.
    public static var keyNames: [String] { keys.map { "\($0.section).\($0.name)" } }

    /// The value of `section.key` as the file would spell it, or `nil` for an unknown key.
    public func value(forKey name: String) -> String? {
        Self.keys.first { "\($0.section).\($0.name)" == name }?.read(self)
    }

    /// The whole configuration as an INI text that parses back to it.
    public var iniText: String {
        var text = ""
        for section in Self.sectionNames {
            text += (text.isEmpty ? "" : "\n") + "[\(section)]\n"
            for key in Self.keys where key.section == section {
                let value = key.read(self)
                text += value.isEmpty ? "\(key.name) =\n" : "\(key.name) = \(value)\n"
            }
            if section == Self.prioritySection {
                for (key, priority) in priorities.sorted(by: { $0.key < $1.key }) {
                    let name = key == defaultPriorityKey ? "default" : key
                    text += "\(name) = \(priority.order.map(SourcePriority.spelling).joined(separator: ", "))\n"
                    text += "\(name).unranked = \(priority.unranked.rawValue)\n"
                }
            }
        }
        return text
    }

    // MARK: - Setting and checking

    private mutating func set(section: String, key name: String, value: String, location: String)
        throws(ConfigurationError)
    {
        if section == Self.prioritySection {
            try setPriority(key: name, value: value, location: location)
            return
        }
        guard let key = Self.keys.first(where: { $0.section == section && $0.name == name }) else {
            let simplified = Self.simplified(name)
            let suggestion = Self.keys.first { $0.section == section && Self.simplified($0.name) == simplified }
            throw ConfigurationError(
                location: location,
                message: "unknown key '\(name)' in [\(section)]"
                    + (suggestion.map { " (did you mean '\($0.name)'?)" } ?? ""))
        }
        do {
            try key.write(&self, value)
        } catch {
            throw ConfigurationError(
                location: location, message: "invalid \(name) '\(value)' in [\(section)]: expected \(error.expected)")
        }
    }

    /// `TYPE = LIST` or `TYPE.unranked = gapFill|exclude` in `[priority]`, `TYPE` a cumulative type or `default`.
    private mutating func setPriority(key name: String, value: String, location: String) throws(ConfigurationError) {
        let isPolicy = name.hasSuffix(".unranked")
        let target = isPolicy ? String(name.dropLast(".unranked".count)) : name
        let key: String
        if target == "default" {
            key = defaultPriorityKey
        } else if let type = HealthTypeCatalog.type(target), type.aggregation == .cumulative {
            key = type.identifier
        } else {
            let cumulative = HealthTypeCatalog.all.filter { $0.aggregation == .cumulative }.map(\.identifier)
            throw ConfigurationError(
                location: location,
                message: "unknown key '\(name)' in [priority]: expected default or a cumulative type ("
                    + cumulative.joined(separator: ", ") + "), optionally followed by .unranked")
        }
        var priority = priorities[key] ?? .none
        if isPolicy {
            guard let policy = CumulativeMerge.UnrankedPolicy(rawValue: value) else {
                throw ConfigurationError(
                    location: location, message: "invalid \(name) '\(value)' in [priority]: expected gapFill or exclude"
                )
            }
            priority.unranked = policy
        } else {
            switch SourcePriority.parseEntries(value) {
            case .success(let entries): priority.order = entries
            case .failure(let error):
                throw ConfigurationError(location: location, message: "invalid \(name) in [priority]: \(error)")
            }
        }
        priorities[key] = priority
    }

    private func validate(origins: [String: String], fallback: String) throws(ConfigurationError) {
        for (key, priority) in priorities.sorted(by: { $0.key < $1.key }) {
            guard let reason = priority.invalidityReason else { continue }
            let name = key == defaultPriorityKey ? "default" : key
            throw ConfigurationError(
                location: origins["priority.\(name).unranked"] ?? origins["priority.\(name)"] ?? fallback,
                message: "\(name) in [priority]: \(reason)")
        }
        if bluetooth.backoffMinimum > bluetooth.backoffMaximum {
            throw ConfigurationError(
                location: origins["bluetooth.backoff-max"] ?? origins["bluetooth.backoff-min"] ?? fallback,
                message: "backoff-min (\(Self.seconds(bluetooth.backoffMinimum))) is above backoff-max "
                    + "(\(Self.seconds(bluetooth.backoffMaximum))) in [bluetooth]")
        }
        if writer.batchSize > writer.queueCapacity {
            throw ConfigurationError(
                location: origins["writer.queue-capacity"] ?? origins["writer.batch-size"] ?? fallback,
                message:
                    "batch-size (\(writer.batchSize)) is above queue-capacity (\(writer.queueCapacity)) in [writer]")
        }
    }

    private static func simplified(_ name: String) -> String {
        String(name.lowercased().filter { $0 != "-" && $0 != "_" })
    }
}
