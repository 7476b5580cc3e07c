/// 15-minute rollups of discrete types, which both engines keep the same way (package access): the quarter hour
/// a sample falls in, one stream's quarter hour as a key, and the mergeable aggregates kept for it.
package enum Rollup {
    /// A quarter hour.
    package static let milliseconds: Int64 = 15 * 60 * 1000

    /// The start of the quarter hour holding `start` (ms since the epoch, negative times included).
    package static func bucket(_ start: Int64) -> Int64 {
        let remainder = start % milliseconds
        return start - (remainder < 0 ? remainder + milliseconds : remainder)
    }
}

/// One stream's quarter hour.
package struct RollupKey: Hashable, Sendable {
    package var typeID: Int64
    package var sourceID: Int64
    package var deviceID: Int64
    package var subjectID: Int64
    package var bucket: Int64

    package init(typeID: Int64, sourceID: Int64, deviceID: Int64, subjectID: Int64, bucket: Int64) {
        self.typeID = typeID
        self.sourceID = sourceID
        self.deviceID = deviceID
        self.subjectID = subjectID
        self.bucket = bucket
    }
}

/// Mergeable aggregates only: count, sum, min, max and the most recent.
package struct RollupValue: Sendable {
    package var n: Int64 = 0
    package var sum: Double = 0
    package var min: Double = .infinity
    package var max: Double = -.infinity
    package var recentStart: Int64 = .min
    package var recentEnd: Int64 = .min
    package var recentValue: Double = 0

    package init() {}

    package mutating func add(start: Int64, end: Int64, value: Double) {
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

    package mutating func merge(_ other: RollupValue) {
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
