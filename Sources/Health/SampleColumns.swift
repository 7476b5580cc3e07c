public import Foundation

/// One page of a sample query, column by column: what ``SamplePage`` holds, without a sample value per sample.
/// Each sample is its id, times and value, and the index of its stream in ``streams`` (a ``QuantitySeries`` whose
/// columns are empty: the type, UTC offset, source, device, subject and metadata its samples share). A store that
/// keeps dense series in chunks reads them into a page without making a sample, its strings or its metadata per
/// value; an export formats each sample from its columns and its stream's fields, taken once per stream.
public struct SampleColumns: Sendable {
    /// The streams the page's samples belong to; their own columns are empty.
    public var streams: [QuantitySeries] = []
    /// Per sample: its stream's index in ``streams``.
    public var streamIndices: [Int32] = []
    public var ids: [UUID] = []
    /// Milliseconds since the Unix epoch.
    public var starts: [Int64] = []
    public var ends: [Int64] = []
    /// In the type's canonical unit.
    public var values: [Double] = []
    /// Pass as ``SampleQuery/cursor`` to get the next page; `nil` when this was the last.
    public var next: SampleCursor?

    public init() {}

    /// The samples of `page`, in its order, with its cursor.
    public init(_ page: SamplePage) {
        var index: [QuantitySeries: Int32] = [:]
        append(page.samples, streams: &index)
        next = page.next
    }

    /// Adds sample values, each in its stream: found in `streams` (which numbers the streams already in
    /// ``streams``), or added.
    public mutating func append(_ samples: [QuantitySample], streams index: inout [QuantitySeries: Int32]) {
        reserveCapacity(count + samples.count)
        for sample in samples {
            let stream = QuantitySeries(
                type: sample.type, startOffsetSeconds: sample.startOffsetSeconds, source: sample.source,
                device: sample.device, subject: sample.subject, metadata: sample.metadata)
            let position: Int32
            if let found = index[stream] {
                position = found
            } else {
                position = Int32(streams.count)
                streams.append(stream)
                index[stream] = position
            }
            append(
                id: sample.id, stream: position, start: sample.start.milliseconds, end: sample.end.milliseconds,
                value: sample.value)
        }
    }

    public var count: Int { ids.count }
    public var isEmpty: Bool { ids.isEmpty }

    public mutating func reserveCapacity(_ capacity: Int) {
        streamIndices.reserveCapacity(capacity)
        ids.reserveCapacity(capacity)
        starts.reserveCapacity(capacity)
        ends.reserveCapacity(capacity)
        values.reserveCapacity(capacity)
    }

    /// Adds a sample of the stream at `stream` in ``streams``.
    public mutating func append(id: UUID, stream: Int32, start: Int64, end: Int64, value: Double) {
        streamIndices.append(stream)
        ids.append(id)
        starts.append(start)
        ends.append(end)
        values.append(value)
    }

    /// Adds samples of the stream at `stream`, column by column (the columns of equal length).
    public mutating func append(stream: Int32, ids: [UUID], starts: [Int64], ends: [Int64], values: [Double]) {
        streamIndices.append(contentsOf: repeatElement(stream, count: ids.count))
        self.ids += ids
        self.starts += starts
        self.ends += ends
        self.values += values
    }

    /// Sample `index` as a value.
    public func sample(at index: Int) -> QuantitySample {
        let stream = streams[Int(streamIndices[index])]
        return QuantitySample(
            id: ids[index], type: stream.type, start: Instant(milliseconds: starts[index]),
            end: Instant(milliseconds: ends[index]), startOffsetSeconds: stream.startOffsetSeconds,
            value: values[index], source: stream.source, device: stream.device, subject: stream.subject,
            metadata: stream.metadata)
    }

    /// The samples one by one, in order.
    public var samples: [QuantitySample] { ids.indices.map(sample(at:)) }

    /// The start, end and id of the last sample.
    public var last: (start: Instant, end: Instant, id: UUID)? {
        guard let index = ids.indices.last else { return nil }
        return (Instant(milliseconds: starts[index]), Instant(milliseconds: ends[index]), ids[index])
    }

    /// Adds the samples of `other`, whose stream indices count in the same ``streams``.
    public mutating func append(contentsOf other: SampleColumns) {
        streamIndices += other.streamIndices
        ids += other.ids
        starts += other.starts
        ends += other.ends
        values += other.values
    }

    /// Sorts the samples in `order` (``SampleOrder``: its keys, then the id's bytes) and keeps the first `limit`:
    /// in place, without moving a sample, when they are already in order.
    public mutating func sort(by order: SampleOrder, limit: Int) {
        let comparison = SampleOrder.Comparison(order)
        var sorted = true
        for index in ids.indices.dropFirst()
        where comparison.precedes(
            (starts[index], ends[index], ids[index]), (starts[index - 1], ends[index - 1], ids[index - 1]))
        {
            sorted = false
            break
        }
        let kept = max(0, min(limit, count))
        guard !sorted else {
            if kept < count {
                let cut = count - kept
                streamIndices.removeLast(cut)
                ids.removeLast(cut)
                starts.removeLast(cut)
                ends.removeLast(cut)
                values.removeLast(cut)
            }
            return
        }
        var positions = Array(ids.indices)
        positions.sort { comparison.precedes((starts[$0], ends[$0], ids[$0]), (starts[$1], ends[$1], ids[$1])) }
        var result = SampleColumns()
        result.streams = streams
        result.next = next
        result.reserveCapacity(kept)
        for index in positions.prefix(kept) {
            result.append(
                id: ids[index], stream: streamIndices[index], start: starts[index], end: ends[index],
                value: values[index])
        }
        self = result
    }
}

extension SampleOrder {
    /// The order's comparison of `(start, end, id)` in milliseconds, its keys looked at once: a nil id (a cursor
    /// whose id is not a UUID) comes before every id, as an empty byte string does in
    /// ``precedes(_:_:)-(Instant,Instant,[UInt8])``.
    public struct Comparison: Sendable {
        private let startFirst: Bool
        private let firstAscending: Bool
        private let secondAscending: Bool
        private let idAscending: Bool

        public init(_ order: SampleOrder) {
            startFirst = order.keys[0].key == .start
            firstAscending = order.keys[0].ascending
            secondAscending = order.keys.count > 1 ? order.keys[1].ascending : firstAscending
            idAscending = order.idAscending
        }

        public func precedes(
            _ lhs: (start: Int64, end: Int64, id: UUID?), _ rhs: (start: Int64, end: Int64, id: UUID?)
        ) -> Bool {
            let (left, right) = startFirst ? (lhs.start, rhs.start) : (lhs.end, rhs.end)
            if left != right { return firstAscending ? left < right : left > right }
            let (leftNext, rightNext) = startFirst ? (lhs.end, rhs.end) : (lhs.start, rhs.start)
            if leftNext != rightNext { return secondAscending ? leftNext < rightNext : leftNext > rightNext }
            return idAscending ? Self.idPrecedes(lhs.id, rhs.id) : Self.idPrecedes(rhs.id, lhs.id)
        }

        /// Whether `lhs`'s bytes come before `rhs`'s, nil before any.
        static func idPrecedes(_ lhs: UUID?, _ rhs: UUID?) -> Bool {
            guard let rhs else { return false }
            guard let lhs else { return true }
            let left = words(lhs)
            let right = words(rhs)
            return left.0 != right.0 ? left.0 < right.0 : left.1 < right.1
        }

        /// The id's 16 bytes as two big-endian integers, which compare as the bytes do.
        static func words(_ id: UUID) -> (UInt64, UInt64) {
            withUnsafeBytes(of: id.uuid) {
                (
                    UInt64(bigEndian: $0.loadUnaligned(as: UInt64.self)),
                    UInt64(bigEndian: $0.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
                )
            }
        }
    }

    /// ``Comparison/precedes(_:_:)`` of this order.
    public func precedes(
        _ lhs: (start: Int64, end: Int64, id: UUID?), _ rhs: (start: Int64, end: Int64, id: UUID?)
    ) -> Bool {
        Comparison(self).precedes(lhs, rhs)
    }
}
