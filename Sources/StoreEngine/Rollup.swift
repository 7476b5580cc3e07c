/// 15-minute rollups of discrete types, which both engines keep the same way: the quarter hour
/// a sample falls in, one stream's quarter hour as a key, and the mergeable aggregates kept for it.
public enum Rollup {
    /// A quarter hour.
    public static let milliseconds: Int64 = 15 * 60 * 1000

    /// The start of the quarter hour holding `start` (ms since the epoch, negative times included).
    public static func bucket(_ start: Int64) -> Int64 {
        let remainder = start % milliseconds
        return start - (remainder < 0 ? remainder + milliseconds : remainder)
    }
}

/// One stream's quarter hour.
public struct RollupKey: Hashable, Sendable {
    public var typeID: Int64
    public var sourceID: Int64
    public var deviceID: Int64
    public var subjectID: Int64
    public var bucket: Int64

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
