public import Foundation

/// A condition on one metadata key.
public enum MetadataPredicate: Hashable, Sendable {
    case exists(String)
    case equals(String, MetadataValue)
}

/// Which samples a sample query returns, in what order, and how many (HealthKit's `HKSampleQuery` with
/// `predicateForSamples(withStart:end:options:)` and source/device predicates, plus subjects and paging).
public struct SampleQuery: Hashable, Sendable {
    public var type: HealthType
    /// Range start. By default a sample matches when it overlaps `[from, to)` (an instant matches when it
    /// lies in the range); `strictStart` demands `start >= from`.
    public var from: Instant?
    public var to: Instant?
    public var strictStart: Bool
    /// Demands `end <= to`.
    public var strictEnd: Bool
    /// Source identifiers; `nil` means any.
    public var sources: [String]?
    /// Device keys (``Device/key``); `nil` means any.
    public var devices: [String]?
    /// Subjects; `nil` means any.
    public var subjects: [String]?
    public var metadata: [MetadataPredicate]
    /// The sort keys in order (HealthKit's sort descriptors); ties are broken as ``SampleOrder`` says. Empty
    /// sorts by start ascending.
    public var sort: [SampleSortDescriptor]
    /// Whether the first sort key is ascending. Setting it sorts chronologically in that direction: by start, then
    /// end, then id, oldest (or newest) first.
    public var ascending: Bool {
        get { sort.first?.ascending ?? true }
        set {
            sort = [SampleSortDescriptor(.start, ascending: newValue), SampleSortDescriptor(.end, ascending: newValue)]
        }
    }
    public var limit: Int?
    /// Continue after the last sample of a previous page.
    public var cursor: SampleCursor?
    /// Only the samples associated with this workout (HealthKit's `predicateForObjects(from: workout)`;
    /// ``HealthStore/add(_:to:as:)``); `nil` means any.
    public var workout: UUID? = nil

    public init(
        type: HealthType, from: Instant? = nil, to: Instant? = nil, strictStart: Bool = false, strictEnd: Bool = false,
        sources: [String]? = nil, devices: [String]? = nil, subjects: [String]? = nil,
        metadata: [MetadataPredicate] = [], ascending: Bool = true, sort: [SampleSortDescriptor]? = nil,
        limit: Int? = nil, cursor: SampleCursor? = nil
    ) {
        self.type = type
        self.from = from
        self.to = to
        self.strictStart = strictStart
        self.strictEnd = strictEnd
        self.sources = sources
        self.devices = devices
        self.subjects = subjects
        self.metadata = metadata
        self.sort =
            sort ?? [
                SampleSortDescriptor(.start, ascending: ascending), SampleSortDescriptor(.end, ascending: ascending),
            ]
        self.limit = limit
        self.cursor = cursor
    }

    /// Whether a sample with this interval matches the time range of the query.
    public func matchesTime(start: Instant, end: Instant) -> Bool {
        if let from {
            if strictStart {
                if start < from { return false }
            } else if end < from || (end == from && start < end) {
                return false
            }
        }
        if let to {
            if strictEnd { if end > to { return false } } else if start >= to { return false }
        }
        return true
    }
}

/// Where a page of samples ended: the sort key of its last sample. Opaque to callers.
public struct SampleCursor: Hashable, Sendable, Codable {
    public var start: Instant
    public var end: Instant
    public var id: String

    public init(start: Instant, end: Instant, id: String) {
        self.start = start
        self.end = end
        self.id = id
    }
}
