import Support
import Testing

@Suite struct ManualClockTests {
    @Test func sleepersResumeWhenTheirDeadlineIsPassedInDeadlineOrder() async throws {
        let clock = ManualClock()
        let order = Order()
        async let late: Void = {
            try await clock.sleep(until: .seconds(3))
            await order.append(3)
        }()
        async let early: Void = {
            try await clock.sleep(until: .seconds(1))
            await order.append(1)
        }()
        await clock.waitForSleepers(2)
        #expect(clock.nextDeadline == .seconds(1))
        clock.advance(by: .milliseconds(999))
        #expect(clock.sleeperCount == 2)
        clock.advance(by: .milliseconds(1))
        try await early
        #expect(clock.sleeperCount == 1)
        clock.advance(to: .seconds(5))
        try await late
        #expect(await order.values == [1, 3])
        #expect(clock.now == .seconds(5))
    }

    @Test func aDeadlineAlreadyPassedReturnsAtOnce() async throws {
        let clock = ManualClock()
        clock.advance(by: .seconds(2))
        try await clock.sleep(until: .seconds(1))
        try await clock.sleep(for: .zero)
        #expect(clock.sleeperCount == 0)
    }

    @Test func cancellingASleeperThrowsAndRemovesIt() async {
        let clock = ManualClock()
        let task = Task { try await clock.sleep(for: .seconds(10)) }
        await clock.waitForSleepers(1)
        task.cancel()
        let result = await task.result
        #expect(throws: CancellationError.self) { try result.get() }
        #expect(clock.sleeperCount == 0)
    }

    @Test func aTaskCancelledBeforeItSleepsThrowsAtOnce() async {
        let clock = ManualClock()
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            try await clock.sleep(for: .seconds(10))
        }
        let result = await task.result
        #expect(throws: CancellationError.self) { try result.get() }
        #expect(clock.sleeperCount == 0)
    }

    @Test func theWallClockMovesWithTheMonotonicOne() {
        let clock = ManualClock(wallMicroseconds: 1_000_000)
        clock.advance(by: .milliseconds(1500))
        #expect(clock.wallMicroseconds == 2_500_000)
        #expect(clock.wallMilliseconds == 2500)
    }

    @Test func theSystemClockReadsBothClocks() {
        let clock = SystemClock()
        let first = clock.now
        #expect(clock.now >= first)
        #expect(clock.wallMilliseconds > 1_700_000_000_000)
    }

    @Test func waitingForSleepersEndsWhenTheTaskIsCancelled() async {
        let clock = ManualClock()
        let waiter = Task { await clock.waitForSleepers(1) }
        waiter.cancel()
        await waiter.value
        #expect(clock.sleeperCount == 0)
    }

    @Test func advancingToTheNextDeadlineWakesTheEarliestSleeperOnly() async throws {
        let clock = ManualClock()
        #expect(clock.advanceToNextDeadline() == nil)
        async let early: Void = clock.sleep(until: .seconds(2))
        async let late: Void = clock.sleep(until: .seconds(7))
        await clock.waitForSleepers(2)
        #expect(clock.advanceToNextDeadline() == .seconds(2))
        try await early
        #expect(clock.now == .seconds(2) && clock.sleeperCount == 1)
        #expect(clock.advanceToNextDeadline() == .seconds(7))
        try await late
    }

    actor Order {
        var values: [Int] = []
        func append(_ value: Int) { values.append(value) }
    }
}
