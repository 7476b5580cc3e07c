/// What a write transaction does to the cumulative rollups (``CumulativeRollup``), gathered while it writes and
/// applied by the engine before it commits: portions to add to stored quarters, quarters to rebuild from the raw
/// samples, and changes to the counts of long samples per span. Both engines keep one and apply it to their tables.
public struct CumulativeRollupChanges: Sendable {
    /// A sample longer than ``CumulativeRollup/longestSpread``: counted per type and span (`cumulative_spans`),
    /// and the quarters it crosses are swept.
    public struct Span: Hashable, Sendable {
        public var typeID: Int64
        public var start: Int64
        public var end: Int64

        public init(typeID: Int64, start: Int64, end: Int64) {
            self.typeID = typeID
            self.start = start
            self.end = end
        }
    }

    /// Portions added per stream and quarter (the stored value merged with it, unless the quarter is stale), but
    /// for those of ``current``.
    private var added: [RollupKey: CumulativeRollupValue] = [:]
    /// The quarter of one stream being added to: a stream's samples come in time order, so most portions fall in
    /// the quarter of the one before, and are merged here without hashing the key into ``added`` (which took a
    /// fifth of saving a stream's samples). Moved into ``added`` when another quarter or stream comes.
    private var current: (key: RollupKey, value: CumulativeRollupValue)?
    /// Quarters to rebuild from the samples that are there at the commit.
    public private(set) var stale: Set<RollupKey> = []
    /// Changes to the counts of long samples.
    public private(set) var spans: [Span: Int64] = [:]

    public init() {}

    public var isEmpty: Bool { current == nil && added.isEmpty && stale.isEmpty && spans.isEmpty }

    /// An inserted sample of a cumulative type, with its write-order number.
    public mutating func inserted(
        typeID: Int64, sourceID: Int64, deviceID: Int64, subjectID: Int64, start: Int64, end: Int64, value: Double,
        seq: Int64
    ) {
        guard CumulativeRollup.isSpread(start: start, end: end) else {
            spans[Span(typeID: typeID, start: start, end: end), default: 0] += 1
            return
        }
        CumulativeRollup.forEachPortion(start: start, end: end, value: value, seq: seq) { quarter, portion in
            let key = RollupKey(
                typeID: typeID, sourceID: sourceID, deviceID: deviceID, subjectID: subjectID, bucket: quarter)
            if current?.key == key {
                current?.value.merge(portion)
            } else {
                settle()
                current = (key, portion)
            }
        }
    }

    /// Moves ``current`` into ``added``.
    private mutating func settle() {
        guard let run = current else { return }
        added[run.key, default: CumulativeRollupValue()].merge(run.value)
        current = nil
    }

    /// A removed sample of a cumulative type: the quarters it covered are rebuilt.
    public mutating func removed(
        typeID: Int64, sourceID: Int64, deviceID: Int64, subjectID: Int64, start: Int64, end: Int64
    ) {
        guard CumulativeRollup.isSpread(start: start, end: end) else {
            spans[Span(typeID: typeID, start: start, end: end), default: 0] -= 1
            return
        }
        CumulativeRollup.forEachPortion(start: start, end: end, value: 0, seq: 0) { quarter, _ in
            stale.insert(
                RollupKey(typeID: typeID, sourceID: sourceID, deviceID: deviceID, subjectID: subjectID, bucket: quarter)
            )
        }
    }

    /// A quarter to rebuild (retention cut into it).
    public mutating func markStale(_ key: RollupKey) {
        stale.insert(key)
    }

    /// The portions to merge into stored quarters: those of quarters not rebuilt anyway.
    public var additions: some Sequence<(key: RollupKey, value: CumulativeRollupValue)> {
        var all = self
        all.settle()
        let stale = stale
        return all.added.lazy.filter { !stale.contains($0.key) }.map { (key: $0.key, value: $0.value) }
    }

    /// The span counts that change.
    public var spanChanges: some Sequence<(span: Span, delta: Int64)> {
        spans.lazy.filter { $0.value != 0 }.map { (span: $0.key, delta: $0.value) }
    }

    public mutating func removeAll() {
        current = nil
        added.removeAll(keepingCapacity: true)
        stale.removeAll(keepingCapacity: true)
        spans.removeAll(keepingCapacity: true)
    }
}

extension CumulativeRollup {
    /// One stored sample of a cumulative type, as the rollups see it.
    public struct Point: Sendable {
        public var start: Int64
        public var end: Int64
        public var value: Double
        public var seq: Int64

        public init(start: Int64, end: Int64, value: Double, seq: Int64) {
            self.start = start
            self.end = end
            self.value = value
            self.seq = seq
        }
    }

    /// The rollup of `quarter` rebuilt from one stream's samples that may reach it (any order), or `nil` when
    /// none does.
    public static func rebuild(quarter: Int64, from points: [Point]) -> CumulativeRollupValue? {
        var value = CumulativeRollupValue()
        var any = false
        for point in points.sorted(by: { ($0.start, $0.end) < ($1.start, $1.end) })
        where isSpread(start: point.start, end: point.end) {
            forEachPortion(start: point.start, end: point.end, value: point.value, seq: point.seq) { at, portion in
                guard at == quarter else { return }
                value.merge(portion)
                any = true
            }
        }
        return any ? value : nil
    }

    /// Builds the rollups of stored samples (the migration that adds them): give it each stream's samples in
    /// `(start, end)` order, streams one after the other; it hands out each quarter once no later sample of the
    /// stream can reach it, so it holds about a day of quarters whatever the store's size.
    public struct Builder {
        /// The stream being read: type, source, device, subject (``RollupKey`` without its bucket).
        private var stream: RollupKey?
        private var open: [Int64: CumulativeRollupValue] = [:]
        /// Long samples counted per type and span.
        public private(set) var spans: [CumulativeRollupChanges.Span: Int64] = [:]

        public init() {}

        /// Adds a sample of stream `stream` (its bucket ignored); `emit` receives the quarters that are complete.
        public mutating func add(
            _ point: Point, stream key: RollupKey, emit: (RollupKey, CumulativeRollupValue) throws -> Void
        ) rethrows {
            var streamKey = key
            streamKey.bucket = 0
            if stream != streamKey {
                try finish(emit: emit)
                stream = streamKey
            }
            guard isSpread(start: point.start, end: point.end) else {
                let span = CumulativeRollupChanges.Span(typeID: key.typeID, start: point.start, end: point.end)
                spans[span, default: 0] += 1
                return
            }
            // Samples come in start order: quarters before this one's are complete.
            let first = Rollup.bucket(point.start)
            if open.keys.contains(where: { $0 < first }) {
                for quarter in open.keys.filter({ $0 < first }).sorted() {
                    if let value = open.removeValue(forKey: quarter) { try emit(at(quarter), value) }
                }
            }
            forEachPortion(start: point.start, end: point.end, value: point.value, seq: point.seq) { quarter, portion in
                open[quarter, default: CumulativeRollupValue()].merge(portion)
            }
        }

        /// Hands out the quarters of the last stream.
        public mutating func finish(emit: (RollupKey, CumulativeRollupValue) throws -> Void) rethrows {
            for quarter in open.keys.sorted() {
                if let value = open[quarter] { try emit(at(quarter), value) }
            }
            open.removeAll(keepingCapacity: true)
        }

        private func at(_ quarter: Int64) -> RollupKey {
            var key = stream ?? RollupKey(typeID: 0, sourceID: 0, deviceID: 0, subjectID: 0, bucket: 0)
            key.bucket = quarter
            return key
        }
    }
}
