import Foundation
import Gateway
import Support
import Synchronization
import Testing

/// The process lifecycle with real signals sent to this process (only while its handlers are installed, so the
/// suite is serialized): start order, reload, a graceful stop in reverse order, escalation, the stop timeout, and
/// the dispositions it found restored.
@Suite(.serialized, .timeLimit(.minutes(1))) struct ServiceLifecycleTests {
    /// What the parts did, in order.
    final class Journal: Sendable {
        let entries = Mutex<[String]>([])
        private let waiters = Mutex<[(entry: String, continuation: CheckedContinuation<Void, Never>)]>([])

        func append(_ entry: String) {
            entries.withLock { $0.append(entry) }
            let ready = waiters.withLock { waiters in
                let ready = waiters.filter { $0.entry == entry }
                waiters.removeAll { $0.entry == entry }
                return ready
            }
            for waiter in ready { waiter.continuation.resume() }
        }

        /// Returns once `entry` was appended.
        func wait(for entry: String) async {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let now = waiters.withLock { waiters in
                    if entries.withLock({ $0.contains(entry) }) { return true }
                    waiters.append((entry, continuation))
                    return false
                }
                if now { continuation.resume() }
            }
        }

        var all: [String] { entries.withLock { $0 } }
    }

    /// A part that runs until asked to stop; with `hangsOnStop` its stop never ends (only cancellation ends it).
    final class Part: LifecycleService {
        let name: String
        let journal: Journal
        let hangsOnStop: Bool
        private let stop = Mutex<CheckedContinuation<Void, Never>?>(nil)
        private let stopRequested = Mutex(false)

        init(_ name: String, journal: Journal, hangsOnStop: Bool = false) {
            self.name = name
            self.journal = journal
            self.hangsOnStop = hangsOnStop
        }

        func run(started: @escaping @Sendable () -> Void) async throws {
            journal.append("\(name) started")
            started()
            await withTaskCancellationHandler {
                await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                    let now = stopRequested.withLock { requested in
                        if requested && !hangsOnStop { return true }
                        stop.withLock { $0 = continuation }
                        return false
                    }
                    if now { continuation.resume() }
                }
            } onCancel: {
                stop.withLock { $0.take() }?.resume()
            }
            journal.append(Task.isCancelled ? "\(name) cancelled" : "\(name) stopped")
        }

        func requestStop() {
            journal.append("\(name) asked to stop")
            stopRequested.withLock { $0 = true }
            guard !hangsOnStop else { return }
            stop.withLock { $0.take() }?.resume()
        }
    }

    static let log = ServiceLog(level: .error, destination: .standardError)

    /// The signal's handler as a number (SIG_DFL is 0, SIG_IGN 1).
    static func disposition(_ number: Int32) -> Int {
        var action = sigaction()
        sigaction(number, nil, &action)
        return action.__sigaction_handler.sa_handler.map { unsafeBitCast($0, to: Int.self) } ?? 0
    }

    @Test func partsStartInOrderAndStopInReverseOnSIGTERMAndSIGHUPReloads() async {
        let journal = Journal()
        let lifecycle = ServiceLifecycle(
            settings: .init(watchdogInterval: nil), log: Self.log, clock: ManualClock(),
            reload: { journal.append("reloaded") })
        async let outcome = lifecycle.run([Part("recorder", journal: journal), Part("gateway", journal: journal)])
        await journal.wait(for: "gateway started")
        kill(getpid(), SIGHUP)
        await journal.wait(for: "reloaded")
        kill(getpid(), SIGTERM)
        #expect(await outcome == .stopped(reason: "SIGTERM"))
        #expect(
            journal.all == [
                "recorder started", "gateway started", "reloaded", "gateway asked to stop", "gateway stopped",
                "recorder asked to stop", "recorder stopped",
            ])
    }

    @Test func aSecondSignalWhileStoppingEscalates() async {
        let journal = Journal()
        let exits = Mutex<[ServiceLifecycle.Outcome]>([])
        let lifecycle = ServiceLifecycle(
            settings: .init(stopTimeout: .seconds(30), watchdogInterval: nil), log: Self.log, clock: ManualClock(),
            exit: { outcome in exits.withLock { $0.append(outcome) } })
        async let outcome = lifecycle.run([Part("gateway", journal: journal, hangsOnStop: true)])
        await journal.wait(for: "gateway started")
        kill(getpid(), SIGINT)
        await journal.wait(for: "gateway asked to stop")
        kill(getpid(), SIGTERM)
        let result = await outcome
        #expect(result == .escalated(signal: "SIGTERM"))
        #expect(result.exitStatus == 128 + SIGTERM)
        #expect(exits.withLock { $0 } == [.escalated(signal: "SIGTERM")])
        // Exiting did not wait for the stop: the part was cancelled afterwards (here, where exit returns).
        #expect(journal.all.last == "gateway cancelled")
    }

    @Test func aStopThatTakesLongerThanTheTimeoutExitsWithoutIt() async {
        let journal = Journal()
        let clock = ManualClock()
        let exits = Mutex<[ServiceLifecycle.Outcome]>([])
        let lifecycle = ServiceLifecycle(
            settings: .init(stopTimeout: .seconds(15), watchdogInterval: nil), log: Self.log, clock: clock,
            exit: { outcome in exits.withLock { $0.append(outcome) } })
        async let outcome = lifecycle.run([Part("gateway", journal: journal, hangsOnStop: true)])
        await journal.wait(for: "gateway started")
        kill(getpid(), SIGTERM)
        await clock.waitForSleepers(1)  // the stop timeout
        #expect(clock.nextDeadline == .seconds(15))
        clock.advance(by: .seconds(15))
        let result = await outcome
        #expect(result == .stopTimedOut(reason: "SIGTERM"))
        #expect(result.exitStatus == 70)
        #expect(exits.withLock { $0 } == [.stopTimedOut(reason: "SIGTERM")])
    }

    @Test func theDurationStopsGracefullyAndAFailureStopsTheOthers() async {
        let clock = ManualClock()
        let journal = Journal()
        let lifecycle = ServiceLifecycle(
            settings: .init(duration: .seconds(5), watchdogInterval: nil), log: Self.log, clock: clock)
        async let outcome = lifecycle.run([Part("gateway", journal: journal)])
        await journal.wait(for: "gateway started")
        await clock.waitForSleepers(1)
        clock.advance(by: .seconds(5))
        #expect(await outcome == .stopped(reason: "--duration passed"))

        struct Refusal: Error, CustomStringConvertible {
            var description: String { "the registry cannot be read" }
        }
        struct Failing: LifecycleService {
            func run(started: @escaping @Sendable () -> Void) async throws { throw Refusal() }
            func requestStop() {}
        }
        let second = Journal()
        let failed = await ServiceLifecycle(settings: .init(watchdogInterval: nil), log: Self.log, clock: clock)
            .run([Part("recorder", journal: second), Failing()])
        #expect(failed == .failed("the registry cannot be read"))
        #expect(second.all == ["recorder started", "recorder asked to stop", "recorder stopped"])
    }

    @Test func theDispositionsFoundAreRestoredIgnoredOnesIncluded() async {
        let previousHangUp = signal(SIGHUP, SIG_IGN)
        defer { signal(SIGHUP, previousHangUp) }
        let defaultInterrupt = Self.disposition(SIGINT)
        let journal = Journal()
        let lifecycle = ServiceLifecycle(settings: .init(watchdogInterval: nil), log: Self.log, clock: ManualClock())
        async let outcome = lifecycle.run([Part("gateway", journal: journal)])
        await journal.wait(for: "gateway started")
        kill(getpid(), SIGTERM)
        #expect(await outcome == .stopped(reason: "SIGTERM"))
        #expect(Self.disposition(SIGHUP) == 1)
        #expect(Self.disposition(SIGINT) == defaultInterrupt)
    }
}
