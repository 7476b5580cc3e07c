public import GATT
public import Support

/// The life of one enrolled sensor's connection, as a value: events in, actions out, no I/O
/// (`docs/bluez.md`, R6-R13).
///
/// ```
///  waitingForStack --stack/adapter/device back--> connecting --Connect ok--> resolving --ServicesResolved--> subscribing
///        ^                                           |  error (R8)                                          | subscribed
///        |                                           v                                                      v
///   stack gone <------------------------------ backingOff <--- link lost / watchdog / subscribe failed --- streaming
/// ```
///
/// Truth comes from BlueZ's properties (R6): `Connected` and `ServicesResolved` move the machine; a method's
/// reply only reports failures. Times are durations on one monotonic clock (the caller's), so the machine is
/// tested without sleeping.
public struct SensorSessionState: Sendable, Equatable {
    public enum Phase: Sendable, Equatable {
        /// No bluetoothd, no adapter, or no device object: waiting for it to (re)appear.
        case waitingForStack
        case connecting
        /// Connected, waiting for `ServicesResolved=true`.
        case resolving
        /// Resolved: looking characteristics up by UUID, reading metadata, starting notifications.
        case subscribing
        /// Notifications flowing.
        case streaming
        /// Waiting until `until` before the next Connect.
        case backingOff(until: Duration)
        case stopped

        public var name: String {
            switch self {
            case .waitingForStack: "waiting"
            case .connecting: "connecting"
            case .resolving: "resolving"
            case .subscribing: "subscribing"
            case .streaming: "streaming"
            case .backingOff: "backoff"
            case .stopped: "stopped"
            }
        }
    }

    public enum Event: Sendable, Equatable {
        /// The session starts; the stack's view of the device now (R13: adopt a connection left by a previous run).
        case start(deviceKnown: Bool, connected: Bool, resolved: Bool)
        /// bluetoothd, the adapter and the device object are there (again).
        case stackAvailable
        /// bluetoothd or the adapter went away, or the device object was removed.
        case stackUnavailable
        case connectSucceeded
        case connectFailed(CentralError.Kind)
        case connected(Bool)
        case servicesResolved(Bool)
        case subscribed
        /// Looking up or subscribing failed; `servicesChanged` when required characteristics were missing (R12).
        case subscribeFailed(CentralError.Kind, servicesChanged: Bool)
        case notification
        /// Time passed (timers: backoff, watchdog, resolve timeout).
        case tick
        case stop
    }

    public enum Action: Sendable, Equatable {
        case connect
        case disconnect
        /// Find characteristics by UUID, read metadata, StartNotify (idempotent, R11).
        case subscribe
        /// R12: the layout changed; `RemoveDevice` so that the next connect resolves it afresh.
        case removeDevice
        /// Notifications stopped: close open heartbeat series, break RR chains.
        case linkLost
        /// At stop: StopNotify and Disconnect (R13: managed sensors are released, none is left connected).
        case release
    }

    public struct Settings: Sendable, Equatable {
        /// No notification for this long while streaming: disconnect and reconnect (R10).
        public var watchdog: Duration
        /// Connected but not resolved for this long: disconnect and retry.
        public var resolveTimeout: Duration
        /// Streaming this long resets the backoff (R9).
        public var healthyAfter: Duration
        /// The minimum wait after a `deviceMissing` or `authentication` failure.
        public var slowRetry: Duration
        /// Resolved without a measurement characteristic: how long to wait before looking again, and only then
        /// taking it for a changed layout (R12). bluetoothd 5.66 sets `ServicesResolved=true` before the objects of
        /// a database it discovers again (after the sensor's changed), which come seconds later (seen in the BlueZ
        /// VM, docs/bluez-vm.md).
        public var layoutSettle: Duration

        public init(
            watchdog: Duration = .seconds(15), resolveTimeout: Duration = .seconds(30),
            healthyAfter: Duration = .seconds(60), slowRetry: Duration = .seconds(30),
            layoutSettle: Duration = .seconds(5)
        ) {
            self.watchdog = watchdog
            self.resolveTimeout = resolveTimeout
            self.healthyAfter = healthyAfter
            self.slowRetry = slowRetry
            self.layoutSettle = layoutSettle
        }
    }

    public private(set) var phase: Phase = .waitingForStack
    /// Consecutive failed attempts (backoff exponent).
    public private(set) var attempt = 0
    /// Times the link was lost or given up on after streaming (reconnections).
    public private(set) var reconnects = 0
    public private(set) var watchdogTrips = 0
    /// The last failure, for `wearhouse sensors`.
    public private(set) var lastFailure: CentralError.Kind?
    var connected = false
    var resolved = false
    var phaseSince: Duration = .zero
    var lastData: Duration = .zero
    var removedForLayout = false
    /// In this connection, a look-up found no measurement characteristic and the session waits
    /// ``Settings/layoutSettle`` (in `resolving`) before looking again.
    var settlingLayout = false
    var settledLayoutOnce = false
    /// Streamed since the last connection: losing the link now counts as a reconnection.
    var streamedThisConnection = false
    var backoff: Backoff
    let settings: Settings

    public init(settings: Settings = Settings(), backoff: Backoff = Backoff()) {
        self.settings = settings
        self.backoff = backoff
    }

    /// Applies `event` at time `now`; returns what to do, in order.
    public mutating func handle(_ event: Event, now: Duration) -> [Action] {
        if phase == .stopped { return [] }
        switch event {
        case .start(let known, let connected, let resolved):
            self.connected = connected
            self.resolved = resolved
            guard known else { return enter(.waitingForStack, now) }
            if connected && resolved { return enter(.subscribing, now) + [.subscribe] }
            if connected { return enter(.resolving, now) }
            return enter(.connecting, now) + [.connect]

        case .stackAvailable:
            guard phase == .waitingForStack else { return [] }
            return enter(.connecting, now) + [.connect]

        case .stackUnavailable:
            let wasLive = phase == .streaming || phase == .subscribing
            connected = false
            resolved = false
            return enter(.waitingForStack, now) + (wasLive ? [.linkLost] : [])

        case .connectSucceeded:
            guard phase == .connecting else { return [] }
            settledLayoutOnce = false
            if resolved { return enter(.subscribing, now) + [.subscribe] }
            return enter(.resolving, now)

        case .connectFailed(let kind):
            guard phase == .connecting else { return [] }
            lastFailure = kind
            switch ConnectRetry.after(kind, slowRetry: settings.slowRetry) {
            case .waitForStack:
                return enter(.waitingForStack, now)
            case .retry(let minimum, let disconnectFirst):
                // R8: a stale Connect pending in bluetoothd is cancelled once, then retried patiently.
                return retry(now, atLeast: minimum) + (disconnectFirst ? [.disconnect] : [])
            }

        case .connected(let value):
            connected = value
            if value {
                // bluetoothd (auto-connect) or another client connected it: adopt the connection.
                if phase == .connecting || phase == .waitingForStack || isBackingOff {
                    return resolved ? enter(.subscribing, now) + [.subscribe] : enter(.resolving, now)
                }
                return []
            }
            resolved = false
            settlingLayout = false
            settledLayoutOnce = false
            if streamedThisConnection {
                streamedThisConnection = false
                reconnects += 1
            }
            switch phase {
            case .resolving, .subscribing, .streaming:
                let wasLive = phase != .resolving
                return (wasLive ? [.linkLost] : []) + retry(now)
            default:
                return []
            }

        case .servicesResolved(let value):
            resolved = value
            if value, connected || phase == .resolving, phase == .resolving || phase == .connecting {
                connected = true
                settlingLayout = false
                return enter(.subscribing, now) + [.subscribe]
            }
            if !value, phase == .streaming || phase == .subscribing {
                // Services are being re-resolved (Service Changed): wait for true, then look up again (R12).
                return enter(.resolving, now) + [.linkLost]
            }
            return []

        case .subscribed:
            guard phase == .subscribing else { return [] }
            lastData = now
            removedForLayout = false
            settledLayoutOnce = false
            streamedThisConnection = true
            return enter(.streaming, now)

        case .subscribeFailed(let kind, let servicesChanged):
            guard phase == .subscribing else { return [] }
            lastFailure = kind
            if servicesChanged, !settledLayoutOnce {
                // The objects of a database bluetoothd discovers again may still be on their way: look again
                // after `layoutSettle` (or at the next ServicesResolved=true) before taking the layout for changed.
                settledLayoutOnce = true
                settlingLayout = true
                return enter(.resolving, now)
            }
            if servicesChanged, !removedForLayout {
                removedForLayout = true
                return retry(now) + [.removeDevice]
            }
            return retry(now, atLeast: servicesChanged ? settings.slowRetry : .zero) + [.disconnect]

        case .notification:
            lastData = now
            if phase == .streaming, attempt > 0, now - phaseSince >= settings.healthyAfter { attempt = 0 }
            return []

        case .tick:
            switch phase {
            case .backingOff(let until) where now >= until:
                return enter(.connecting, now) + [.connect]
            case .streaming where now - lastData >= settings.watchdog:
                watchdogTrips += 1
                reconnects += 1
                streamedThisConnection = false
                return [.linkLost] + retry(now) + [.disconnect]
            case .resolving where settlingLayout && now - phaseSince >= settings.layoutSettle:
                settlingLayout = false
                return enter(.subscribing, now) + [.subscribe]
            case .resolving where now - phaseSince >= settings.resolveTimeout:
                return retry(now) + [.disconnect]
            case .streaming where attempt > 0 && now - phaseSince >= settings.healthyAfter:
                attempt = 0
                return []
            default:
                return []
            }

        case .stop:
            let wasConnected = connected
            phase = .stopped
            return wasConnected ? [.linkLost, .release] : [.linkLost]
        }
    }

    var isBackingOff: Bool {
        if case .backingOff = phase { return true }
        return false
    }

    private mutating func enter(_ next: Phase, _ now: Duration) -> [Action] {
        phase = next
        phaseSince = now
        return []
    }

    private mutating func retry(_ now: Duration, atLeast minimum: Duration = .zero) -> [Action] {
        let wait = max(backoff.delay(attempt: attempt), minimum)
        attempt += 1
        return enter(.backingOff(until: now + wait), now)
    }
}
