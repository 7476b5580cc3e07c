import Foundation
import Health

/// The options the store commands share, declared once: `--store`, `--type`, the time zone and the time range.
enum StoreOptions {
    static let storeHelp =
        "The store: a path, sqlite:PATH or postgresql://... (default: $WEARHOUSE_STORE, else "
        + "~/.local/share/wearhouse/health.db if it exists, else the [store] url of /etc/wearhouse/wearhouse.conf "
        + "if that exists)."

    /// The identifiers `--type` takes (`wearhouse types` lists them).
    static let typeNames = HealthTypeCatalog.all.map(\.identifier)

    /// The default of `--time-zone`.
    static let utc = TimeZone(identifier: "UTC") ?? .gmt

    /// `--store <url>`: passed to ``StoreLocation`` as given (`nil`: its default).
    static func store<Options: CommandOptions>(
        _ path: any WritableKeyPath<Options, String?> & Sendable, help: String = storeHelp
    )
        -> Option<Options>
    {
        .text("store", value: "url", path, kind: .path, help: help)
    }

    /// `--type <type>`, required: a type of samples, or with `objects` also a correlation or workout type.
    static func type<Options: CommandOptions>(
        _ path: any WritableKeyPath<Options, HealthType> & Sendable, help: String, objects: Bool = false
    ) -> Option<Options> {
        .value(
            "type", value: "type", path, kind: .choice(typeNames), required: true, help: help, format: \.identifier,
            parse: objects ? sampleOrObjectType : sampleType)
    }

    /// `--type <type>`, `nil` when not given.
    static func type<Options: CommandOptions>(
        _ path: any WritableKeyPath<Options, HealthType?> & Sendable, help: String
    )
        -> Option<Options>
    {
        .value("type", value: "type", path, kind: .choice(typeNames), help: help, parse: healthType)
    }

    /// `--name <types>`: comma-separated types, repeatable.
    static func types<Options: CommandOptions>(
        _ name: String, _ path: any WritableKeyPath<Options, [HealthType]?> & Sendable, help: String
    ) -> Option<Options> {
        .list(name, value: "types", path, allowed: typeNames, help: help, element: healthType)
    }

    /// `--time-zone <zone>`: an IANA time zone.
    static func timeZone<Options: CommandOptions>(
        _ path: any WritableKeyPath<Options, TimeZone> & Sendable, help: String = "IANA zone for wall times."
    ) -> Option<Options> {
        .value("time-zone", value: "zone", path, help: help, format: { $0 == utc ? "UTC" : $0.identifier }) {
            name throws(UsageError) in
            guard let zone = TimeZone(identifier: name) else { throw UsageError("unknown time zone \(echo(name))") }
            return zone
        }
    }

    /// `--from`/`--to`: an instant with an offset (`2025-03-30T08:00:00Z`), or wall time in `--time-zone`
    /// (resolved by ``instant(_:in:)``).
    static func time<Options: CommandOptions>(
        _ name: String, _ path: any WritableKeyPath<Options, StatisticsTime?> & Sendable, help: String
    ) -> Option<Options> {
        .value(name, value: "time", path, help: help) { text throws(UsageError) in
            do {
                return try StatisticsTime(parsing: text)
            } catch {
                throw UsageError("--\(name): \(error)")
            }
        }
    }

    /// A `--from`/`--to` time as an instant: wall time is read in `zone`.
    static func instant(_ time: StatisticsTime?, in zone: TimeZone) -> Instant? {
        switch time {
        case nil: nil
        case .instant(let instant)?: instant
        case .local(let local)?: StatisticsBuckets.instant(for: local, in: zone)
        }
    }

    /// The type named `name` (`heartRate`).
    static func healthType(_ name: String) throws(UsageError) -> HealthType {
        guard let type = HealthTypeCatalog.type(name) else {
            throw UsageError(
                "unknown type \(echo(name)); the \(typeNames.count) types have HealthKit's names (heartRate, "
                    + "stepCount, bodyMass, sleepAnalysis, ...): see 'wearhouse types'")
        }
        return type
    }

    /// A type whose samples, correlations or workouts the store holds.
    static func sampleOrObjectType(_ name: String) throws(UsageError) -> HealthType {
        let type = try healthType(name)
        if type.kind == .correlation || type.kind == .workout { return type }
        return try sampleType(name)
    }

    /// A type whose samples the store holds: a quantity, a category or heartbeat series.
    static func sampleType(_ name: String) throws(UsageError) -> HealthType {
        let type = try healthType(name)
        guard type.isSampleType || type.kind == .series else {
            throw UsageError(
                "\(type.identifier) is a \(type.kind.rawValue) type, not one of samples"
                    + (type.kind == .characteristic ? " (see 'wearhouse me')" : "")
                    + (type.kind == .route ? " (routes come with their workouts: --type workout)" : ""))
        }
        return type
    }
}
