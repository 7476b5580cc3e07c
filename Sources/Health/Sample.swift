public import Foundation
internal import Support

/// A metadata value: HealthKit's metadata dictionaries hold strings, numbers, dates and quantities.
public enum MetadataValue: Hashable, Sendable {
    case string(String)
    case number(Double)
    /// A whole number as the writer gave it (a D-Bus integer): kept, and given back, as an integer.
    case integer(Int64)
    case bool(Bool)
    case date(Instant)
    /// A value with its HealthKit unit string.
    case quantity(Double, unit: String)
}

/// Metadata keys with HealthKit's names (without the `HKMetadataKey` prefix) where one exists.
public enum MetadataKey {
    /// BLE Body Sensor Location 0-6, which HealthKit's `HKHeartRateSensorLocation` mirrors one to one.
    public static let heartRateSensorLocation = "heartRateSensorLocation"
    public static let deviceSerialNumber = "deviceSerialNumber"
    /// A client's own identifier for a sample; with `syncVersion`, makes app writes idempotent.
    public static let externalUUID = "externalUUID"
    public static let syncVersion = "syncVersion"
    /// The IANA time zone where the sample was taken.
    public static let timeZone = "timeZone"
    public static let wasUserEntered = "wasUserEntered"
    /// RSC Sensor Location 0-16 (wearhouse's own key; HealthKit has none).
    public static let sensorLocation = "sensorLocation"
    /// True when the value was estimated rather than measured (steps from cadence).
    public static let wasEstimated = "wasEstimated"
    /// The sensor reported no skin contact while measuring.
    public static let sensorContactLost = "sensorContactLost"
    /// Root mean square of successive RR differences over the same window, in ms.
    public static let heartRateVariabilityRMSSD = "heartRateVariabilityRMSSD"
    /// Where a body temperature was taken: BLE Temperature Type 1-9, which HealthKit's
    /// `HKBodyTemperatureSensorLocation` numbers the same way.
    public static let bodyTemperatureSensorLocation = "bodyTemperatureSensorLocation"
    /// The user index a multi-user scale or cuff gave the reading (0-254; wearhouse's own key).
    public static let userIndex = "userIndex"
    /// The time stamp the device sent, as it sent it, when the gateway did not use it (wearhouse's own key).
    public static let deviceTimeStamp = "deviceTimeStamp"
    /// How far the device's clock was from the receive time, in seconds (device minus gateway; wearhouse's own).
    public static let deviceClockOffset = "deviceClockOffset"
    /// Blood pressure: the mean arterial pressure the cuff computed, in mmHg (wearhouse's own key).
    public static let meanArterialPressure = "meanArterialPressure"
}

/// One quantity over an interval (or at an instant when `start == end`): HealthKit's `HKQuantitySample`.
///
/// Immutable once written: a store never updates a sample, it deletes (leaving a tombstone) or replaces it by
/// a newer version of the same external UUID.
public struct QuantitySample: Hashable, Sendable, Identifiable {
    public var id: UUID
    public var type: HealthType
    public var start: Instant
    public var end: Instant
    /// The UTC offset at `start`, in seconds (local wall time = start + offset).
    public var startOffsetSeconds: Int32
    /// The value in the type's canonical unit.
    public var value: Double
    public var source: Source
    public var device: Device?
    /// Who wore the sensor; a gateway serves many people.
    public var subject: String?
    public var metadata: [String: MetadataValue]

    /// A sample. Without an `id` it gets ``derivedID(type:source:device:start:end:)``, so that writing the same
    /// measurement twice names the same sample, and the store can keep dense series compactly; a sample with an
    /// `externalUUID` gets a new time-ordered id instead, since each of its versions is a new sample.
    public init(
        id: UUID? = nil, type: HealthType, start: Instant, end: Instant, startOffsetSeconds: Int32 = 0,
        value: Double, source: Source, device: Device? = nil, subject: String? = nil,
        metadata: [String: MetadataValue] = [:]
    ) {
        // A client's own id (externalUUID) versions the sample: each version is a new sample with a new id.
        self.id =
            id
            ?? (metadata[MetadataKey.externalUUID] != nil
                ? .timeOrdered()
                : Self.derivedID(
                    type: type.identifier, source: source.identifier, device: device?.key, start: start, end: end))
        self.type = type
        self.start = start
        self.end = end
        self.startOffsetSeconds = startOffsetSeconds
        self.value = value
        self.source = source
        self.device = device
        self.subject = subject
        self.metadata = metadata
    }

    public var provenance: Provenance { Provenance(source: source.identifier, device: device?.key) }

    /// Whether ``id`` is the one derived from the natural key (and so need not be stored).
    public var hasDerivedID: Bool {
        id
            == Self.derivedID(
                type: type.identifier, source: source.identifier, device: device?.key, start: start, end: end)
    }

    /// The id of the sample with this natural key `(type, source, device, start, end)`: the start in milliseconds
    /// in the first 48 bits (so ids sort by time, like version 7), then 74 bits of a hash of the key, with the
    /// version 8 and RFC 4122 variant bits set.
    public static func derivedID(type: String, source: String, device: String?, start: Instant, end: Instant) -> UUID {
        DerivedIDStream(type: type, source: source, device: device).id(
            start: start.milliseconds, end: end.milliseconds)
    }
}

/// The part of a derived id (``QuantitySample/derivedID(type:source:device:start:end:)``) that a stream's samples
/// share: the hash of its type, source and device, taken once, so that naming each sample of a stream costs the
/// hash of its two times only (a store reading a chunk of a series, an export).
public struct DerivedIDStream: Hashable, Sendable {
    /// FNV-1a of the type, source and device, each followed by 0xFF (a byte no UTF-8 string contains).
    private let hash: UInt64

    public init(type: String, source: String, device: String?) {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325  // FNV-1a
        func mix(_ text: String) {
            for byte in text.utf8 { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01B3 }
            hash = (hash ^ 0xFF) &* 0x0000_0100_0000_01B3
        }
        mix(type)
        mix(source)
        mix(device ?? "")
        self.hash = hash
    }

    /// The id of the stream's sample with these times (milliseconds since the Unix epoch): the start in the first
    /// 48 bits (so ids sort by time, like version 7), then 74 bits of the hash, with the version 8 and RFC 4122
    /// variant bits set.
    public func id(start: Int64, end: Int64) -> UUID {
        var hash = self.hash
        var rest = UInt64(bitPattern: start)
        for _ in 0..<8 {
            hash = (hash ^ (rest & 0xFF)) &* 0x0000_0100_0000_01B3
            rest >>= 8
        }
        rest = UInt64(bitPattern: end)
        for _ in 0..<8 {
            hash = (hash ^ (rest & 0xFF)) &* 0x0000_0100_0000_01B3
            rest >>= 8
        }
        let high = SplitMix64.mix(hash)
        let low = SplitMix64.mix(hash ^ 0x9E37_79B9_7F4A_7C15)
        let ms = UInt64(bitPattern: start) & 0xFFFF_FFFF_FFFF
        func byte(_ value: UInt64, _ shift: UInt64) -> UInt8 { UInt8(truncatingIfNeeded: value >> shift) }
        return UUID(
            uuid: (
                byte(ms, 40), byte(ms, 32), byte(ms, 24), byte(ms, 16), byte(ms, 8), byte(ms, 0),
                0x80 | byte(high, 60) & 0x0F, byte(high, 52), 0x80 | byte(high, 46) & 0x3F, byte(high, 38),
                byte(low, 56), byte(low, 48), byte(low, 40), byte(low, 32), byte(low, 24), byte(low, 16)
            ))
    }
}

/// One beat of a heartbeat series: time since the series start, the RR interval that ended it, and whether
/// beats are missing before it (contact lost, notifications dropped).
public struct Beat: Hashable, Sendable {
    public var offsetMilliseconds: Double
    public var rrMilliseconds: Double
    public var precededByGap: Bool

    public init(offsetMilliseconds: Double, rrMilliseconds: Double, precededByGap: Bool = false) {
        self.offsetMilliseconds = offsetMilliseconds
        self.rrMilliseconds = rrMilliseconds
        self.precededByGap = precededByGap
    }
}

/// Beat-to-beat data: HealthKit's `HKHeartbeatSeriesSample`.
///
/// Beats are measured from ``start``: a beat's offset is the time since the series start, its RR interval the
/// time since the beat before it, as the sensor reported it (BLE Heart Rate Measurement gives RR in 1/1024 s, so
/// the gateway's values are multiples of 0.9765625 ms, and its offsets cumulative sums of them, restarting after
/// a gap). The store keeps such values exactly (see the SQLite engine's `HeartbeatCodec`).
public struct HeartbeatSeriesSample: Hashable, Sendable, Identifiable {
    public var id: UUID
    public var start: Instant
    public var end: Instant
    public var startOffsetSeconds: Int32
    public var beats: [Beat]
    public var source: Source
    public var device: Device?
    public var subject: String?
    public var metadata: [String: MetadataValue]

    /// A series. Without an `id` it gets ``derivedID(source:device:start:end:)``, so that writing the same series
    /// twice (a replayed trace) names the same sample and is stored once.
    public init(
        id: UUID? = nil, start: Instant, end: Instant, startOffsetSeconds: Int32 = 0, beats: [Beat],
        source: Source, device: Device? = nil, subject: String? = nil, metadata: [String: MetadataValue] = [:]
    ) {
        self.id = id ?? Self.derivedID(source: source.identifier, device: device?.key, start: start, end: end)
        self.start = start
        self.end = end
        self.startOffsetSeconds = startOffsetSeconds
        self.beats = beats
        self.source = source
        self.device = device
        self.subject = subject
        self.metadata = metadata
    }

    public var provenance: Provenance { Provenance(source: source.identifier, device: device?.key) }

    /// The id of the series with this natural key `(heartbeatSeries, source, device, start, end)`, made as
    /// ``QuantitySample/derivedID(type:source:device:start:end:)`` makes a quantity sample's.
    public static func derivedID(source: String, device: String?, start: Instant, end: Instant) -> UUID {
        QuantitySample.derivedID(
            type: HealthType.heartbeatSeries.identifier, source: source, device: device, start: start, end: end)
    }

    /// Whether ``id`` is the one derived from the natural key.
    public var hasDerivedID: Bool {
        id == Self.derivedID(source: source.identifier, device: device?.key, start: start, end: end)
    }

    /// The RR intervals a store accepts, in ms: the catalog's range for `heartbeatSeries`, 200-60,000 ms, which
    /// is the heart rate range a store accepts (1-300 count/min) seen as beat-to-beat intervals.
    public static var validRRMilliseconds: ClosedRange<Double> {
        HealthType.heartbeatSeries.validRange ?? 200...60_000
    }

    /// Why a store would reject this series, or `nil` when it is valid: at least one beat; `end >= start`;
    /// offsets finite, strictly increasing and inside `[0, end - start]`; every RR interval in
    /// ``validRRMilliseconds``; metadata numbers finite; an id of the derived form only when it is the series' own
    /// (``QuantitySample/idInvalidityReason``). Writers (the gateway) can check before saving, since one invalid series rejects
    /// its whole batch.
    public var invalidityReason: String? {
        if let reason = Instant.invalidityReason(start: start.milliseconds, end: end.milliseconds) { return reason }
        guard !beats.isEmpty else { return "a heartbeat series needs at least one beat" }
        if let reason = metadata.invalidityReason { return reason }
        if id.hasDerivedForm,
            let reason = QuantitySample.derivedFormReason(
                hasClientID: metadata[MetadataKey.externalUUID] != nil, isOwn: hasDerivedID)
        {
            return reason
        }
        let duration = Double(end.milliseconds - start.milliseconds)
        let range = Self.validRRMilliseconds
        var previous = -Double.infinity
        for (index, beat) in beats.enumerated() {
            guard beat.offsetMilliseconds.isFinite, beat.rrMilliseconds.isFinite else {
                return "beat \(index + 1): offset and RR interval must be finite numbers"
            }
            guard beat.offsetMilliseconds > previous else {
                return "beat \(index + 1): offsets must increase (\(beat.offsetMilliseconds) ms after \(previous) ms)"
            }
            guard beat.offsetMilliseconds >= 0, beat.offsetMilliseconds <= duration else {
                return
                    "beat \(index + 1): offset \(beat.offsetMilliseconds) ms is outside the series (0...\(duration) ms)"
            }
            guard range.contains(beat.rrMilliseconds) else {
                return "beat \(index + 1): RR interval \(beat.rrMilliseconds) ms is outside "
                    + "\(range.lowerBound)...\(range.upperBound) ms"
            }
            previous = beat.offsetMilliseconds
        }
        return nil
    }
}
