/// Quantity samples of one stream, column by column: one type, source, device, subject, UTC offset and metadata,
/// and for each sample only its start, end and value.
///
/// This is how a sensor's samples travel from the gateway's sample builder to the store: a stream's fields are
/// held (and looked up, hashed, compared) once per batch instead of once per sample, and no sample id is made,
/// since a series sample's id is derived from its natural key (``QuantitySample/derivedID(type:source:device:start:end:)``)
/// whenever it is asked for. ``samples`` gives the same samples one by one.
public struct QuantitySeries: Hashable, Sendable {
    public var type: HealthType
    /// The UTC offset at every sample's start, in seconds (a stream ends where the offset changes).
    public var startOffsetSeconds: Int32
    public var source: Source
    public var device: Device?
    public var subject: String?
    public var metadata: [String: MetadataValue]
    /// Starts and ends in milliseconds since the Unix epoch, and values in the type's canonical unit.
    public private(set) var starts: [Int64] = []
    public private(set) var ends: [Int64] = []
    public private(set) var values: [Double] = []

    /// An empty stream.
    public init(
        type: HealthType, startOffsetSeconds: Int32 = 0, source: Source, device: Device? = nil, subject: String? = nil,
        metadata: [String: MetadataValue] = [:]
    ) {
        self.type = type
        self.startOffsetSeconds = startOffsetSeconds
        self.source = source
        self.device = device
        self.subject = subject
        self.metadata = metadata
    }

    /// The stream `sample` belongs to, holding only that sample.
    public init(_ sample: QuantitySample) {
        self.init(
            type: sample.type, startOffsetSeconds: sample.startOffsetSeconds, source: sample.source,
            device: sample.device, subject: sample.subject, metadata: sample.metadata)
        append(start: sample.start.milliseconds, end: sample.end.milliseconds, value: sample.value)
    }

    public var count: Int { starts.count }
    public var isEmpty: Bool { starts.isEmpty }

    public mutating func reserveCapacity(_ capacity: Int) {
        starts.reserveCapacity(capacity)
        ends.reserveCapacity(capacity)
        values.reserveCapacity(capacity)
    }

    /// Adds a sample (times in milliseconds since the Unix epoch).
    public mutating func append(start: Int64, end: Int64, value: Double) {
        starts.append(start)
        ends.append(end)
        values.append(value)
    }

    /// Adds the samples of `other`, which must be of the same stream.
    public mutating func append(contentsOf other: QuantitySeries) {
        starts += other.starts
        ends += other.ends
        values += other.values
    }

    /// Keeps only the samples at `indices` (in the order given).
    public func selecting(_ indices: some Sequence<Int>) -> QuantitySeries {
        var copy = self
        copy.starts = []
        copy.ends = []
        copy.values = []
        for index in indices { copy.append(start: starts[index], end: ends[index], value: values[index]) }
        return copy
    }

    /// Whether `sample` belongs to this stream (every field but times and value equal).
    public func holds(_ sample: QuantitySample) -> Bool {
        type.identifier == sample.type.identifier && startOffsetSeconds == sample.startOffsetSeconds
            && source == sample.source && device == sample.device && subject == sample.subject
            && metadata == sample.metadata
    }

    /// Sample `index`, with the id derived from its natural key.
    public func sample(at index: Int) -> QuantitySample {
        QuantitySample(
            type: type, start: Instant(milliseconds: starts[index]), end: Instant(milliseconds: ends[index]),
            startOffsetSeconds: startOffsetSeconds, value: values[index], source: source, device: device,
            subject: subject, metadata: metadata)
    }

    /// The samples one by one, in order.
    public var samples: [QuantitySample] { starts.indices.map(sample(at:)) }

    /// Why a store would reject sample `index` as the catalog's `type`, or `nil` when it is valid: the rule of
    /// ``QuantitySample/invalidityReason(as:)`` without building the sample (metadata is checked once per stream).
    public func invalidityReason(at index: Int, as type: HealthType) -> String? {
        QuantitySample.invalidityReason(start: starts[index], end: ends[index], value: values[index], as: type)
    }
}
