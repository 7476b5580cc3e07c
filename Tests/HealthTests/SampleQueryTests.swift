import Health
import Testing

@Suite struct SampleQueryTimeRangeTests {
    let query = SampleQuery(type: .heartRate, from: Instant(milliseconds: 100), to: Instant(milliseconds: 200))

    @Test(arguments: [
        (50, 100, false),  // ends where the range starts: no overlap
        (50, 101, true),
        (100, 100, true),  // an instant at the range start
        (150, 250, true),
        (199, 199, true),
        (200, 200, false),  // an instant at the exclusive end
        (200, 300, false),
        (0, 1000, true),  // covers the range
    ])
    func overlapByDefault(start: Int64, end: Int64, matches: Bool) {
        #expect(query.matchesTime(start: Instant(milliseconds: start), end: Instant(milliseconds: end)) == matches)
    }

    @Test func strictStartAndEnd() {
        var strict = query
        strict.strictStart = true
        strict.strictEnd = true
        #expect(strict.matchesTime(start: Instant(milliseconds: 100), end: Instant(milliseconds: 200)))
        #expect(!strict.matchesTime(start: Instant(milliseconds: 99), end: Instant(milliseconds: 150)))
        #expect(!strict.matchesTime(start: Instant(milliseconds: 150), end: Instant(milliseconds: 201)))
    }

    @Test func openRanges() {
        let all = SampleQuery(type: .heartRate)
        #expect(all.matchesTime(start: Instant(milliseconds: -5), end: Instant(milliseconds: 5)))
    }
}
