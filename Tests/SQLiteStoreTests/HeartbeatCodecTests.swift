import Health
import Support
import TestSupport
import Testing

@testable import SQLiteStore

@Suite struct HeartbeatCodecTests {
    /// Beats as the gateway builds them: RR from BLE in 1/1024 s, offsets the running sum of the RR intervals,
    /// restarting from the notification time (whole ms) after a gap.
    static func gatewayBeats(count: Int, seed: UInt64 = 7, gapEvery: Int? = nil) -> [Beat] {
        var generator = SplitMix64(seed: seed)
        var beats: [Beat] = []
        var offset = 0.0
        var ticks = 900
        for index in 0..<count {
            ticks = max(400, min(1_400, ticks + Int(generator.next() % 41) - 20))
            let rr = Double(ticks) * 1000 / 1024
            if let gapEvery, index > 0, index % gapEvery == 0 {
                offset = (offset + rr + 1_500).rounded()  // lost beats: restart from a whole-ms time
                beats.append(Beat(offsetMilliseconds: offset, rrMilliseconds: rr, precededByGap: true))
            } else {
                offset += rr
                beats.append(Beat(offsetMilliseconds: offset, rrMilliseconds: rr))
            }
        }
        return beats
    }

    @Test func gatewayBeatsRoundTripExactlyInAboutAByteABeat() throws {
        let beats = Self.gatewayBeats(count: 70)
        let bytes = HeartbeatCodec.encode(beats)
        #expect(try HeartbeatCodec.decode(bytes) == beats)
        #expect(bytes[1] == 0)  // RR in 1/1024 s, no offsets stored
        #expect(Double(bytes.count) / 70 <= 1.1)

        let gapped = Self.gatewayBeats(count: 500, gapEvery: 60)
        let gappedBytes = HeartbeatCodec.encode(gapped)
        #expect(try HeartbeatCodec.decode(gappedBytes) == gapped)
        #expect(gappedBytes[1] == 0x10)  // offsets after gaps in whole ms
        #expect(Double(gappedBytes.count) / 500 <= 1.1)
    }

    @Test func wholeMillisecondsAndAnExplicitFirstOffsetRoundTripExactly() throws {
        let beats = [
            Beat(offsetMilliseconds: 250, rrMilliseconds: 812),
            Beat(offsetMilliseconds: 1_062, rrMilliseconds: 812),
            Beat(offsetMilliseconds: 1_900, rrMilliseconds: 838),
            Beat(offsetMilliseconds: 5_000, rrMilliseconds: 790, precededByGap: true),
            Beat(offsetMilliseconds: 5_791, rrMilliseconds: 790),  // not offset + RR: stored
        ]
        let bytes = HeartbeatCodec.encode(beats)
        #expect(bytes[1] == 0x11)
        #expect(try HeartbeatCodec.decode(bytes) == beats)
    }

    @Test func microsecondsAndSumsOfTicksAndMillisecondsRoundTripExactly() throws {
        let micro = [
            Beat(offsetMilliseconds: 812.345, rrMilliseconds: 812.345),
            Beat(offsetMilliseconds: 1_700.001, rrMilliseconds: 787.656),  // not offset + RR: stored
        ]
        let microBytes = HeartbeatCodec.encode(micro)
        #expect(microBytes[1] == 0x22)
        #expect(try HeartbeatCodec.decode(microBytes) == micro)

        // A series that starts on a whole second while the beats run on the sensor's 1/1024 s clock: the stored
        // first offset is a whole-ms time plus ticks, the RR intervals stay in ticks, the rest is implied.
        let tick = 1_000.0 / 1_024
        var offset = 12_345 + 700 * tick - 12_000
        var mixed: [Beat] = []
        for index in 0..<60 {
            let rr = Double(880 + index % 9) * tick
            mixed.append(Beat(offsetMilliseconds: offset, rrMilliseconds: rr))
            offset += Double(880 + (index + 1) % 9) * tick
        }
        let mixedBytes = HeartbeatCodec.encode(mixed)
        #expect(mixedBytes[1] == 0x20)
        #expect(try HeartbeatCodec.decode(mixedBytes) == mixed)
        #expect(mixedBytes.count <= 60 + 10)
    }

    @Test func otherValuesComeBackToASixteenthOfAMicrosecond() throws {
        let irrational = [
            Beat(offsetMilliseconds: 1_000 / 3, rrMilliseconds: 1_000 / 3),
            Beat(offsetMilliseconds: 700 * .pi, rrMilliseconds: 700 * .pi - 1_000 / 3, precededByGap: true),
        ]
        let decoded = try HeartbeatCodec.decode(HeartbeatCodec.encode(irrational))
        #expect(decoded.count == 2)
        for (original, back) in zip(irrational, decoded) {
            #expect(abs(original.offsetMilliseconds - back.offsetMilliseconds) <= 1.0 / 32_000)
            #expect(abs(original.rrMilliseconds - back.rrMilliseconds) <= 1.0 / 32_000)
            #expect(original.precededByGap == back.precededByGap)
        }
    }

    @Test func everyStrictPrefixAndRandomBytesFailCleanly() {
        let bytes = HeartbeatCodec.encode(Self.gatewayBeats(count: 40, gapEvery: 15))
        for length in 0..<bytes.count {
            #expect(throws: SeriesChunkError.self) { try HeartbeatCodec.decode(Array(bytes.prefix(length))) }
        }
        #expect(throws: SeriesChunkError.self) { try HeartbeatCodec.decode(bytes + [0]) }
        #expect(throws: SeriesChunkError.self) { try HeartbeatCodec.decode([1] + bytes.dropFirst()) }
        var generator = SplitMix64(seed: 42)
        for _ in 0..<5_000 {
            let random = (0..<Int(generator.next() % 40)).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
            guard let beats = try? HeartbeatCodec.decode([2, UInt8(generator.next() % 3)] + random) else { continue }
            // Whatever decodes is a plausible series: positive RR intervals, increasing offsets.
            #expect(beats.allSatisfy { $0.rrMilliseconds > 0 })
            #expect(zip(beats, beats.dropFirst()).allSatisfy { $0.offsetMilliseconds < $1.offsetMilliseconds })
        }
    }
}
