/// Who has written a type (HealthKit's `HKSourceQuery`, with what the person needs to rank them): one provenance,
/// how many samples (heartbeat series: series) of the type it wrote and when.
public struct SourceSummary: Hashable, Sendable {
    public var provenance: Provenance
    /// The device's name, when it has one.
    public var deviceName: String?
    public var count: Int
    /// The earliest start and the latest end of its samples of the type.
    public var first: Instant
    public var last: Instant

    public init(provenance: Provenance, deviceName: String? = nil, count: Int, first: Instant, last: Instant) {
        self.provenance = provenance
        self.deviceName = deviceName
        self.count = count
        self.first = first
        self.last = last
    }

    /// The summaries of each `(source, device)` once: counts added, times widened (a source's versions are one).
    /// Sorted by provenance.
    public static func combined(_ parts: [SourceSummary]) -> [SourceSummary] {
        var byProvenance: [Provenance: SourceSummary] = [:]
        for part in parts {
            guard var known = byProvenance[part.provenance] else {
                byProvenance[part.provenance] = part
                continue
            }
            known.count += part.count
            known.first = min(known.first, part.first)
            known.last = max(known.last, part.last)
            known.deviceName = known.deviceName ?? part.deviceName
            byProvenance[part.provenance] = known
        }
        return byProvenance.values.sorted { $0.provenance < $1.provenance }
    }
}
