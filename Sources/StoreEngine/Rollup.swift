/// 15-minute rollups of discrete types, which both engines keep the same way: the quarter hour
/// a sample falls in, one stream's quarter hour as a key, and the mergeable aggregates kept for it.
/// SQLite also keeps them per UTC day (the quarters' sums), which long buckets read for their whole days.
public enum Rollup {
    /// A quarter hour.
    public static let milliseconds: Int64 = 15 * 60 * 1000
    /// A UTC day, the coarser level.
    public static let dayMilliseconds: Int64 = 86_400_000

    /// The start of the quarter hour holding `start` (ms since the epoch, negative times included).
    public static func bucket(_ start: Int64) -> Int64 { floor(start, to: milliseconds) }

    /// The start of the UTC day holding `start` (ms since the epoch, negative times included).
    public static func day(_ start: Int64) -> Int64 { floor(start, to: dayMilliseconds) }

    /// The largest multiple of `step` at or before `time`.
    static func floor(_ time: Int64, to step: Int64) -> Int64 {
        let remainder = time % step
        return time - (remainder < 0 ? remainder + step : remainder)
    }

    /// How a range of buckets divides between the levels: each bucket's whole UTC days (`days`, with the bucket
    /// they belong to) and the rest of it in quarter hours (`quarters`, merged where they touch). Both in time
    /// order. Buckets must lie on quarter-hour borders.
    public static func levels(_ buckets: [(start: Int64, end: Int64)]) -> (
        days: [(start: Int64, end: Int64, bucket: Int)], quarters: [(start: Int64, end: Int64)]
    ) {
        var days: [(start: Int64, end: Int64, bucket: Int)] = []
        var quarters: [(start: Int64, end: Int64)] = []
        func addQuarters(_ start: Int64, _ end: Int64) {
            guard end > start else { return }
            if let last = quarters.last, last.end == start {
                quarters[quarters.count - 1].end = end
            } else {
                quarters.append((start, end))
            }
        }
        for (index, bucket) in buckets.enumerated() {
            let firstDay = day(bucket.start) == bucket.start ? bucket.start : day(bucket.start) + dayMilliseconds
            let lastDay = day(bucket.end)
            if lastDay > firstDay {
                addQuarters(bucket.start, firstDay)
                days.append((firstDay, lastDay, index))
                addQuarters(lastDay, bucket.end)
            } else {
                addQuarters(bucket.start, bucket.end)
            }
        }
        return (days, quarters)
    }
}

/// One stream's quarter hour.
public struct RollupKey: Hashable, Sendable {
    public var typeID: Int64
    public var sourceID: Int64
    public var deviceID: Int64
    public var subjectID: Int64
    public var bucket: Int64

    /// The same stream's UTC day holding this quarter hour.
    public var day: RollupKey {
        RollupKey(
            typeID: typeID, sourceID: sourceID, deviceID: deviceID, subjectID: subjectID, bucket: Rollup.day(bucket))
    }

    public init(typeID: Int64, sourceID: Int64, deviceID: Int64, subjectID: Int64, bucket: Int64) {
        self.typeID = typeID
        self.sourceID = sourceID
        self.deviceID = deviceID
        self.subjectID = subjectID
        self.bucket = bucket
    }
}

/// Mergeable aggregates only: count, sum, min, max and the most recent.
public struct RollupValue: Sendable {
    public var n: Int64 = 0
    public var sum: Double = 0
    public var min: Double = .infinity
    public var max: Double = -.infinity
    public var recentStart: Int64 = .min
    public var recentEnd: Int64 = .min
    public var recentValue: Double = 0

    public init() {}

    public mutating func add(start: Int64, end: Int64, value: Double) {
        n += 1
        sum += value
        min = Swift.min(min, value)
        max = Swift.max(max, value)
        if (end, start) > (recentEnd, recentStart) {
            recentEnd = end
            recentStart = start
            recentValue = value
        }
    }

    public mutating func merge(_ other: RollupValue) {
        n += other.n
        sum += other.sum
        min = Swift.min(min, other.min)
        max = Swift.max(max, other.max)
        if (other.recentEnd, other.recentStart) > (recentEnd, recentStart) {
            recentEnd = other.recentEnd
            recentStart = other.recentStart
            recentValue = other.recentValue
        }
    }
}
