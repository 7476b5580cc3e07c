import Foundation
import Health

// Helpers shared by the statistics tests.

/// A UUID whose last eight bytes hold `n` (big-endian), so uuids order like their numbers.
func statUUID(_ n: UInt64) -> UUID {
    let b = (0..<8).map { UInt8(truncatingIfNeeded: n >> (8 * (7 - $0))) }
    return UUID(uuid: (0, 0, 0, 0, 0, 0, 0x40, 0, b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]))
}

func msInstants(_ milliseconds: [Int64]) -> [Instant] { milliseconds.map { Instant(milliseconds: $0) } }
