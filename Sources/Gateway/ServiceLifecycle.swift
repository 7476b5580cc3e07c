internal import Dispatch
internal import Foundation
internal import Glibc
public import Support
internal import Synchronization

/// A long-running part of the process that ``ServiceLifecycle`` starts and stops: the gateway, the trace recorder.
public protocol LifecycleService: Sendable {
    /// Runs until ``requestStop()`` (then stops gracefully and returns) or until the task is cancelled (then stops
    /// without waiting for anything that can be skipped). Calls `started` once it is up.
    ///
    /// - Throws: what keeps it from starting.
    func run(started: @escaping @Sendable () -> Void) async throws
    /// Asks ``run(started:)`` to stop; returns at once.
    func requestStop()
}

extension GatewayService: LifecycleService {}

/// The process around the services, as `wearhouse run` needs it (and as swift-service-lifecycle's ServiceGroup
/// does it): SIGTERM, SIGINT and SIGHUP handled while it runs and their previous dispositions restored after
/// (ignored ones stay ignored), the services started in order (each once the one before it is up), READY, STATUS,
/// WATCHDOG and STOPPING for systemd (``ServiceNotifier``), and a stop in reverse start order.
///
/// - SIGHUP: `reload` runs (between RELOADING and READY).
/// - The first SIGTERM or SIGINT (or the run's `duration` passing, or a service ending by itself): a graceful stop.
///   Each service is asked to stop once the one after it has finished.
/// - A second SIGTERM or SIGINT while stopping, or the stop taking longer than ``Settings/stopTimeout``: the log
///   says so, and `exit` is called with a non-zero status without waiting any longer (the process's default).
///
/// Every task it starts is a child of ``run(_:)``; every wait is on its clock.
///
/// ```swift
/// let lifecycle = ServiceLifecycle(settings: .init(stopTimeout: .seconds(30)), log: log, notifier: notifier,
///                                  reload: { await reloadConfiguration() }, alive: { _ = await service.statuses() })
/// let outcome = await lifecycle.run([recorder, service])
/// ```
public struct ServiceLifecycle: Sendable {
    public struct Settings: Sendable {
        /// How long a graceful stop may take before the process exits without it.
        public var stopTimeout: Duration
        /// Stop after this long (`--duration`); `nil`: until a signal.
        public var duration: Duration?
        /// How often to tell systemd the process is alive; `nil`: never (no `WatchdogSec=`).
        public var watchdogInterval: Duration?
        /// The signals handled (SIGHUP reloads; any other one stops); by default SIGTERM, SIGINT and SIGHUP.
        public var signals: [Int32]

        public init(
            stopTimeout: Duration = .seconds(30), duration: Duration? = nil,
            watchdogInterval: Duration? = ServiceNotifier.watchdogPingInterval(), signals: [Int32]? = nil
        ) {
            self.stopTimeout = stopTimeout
            self.duration = duration
            self.watchdogInterval = watchdogInterval
            self.signals = signals ?? [SIGTERM, SIGINT, SIGHUP]
        }
    }

    /// How a run ended.
    public enum Outcome: Equatable, Sendable {
        /// Every service stopped gracefully; why the stop began ("SIGTERM", "--duration passed").
        case stopped(reason: String)
        /// A service failed (at its start): its error. The others were stopped gracefully.
        case failed(String)
        /// The graceful stop (begun for `reason`) did not finish within the stop timeout.
        case stopTimedOut(reason: String)
        /// A second stop signal (its name) came while stopping.
        case escalated(signal: String)

        /// The process's exit status: 0 after a graceful stop, 1 after a failure, 70 (EX_SOFTWARE) when the stop
        /// timed out, 128 + the signal number after an escalation (as a shell reports a death by that signal).
        public var exitStatus: Int32 {
            switch self {
            case .stopped: 0
            case .failed: 1
            case .stopTimedOut: 70
            case .escalated(let signal): 128 + (ServiceLifecycle.signalNumbers[signal] ?? 0)
            }
        }
    }

    public let settings: Settings
    let log: ServiceLog
    let notifier: ServiceNotifier
    let clock: any Support.Clock
    let reload: @Sendable () async -> Void
    let alive: @Sendable () async -> Void
    let exit: @Sendable (Outcome) -> Void

    /// - Parameters:
    ///   - reload: what SIGHUP does.
    ///   - alive: returns while the services answer (the watchdog pings only then).
    ///   - exit: called after an escalation or a stop timeout, once the log said so; the default ends the process
    ///     with ``Outcome/exitStatus``. When it returns (tests), the services are cancelled and ``run(_:)`` returns
    ///     once they ended.
    public init(
        settings: Settings = Settings(), log: ServiceLog, notifier: ServiceNotifier = ServiceNotifier(),
        clock: any Support.Clock = SystemClock(), reload: @escaping @Sendable () async -> Void = {},
        alive: @escaping @Sendable () async -> Void = {},
        exit: (@Sendable (Outcome) -> Void)? = nil
    ) {
        self.settings = settings
        self.log = log
        self.notifier = notifier
        self.clock = clock
        self.reload = reload
        self.alive = alive
        self.exit = exit ?? { Glibc.exit($0.exitStatus) }
    }

    private enum Event: Sendable {
        case started(Int)
        case finished(Int, failure: String?)
        case signal(Int32)
        case durationPassed
        case stopTimedOut
    }

    /// Runs `services` (started in this order, stopped in the reverse one) until they have stopped; see the type.
    public func run(_ services: [any LifecycleService]) async -> Outcome {
        guard !services.isEmpty else { return .stopped(reason: "nothing to run") }
        let trap = SignalTrap(settings.signals)
        defer { trap.restore() }
        let (events, input) = AsyncStream.makeStream(of: Event.self)
        let stopping = StopRequest()
        let settings = self.settings
        let clock = self.clock
        let alive = self.alive
        let notifier = self.notifier
        return await withDiscardingTaskGroup { group in
            group.addTask(operation: {
                for await number in trap.signals { input.yield(.signal(number)) }
            })
            func start(_ index: Int) {
                let service = services[index]
                group.addTask(operation: {
                    do {
                        try await service.run { input.yield(.started(index)) }
                        input.yield(.finished(index, failure: nil))
                    } catch {
                        input.yield(.finished(index, failure: "\(error)"))
                    }
                })
            }
            start(0)
            var running: Set<Int> = [0]
            var allStarted = false
            var reason: String?
            var failure: String?
            var outcome = Outcome.stopped(reason: "the services ended")
            func beginStop(_ why: String) {
                guard reason == nil else { return }
                reason = why
                stopping.request()
                log.notice("stopping (\(why))")
                notifier.stopping(status: "stopping: \(why)")
                if let last = running.max() { services[last].requestStop() }
                let timeout = settings.stopTimeout
                group.addTask(operation: {
                    do { try await clock.sleep(for: timeout) } catch { return }
                    input.yield(.stopTimedOut)
                })
            }
            loop: for await event in events {
                switch event {
                case .started(let index):
                    if reason != nil {
                        services[index].requestStop()
                    } else if index + 1 < services.count {
                        start(index + 1)
                        running.insert(index + 1)
                    } else {
                        allStarted = true
                        notifier.ready(status: "started")
                        if let interval = settings.watchdogInterval {
                            group.addTask(operation: {
                                while !stopping.isRequested {
                                    do { try await clock.sleep(for: interval) } catch { return }
                                    // Ping only while the services answer: a wedged process gets restarted.
                                    await alive()
                                    if !stopping.isRequested { notifier.watchdog() }
                                }
                            })
                        }
                        if let duration = settings.duration {
                            group.addTask(operation: {
                                do { try await clock.sleep(for: duration) } catch { return }
                                input.yield(.durationPassed)
                            })
                        }
                    }
                case .finished(let index, let error):
                    running.remove(index)
                    if let error, failure == nil {
                        failure = error
                        log.error("\(type(of: services[index])) failed: \(error)")
                    }
                    if reason == nil {
                        beginStop(error == nil ? "\(type(of: services[index])) ended" : "a service failed")
                    } else if let last = running.max() {
                        services[last].requestStop()
                    }
                    if running.isEmpty {
                        outcome = failure.map { .failed($0) } ?? .stopped(reason: reason ?? "the services ended")
                        break loop
                    }
                case .signal(let number):
                    let name = Self.signalName(number)
                    if number == SIGHUP {
                        guard allStarted, reason == nil else {
                            log.notice("\(name) ignored: \(reason == nil ? "starting" : "stopping")")
                            continue
                        }
                        notifier.reloading(status: "reloading")
                        await reload()
                        notifier.ready(status: "reloaded")
                    } else if reason != nil {
                        outcome = .escalated(signal: name)
                        log.error("\(name) again while stopping: exiting without waiting for the stop to finish")
                        notifier.status("\(name) again while stopping: exiting")
                        self.exit(outcome)
                        break loop
                    } else {
                        beginStop(name)
                    }
                case .durationPassed:
                    beginStop("--duration passed")
                case .stopTimedOut:
                    outcome = .stopTimedOut(reason: reason ?? "")
                    log.error("the stop did not finish within \(settings.stopTimeout); exiting without waiting for it")
                    notifier.status("the stop timed out: exiting")
                    self.exit(outcome)
                    break loop
                }
            }
            input.finish()
            group.cancelAll()
            return outcome
        }
    }

    static let signalNumbers: [String: Int32] = ["SIGHUP": SIGHUP, "SIGINT": SIGINT, "SIGTERM": SIGTERM]

    static func signalName(_ number: Int32) -> String {
        signalNumbers.first { $0.value == number }?.key ?? "signal \(number)"
    }
}

/// Signals delivered as an async stream while it is installed: ``init(_:)`` installs a handler for each (saving
/// the disposition it found) that writes the signal's number into a pipe, which libdispatch reads; ``restore()``
/// puts back the dispositions found, ignored ones included. (libdispatch's own signal sources install their
/// handler once per process, so a disposition restored under them would stay for the next trap.)
///
/// `@unchecked Sendable`: the saved dispositions are set in `init` and only read in ``restore()``, under the lock.
final class SignalTrap: @unchecked Sendable {
    let signals: AsyncStream<Int32>
    private let continuation: AsyncStream<Int32>.Continuation
    private let previous: [(number: Int32, action: sigaction)]
    private let restored = Mutex(false)

    init(_ numbers: [Int32]) {
        let (stream, continuation) = AsyncStream.makeStream(of: Int32.self)
        signals = stream
        self.continuation = continuation
        SignalPipe.shared.listen(continuation)
        previous = numbers.map { number in
            var action = sigaction()
            action.__sigaction_handler.sa_handler = signalPipeHandler
            sigemptyset(&action.sa_mask)
            action.sa_flags = SA_RESTART
            var found = sigaction()
            sigaction(number, &action, &found)
            return (number, found)
        }
    }

    /// Restores the signals' previous dispositions and ends the stream; later calls do nothing.
    func restore() {
        let first = restored.withLock { done in
            defer { done = true }
            return !done
        }
        guard first else { return }
        for (number, action) in previous {
            var action = action
            sigaction(number, &action, nil)
        }
        SignalPipe.shared.listen(nil)
        continuation.finish()
    }

    deinit {
        restore()
    }
}

/// The process's self-pipe for signals: the handler writes a byte (the signal's number), a dispatch read source
/// passes it to the trap that is listening.
private final class SignalPipe: Sendable {
    static let shared = SignalPipe()

    let writeEnd: Int32
    private let readEnd: Int32
    private let listener = Mutex<AsyncStream<Int32>.Continuation?>(nil)
    private nonisolated(unsafe) let source: any DispatchSourceRead

    private init() {
        var ends: [Int32] = [-1, -1]
        _ = pipe(&ends)
        for end in ends {
            _ = fcntl(end, F_SETFD, FD_CLOEXEC)
            _ = fcntl(end, F_SETFL, O_NONBLOCK)
        }
        readEnd = ends[0]
        writeEnd = ends[1]
        source = DispatchSource.makeReadSource(fileDescriptor: ends[0], queue: .global())
        // Bytes arrive only once a trap installed the handler, after `shared` was made.
        source.setEventHandler { SignalPipe.shared.deliver() }
        source.resume()
    }

    private func deliver() {
        var bytes = [UInt8](repeating: 0, count: 64)
        let count = read(readEnd, &bytes, bytes.count)
        guard count > 0 else { return }
        let continuation = listener.withLock { $0 }
        for byte in bytes[..<count] { continuation?.yield(Int32(byte)) }
    }

    func listen(_ continuation: AsyncStream<Int32>.Continuation?) {
        listener.withLock { $0 = continuation }
    }
}

/// The signal handler: one write(2) of the signal's number (async-signal-safe).
private let signalPipeHandler: @convention(c) (Int32) -> Void = { number in
    var byte = UInt8(truncatingIfNeeded: number)
    _ = write(SignalPipe.shared.writeEnd, &byte, 1)
}
