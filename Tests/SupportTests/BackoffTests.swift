import Support
import Testing

@Suite struct BackoffTests {
    @Test func delaysDoubleUpToTheMaximumWithJitterInTheUpperHalf() {
        var backoff = Backoff(minimum: .milliseconds(250), maximum: .seconds(4), seed: 1)
        for attempt in 0..<10 {
            let ceiling = min(Duration.milliseconds(250) * (1 << attempt), .seconds(4))
            let delay = backoff.delay(attempt: attempt)
            #expect(delay >= ceiling / 2 && delay <= ceiling, "attempt \(attempt): \(delay)")
        }
    }

    @Test func theSameSeedGivesTheSameDelays() {
        var a = Backoff(seed: 42)
        var b = Backoff(seed: 42)
        #expect((0..<8).map { a.delay(attempt: $0) } == (0..<8).map { b.delay(attempt: $0) })
    }

    @Test func splitMix64MatchesItsReferenceValues() {
        // The first outputs of SplitMix64 seeded with 0 (Vigna's reference implementation).
        var random = SplitMix64(seed: 0)
        #expect(random.next() == 0xE220_A839_7B1D_CDAF)
        #expect(random.next() == 0x6E78_9E6A_A1B9_65F4)
        #expect(random.next() == 0x06C4_5D18_8009_454F)
    }
}

@Suite struct BackoffCeilingTests {
    @Test func theCeilingDoublesFromTheMinimumToTheMaximum() {
        let backoff = Backoff(minimum: .milliseconds(100), maximum: .seconds(5))
        #expect(
            (0..<9).map { backoff.ceiling(attempt: $0) } == [
                .milliseconds(100), .milliseconds(200), .milliseconds(400), .milliseconds(800), .milliseconds(1600),
                .milliseconds(3200), .seconds(5), .seconds(5), .seconds(5),
            ])
        #expect(backoff.ceiling(attempt: -3) == .milliseconds(100))
        #expect(backoff.ceiling(attempt: .max) == .seconds(5))
    }
}
