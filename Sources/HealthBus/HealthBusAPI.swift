public import DBus

/// The names, limits and interface of `org.wearhouse.Health1`, the store's D-Bus API for apps (docs/app-api.md).
///
/// The service (``HealthBusServer``) and the Swift client (`WearhouseClient`) share this description; the shipped
/// `Systemd/org.wearhouse.Health1.xml` is the same interface written out with comments, and a test keeps the two
/// equal.
public enum HealthBusAPI {
    /// The well-known bus name the service owns.
    public static let busName = "org.wearhouse.Health1"
    /// The one object.
    public static let objectPath = "/org/wearhouse/Health1"
    /// The interface of that object.
    public static let interfaceName = "org.wearhouse.Health1"
    /// The signal sent (unicast) to observers allowed to read a type when samples of it were added.
    public static let samplesAddedSignal = "SamplesAdded"

    /// Samples per page when a query names no limit.
    public static let defaultPageSize = 1_000
    /// The most samples one reply carries; a larger `limit` is cut to this and the rest follows by cursor.
    public static let maximumPageSize = 5_000
    /// The most samples (or ids) one `SaveSamples` (or `DeleteSamples`) call may carry.
    public static let maximumBatchSize = 10_000
    /// The most buckets one `StatisticsCollection` call may ask for.
    public static let maximumBuckets = 10_000
    /// The most types one `Observe`, `StopObserving` or `RequestAuthorization` list may name (a type named twice
    /// counts twice).
    public static let maximumTypesPerCall = 64
    /// The most values one `sources`, `devices` or `subjects` filter may list.
    public static let maximumFilterValues = 1_000
    /// The most entries one sample's `metadata`, or one query's `metadata` option, may hold.
    public static let maximumMetadataEntries = 64
    /// The longest string, in UTF-8 bytes, a filter value, an id, a cursor or a sample's text property
    /// (source version, subject, device field, metadata key or text) may be.
    public static let maximumStringLength = 1_024
    /// The most beats one `SaveSamples` call may carry, over all its heartbeat series.
    public static let maximumBeatsPerCall = 1_000_000
    /// The most route locations one `SaveSamples` call may carry, over all its workouts.
    public static let maximumRouteLocationsPerCall = 1_000_000
    /// How many calls one connection may have waiting for the store at once; more are refused with
    /// `LimitExceeded` until one finishes, so that no caller can queue up work in front of the others.
    public static let maximumCallsInFlight = 8

    /// One sample on the wire: `(type, start_ms, end_ms, value, unit, properties)`. Times are milliseconds since
    /// 1970-01-01T00:00:00Z; `properties` holds everything optional (``SampleWire``).
    public static let sampleType = DBusType.struct([
        .string, .int64, .int64, .double, .string, .dictionary(key: .string, value: .variant),
    ])
    /// `a{sv}`.
    public static let options = DBusType.dictionary(key: .string, value: .variant)

    /// The interface as the service serves it.
    public static let interface = DBusInterface(
        name: interfaceName,
        methods: [
            .init("Types", outputs: [.init("types", .array(.struct([.string, .string, .string, options])))]),
            .init("Identity", outputs: [.init("app", .string), .init("uid", .uint32)]),
            .init(
                "RequestAuthorization",
                inputs: [.init("read", .array(.string)), .init("write", .array(.string))],
                outputs: [.init("app", .string), .init("pending", .boolean)]),
            .init(
                "SaveSamples", inputs: [.init("samples", .array(sampleType))],
                outputs: [.init("outcomes", .array(.string))]),
            .init("DeleteSamples", inputs: [.init("ids", .array(.string))], outputs: [.init("deleted", .uint32)]),
            .init(
                "AddWorkoutSamples", inputs: [.init("workout", .string), .init("ids", .array(.string))],
                outputs: [.init("added", .uint32)]),
            .init(
                "QuerySamples", inputs: [.init("type", .string), .init("options", options)],
                outputs: [.init("samples", .array(sampleType)), .init("cursor", .string)]),
            .init(
                "Statistics",
                inputs: [
                    .init("type", .string), .init("from", .int64), .init("to", .int64), .init("options", options),
                ],
                outputs: [.init("statistics", options)]),
            .init(
                "StatisticsCollection",
                inputs: [
                    .init("type", .string), .init("from", .int64), .init("to", .int64), .init("interval", .string),
                    .init("options", options),
                ],
                outputs: [.init("buckets", .array(options))]),
            .init(
                "Changes", inputs: [.init("type", .string), .init("anchor", .int64), .init("limit", .uint32)],
                outputs: [
                    .init("added", .array(sampleType)), .init("deleted", .array(.string)),
                    .init("anchor", .int64), .init("more", .boolean),
                ]),
            .init("Observe", inputs: [.init("types", .array(.string))], outputs: [.init("anchor", .int64)]),
            .init("StopObserving", inputs: [.init("types", .array(.string))]),
            .init(
                "Characteristics", inputs: [.init("options", options)],
                outputs: [.init("characteristics", options)]),
            .init(
                "Sources", inputs: [.init("type", .string)],
                outputs: [.init("sources", .array(.struct([.string, .string, .string, .uint32, .int64, .int64])))]),
            .init(
                "Priorities", outputs: [.init("priorities", .array(.struct([.string, .array(.string), .string])))]),
            .init(
                "SetPriority",
                inputs: [.init("type", .string), .init("order", .array(.string)), .init("unranked", .string)]),
            .init("ResetPriority", inputs: [.init("type", .string)]),
        ],
        signals: [
            .init(samplesAddedSignal, arguments: [.init("type", .string), .init("anchor", .int64)])
        ])
}
