import Testing

@testable import SQLiteStore

@Suite struct SeriesChunkCodecTests {
    typealias Point = SeriesChunkCodec.Point

    @Test func oneHertzHeartRateCostsAboutTwoBytesASample() throws {
        let start: Int64 = 1_743_289_200_000
        let points = (0..<600).map { (index: Int) -> Point in
            let value = Double(57 + index % 7)
            return Point(start: start + Int64(index) * 1000, duration: 0, value: value, seq: 5_000 + Int64(index))
        }
        let bytes = SeriesChunkCodec.encode(points)
        #expect(try SeriesChunkCodec.decode(bytes) == points)
        #expect(Double(bytes.count) / Double(points.count) < 3.1)  // time, value and write order: a byte each
    }

    @Test func decimalsAndIntervalsRoundTripExactly() throws {
        let points = [
            Point(start: 0, duration: 600_000, value: 812.5), Point(start: 600_000, duration: 600_000, value: 0.1),
            Point(start: 1_200_000, duration: 5, value: 1_000_000.25),
            Point(start: 1_200_001, duration: 0, value: -3.75),
        ]
        let bytes = SeriesChunkCodec.encode(points)
        #expect(try SeriesChunkCodec.decode(bytes) == points)
        #expect(bytes[1] & 1 == 1)  // scaled integers
        #expect(bytes[2] == 2)  // 10^2
    }

    @Test func valuesThatAreNotShortDecimalsAreStoredAsDoubles() throws {
        let points = [Point(start: 1, duration: 0, value: 1.0 / 3.0), Point(start: 2, duration: 0, value: .pi)]
        let bytes = SeriesChunkCodec.encode(points)
        #expect(bytes[1] & 1 == 0)
        #expect(try SeriesChunkCodec.decode(bytes) == points)
    }

    @Test func irregularTimesAndEmptyChunks() throws {
        #expect(try SeriesChunkCodec.decode(SeriesChunkCodec.encode([])) == [])
        let points = [0, 5, 1_000, 1_001, 86_400_000, -5].map { Point(start: Int64($0), duration: 0, value: 1) }
        #expect(try SeriesChunkCodec.decode(SeriesChunkCodec.encode(points)) == points)
        let extreme = [Point(start: .min, duration: 0, value: 1), Point(start: .max, duration: .max, value: 2)]
        #expect(try SeriesChunkCodec.decode(SeriesChunkCodec.encode(extreme)) == extreme)
    }

    @Test func everyStrictPrefixAndRandomBytesFailCleanly() {
        let points = (0..<50).map { (index: Int) -> Point in
            Point(start: Int64(index) * 1000, duration: Int64(index % 3), value: Double(index) / 4)
        }
        let bytes = SeriesChunkCodec.encode(points)
        for length in 0..<bytes.count {
            #expect(throws: SeriesChunkError.self) { try SeriesChunkCodec.decode(Array(bytes.prefix(length))) }
        }
        #expect(throws: SeriesChunkError.self) { try SeriesChunkCodec.decode(bytes + [0]) }
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<5_000 {
            let random = (0..<Int.random(in: 0...40, using: &generator)).map { _ in
                UInt8.random(in: 0...255, using: &generator)
            }
            _ = try? SeriesChunkCodec.decode([1] + random)  // must not trap
        }
    }
}
