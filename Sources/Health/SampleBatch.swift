/// What a writer hands a store at once: quantity samples grouped into streams (``QuantitySeries``), heartbeat
/// series, samples that keep their own ids, and correlations (a blood pressure reading: ``Correlation``). The
/// gateway's sample builders append to a batch sample by sample; a stream is found again by its
/// ``StreamTag`` (at a position the builder remembers, else by a hash lookup), so adding a sample costs three
/// array appends, not a sample value with strings, metadata and an id.
public struct SampleBatch: Sendable {
    /// Names one writer's stream within batches: the writer (a sample builder) picks `origin` unique to itself
    /// and a `slot` per kind of sample it makes; the UTC offset is part of the stream.
    public struct StreamTag: Hashable, Sendable {
        public var origin: UInt64
        public var slot: UInt32
        public var offset: Int32

        public init(origin: UInt64, slot: UInt32, offset: Int32) {
            self.origin = origin
            self.slot = slot
            self.offset = offset
        }
    }

    public private(set) var quantities: [QuantitySeries] = []
    public var heartbeats: [HeartbeatSeriesSample] = []
    /// Samples that keep the ids they carry (an export read back, an app's own ids): saved one by one as
    /// `save([QuantitySample])` saves them, after ``quantities`` and ``heartbeats`` (and counted in that order).
    public var identified: [QuantitySample] = []
    /// Correlations with their members, saved as `save([Correlation])` saves them, last, in the batch's
    /// transaction: a correlation is never stored without the samples it came with.
    public var correlations: [Correlation] = []
    /// Workouts a sample builder closed (a fitness machine's session), each with the ids of its samples: saved in
    /// the batch's transaction after everything else, as `save([Workout])` saves them, each given those of its
    /// samples that are stored (a sample refused on its own is left out of its workout, not the workout). Not part
    /// of ``count``; the store's outcomes for the batch end with one per workout, and an ``InvalidSampleError``
    /// names workout `i` as ``count`` + `i`.
    public var workouts: [WorkoutEntry] = []
    /// The tag of each stream in ``quantities`` (nil for streams added without one).
    private var tags: [StreamTag?] = []
    private var streamIndex: [StreamTag: Int] = [:]
    public private(set) var quantityCount = 0

    public init() {}

    /// A batch of these samples, consecutive samples of one stream grouped. Ids are not kept: a batch's samples
    /// are named by their natural key (``QuantitySeries/sample(at:)``), so samples with ids of their own belong
    /// in ``identified``.
    public init(_ samples: [QuantitySample], heartbeats: [HeartbeatSeriesSample] = []) {
        for sample in samples { append(sample) }
        self.heartbeats = heartbeats
    }

    public var count: Int { quantityCount + heartbeats.count + identified.count + correlations.count }
    /// No samples and no workouts.
    public var isEmpty: Bool { count == 0 && workouts.isEmpty }

    /// Adds a sample to the stream tagged `tag`, creating the stream with `stream()` the first time.
    public mutating func append(
        _ tag: StreamTag, start: Int64, end: Int64, value: Double, stream: () -> QuantitySeries
    ) {
        var hint = -1
        append(tag, start: start, end: end, value: value, hint: &hint, stream: stream)
    }

    /// Adds a sample to the stream tagged `tag`, looking first at position `hint` (where the caller found the
    /// stream last time: a writer adding sample after sample to one batch then skips the hash lookup), and
    /// leaving the stream's position there.
    public mutating func append(
        _ tag: StreamTag, start: Int64, end: Int64, value: Double, hint: inout Int, stream: () -> QuantitySeries
    ) {
        let index: Int
        if hint >= 0, hint < tags.count, tags[hint] == tag {
            index = hint
        } else if let found = streamIndex[tag] {
            index = found
        } else {
            index = quantities.count
            var created = stream()
            created.startOffsetSeconds = tag.offset
            quantities.append(created)
            tags.append(tag)
            streamIndex[tag] = index
        }
        hint = index
        quantities[index].append(start: start, end: end, value: value)
        quantityCount += 1
    }

    /// Adds a sample: to the last stream when it belongs there, else as a new untagged stream.
    public mutating func append(_ sample: QuantitySample) {
        if let last = quantities.indices.last, tags[last] == nil, quantities[last].holds(sample) {
            quantities[last].append(
                start: sample.start.milliseconds, end: sample.end.milliseconds, value: sample.value)
        } else {
            quantities.append(QuantitySeries(sample))
            tags.append(nil)
        }
        quantityCount += 1
    }

    /// Adds a whole stream (untagged).
    public mutating func append(_ series: QuantitySeries) {
        guard !series.isEmpty else { return }
        quantities.append(series)
        tags.append(nil)
        quantityCount += series.count
    }

    /// Adds everything in `other`: streams with a tag already here are extended, others added.
    public mutating func append(contentsOf other: SampleBatch) {
        for (series, tag) in zip(other.quantities, other.tags) {
            if let tag, let index = streamIndex[tag] {
                quantities[index].append(contentsOf: series)
            } else {
                if let tag { streamIndex[tag] = quantities.count }
                quantities.append(series)
                tags.append(tag)
            }
        }
        quantityCount += other.quantityCount
        heartbeats += other.heartbeats
        identified += other.identified
        correlations += other.correlations
        workouts += other.workouts
    }

    /// The latest end among the samples of the batch.
    public var latestEnd: Instant? {
        let quantityEnd = quantities.compactMap { $0.ends.max() }.max()
        let seriesEnd = heartbeats.map(\.end.milliseconds).max()
        let identifiedEnd = identified.map(\.end.milliseconds).max()
        let correlationEnd = correlations.map(\.end.milliseconds).max()
        return [quantityEnd, seriesEnd, identifiedEnd, correlationEnd].compactMap { $0 }.max().map(
            Instant.init(milliseconds:))
    }

    /// The quantity samples one by one (stream by stream, each in the order added), with derived ids.
    public var samples: [QuantitySample] { quantities.flatMap(\.samples) }
}

extension SampleBatch {
    /// A sample or series a batch left out, for a writer's explanation: its type and start, and why.
    public struct Rejection: Hashable, Sendable {
        public var type: String
        public var startMilliseconds: Int64
        public var reason: String
    }

    /// The batch without the samples and series a store refuses on their own (an unknown type, an invalid
    /// value, time or metadata: ``QuantitySeries/invalidityReason(at:as:)``,
    /// ``HeartbeatSeriesSample/invalidityReason``), and what was left out. One pass, so that one bad sample does
    /// not cost the writer a save per sample of its batch.
    public func removingInvalid() -> (kept: SampleBatch, rejected: [Rejection]) {
        var kept = self
        var rejected: [Rejection] = []
        var streams: [QuantitySeries] = []
        var keptTags: [StreamTag?] = []
        for (series, tag) in zip(quantities, tags) {
            var streamReason: String?
            let type = HealthTypeCatalog.type(series.type.identifier)
            if type == nil || type?.aggregation == .series {
                streamReason = "unknown type '\(series.type.identifier)'"
            } else if !series.metadata.isEmpty {
                streamReason = series.metadata.invalidityReason
            }
            var good: [Int] = []
            for index in 0..<series.count {
                if let reason = streamReason ?? type.flatMap({ series.invalidityReason(at: index, as: $0) }) {
                    rejected.append(
                        Rejection(type: series.type.identifier, startMilliseconds: series.starts[index], reason: reason)
                    )
                } else {
                    good.append(index)
                }
            }
            guard !good.isEmpty else { continue }
            streams.append(good.count == series.count ? series : series.selecting(good))
            keptTags.append(tag)
        }
        kept.quantities = streams
        kept.tags = keptTags
        kept.streamIndex = [:]
        for (index, tag) in keptTags.enumerated() {
            if let tag { kept.streamIndex[tag] = index }
        }
        kept.quantityCount = streams.reduce(0) { $0 + $1.count }
        kept.heartbeats = heartbeats.filter { series in
            guard let reason = series.invalidityReason else { return true }
            rejected.append(
                Rejection(type: "heartbeatSeries", startMilliseconds: series.start.milliseconds, reason: reason))
            return false
        }
        kept.correlations = correlations.filter { correlation in
            guard let reason = correlation.invalidityReason else { return true }
            rejected.append(
                Rejection(
                    type: correlation.type.identifier, startMilliseconds: correlation.start.milliseconds,
                    reason: reason))
            return false
        }
        kept.workouts = workouts.filter { entry in
            guard let reason = entry.workout.invalidityReason else { return true }
            rejected.append(
                Rejection(
                    type: HealthType.workout.identifier, startMilliseconds: entry.workout.start.milliseconds,
                    reason: reason))
            return false
        }
        return (kept, rejected)
    }

    /// The batch without the sample, series, correlation or workout at `index` (``samples``, ``heartbeats``,
    /// ``identified``, ``correlations``, then ``workouts``, as a store's ``InvalidSampleError`` counts), and what it
    /// was; `nil` when `index` is outside the batch.
    public func removing(index: Int) -> (kept: SampleBatch, type: String, startMilliseconds: Int64)? {
        guard index >= 0, index < count + workouts.count else { return nil }
        var kept = self
        if index >= count {
            let entry = kept.workouts.remove(at: index - count)
            return (kept, HealthType.workout.identifier, entry.workout.start.milliseconds)
        }
        let identifiedStart = quantityCount + heartbeats.count
        if index >= identifiedStart + identified.count {
            let correlation = kept.correlations.remove(at: index - identifiedStart - identified.count)
            return (kept, correlation.type.identifier, correlation.start.milliseconds)
        }
        if index >= identifiedStart {
            let sample = kept.identified.remove(at: index - identifiedStart)
            return (kept, sample.type.identifier, sample.start.milliseconds)
        }
        if index >= quantityCount {
            let series = kept.heartbeats.remove(at: index - quantityCount)
            return (kept, "heartbeatSeries", series.start.milliseconds)
        }
        var first = 0
        for (position, series) in quantities.enumerated() {
            if index < first + series.count {
                let within = index - first
                let start = series.starts[within]
                kept.quantities[position] = series.selecting((0..<series.count).filter { $0 != within })
                kept.quantityCount -= 1
                return (kept, series.type.identifier, start)
            }
            first += series.count
        }
        return nil
    }
}

extension SampleBatch: Equatable {
    /// Batches are equal when they hold the same streams, heartbeat series, samples with ids and correlations
    /// (tags are how they were built).
    public static func == (lhs: SampleBatch, rhs: SampleBatch) -> Bool {
        lhs.quantities == rhs.quantities && lhs.heartbeats == rhs.heartbeats && lhs.identified == rhs.identified
            && lhs.correlations == rhs.correlations && lhs.workouts == rhs.workouts
    }
}
