import GATT
import Gateway
import Testing

/// Transitions of the per-sensor state machine, without I/O or sleeping.
struct SensorSessionStateTests {
    typealias State = SensorSessionState

    static func machine() -> State {
        State(settings: .init(watchdog: .seconds(15), resolveTimeout: .seconds(30), healthyAfter: .seconds(60)))
    }

    /// Connect, resolve, subscribe, stream.
    static func streaming(at now: Duration = .zero) -> State {
        var state = machine()
        _ = state.handle(.start(deviceKnown: true, connected: false, resolved: false), now: now)
        _ = state.handle(.connectSucceeded, now: now)
        _ = state.handle(.connected(true), now: now)
        _ = state.handle(.servicesResolved(true), now: now)
        _ = state.handle(.subscribed, now: now)
        return state
    }

    @Test func theHappyPathConnectsResolvesAndSubscribes() {
        var state = Self.machine()
        #expect(state.handle(.start(deviceKnown: true, connected: false, resolved: false), now: .zero) == [.connect])
        #expect(state.phase == .connecting)
        #expect(state.handle(.connected(true), now: .seconds(1)) == [])
        #expect(state.handle(.connectSucceeded, now: .seconds(1)) == [])
        #expect(state.phase == .resolving)
        #expect(state.handle(.servicesResolved(true), now: .seconds(2)) == [.subscribe])
        #expect(state.handle(.subscribed, now: .seconds(2)) == [])
        #expect(state.phase == .streaming)
    }

    @Test func resolutionBeforeTheConnectReplyIsNotLost() {
        var state = Self.machine()
        _ = state.handle(.start(deviceKnown: true, connected: false, resolved: false), now: .zero)
        // Cached GATT: ServicesResolved=true can be applied before the Connect reply.
        #expect(state.handle(.connected(true), now: .zero) == [])
        #expect(state.handle(.servicesResolved(true), now: .zero) == [.subscribe])
        #expect(state.handle(.connectSucceeded, now: .zero) == [])
        #expect(state.phase == .subscribing)
    }

    @Test func anAlreadyConnectedDeviceIsAdopted() {
        var state = Self.machine()
        #expect(state.handle(.start(deviceKnown: true, connected: true, resolved: true), now: .zero) == [.subscribe])
        var other = Self.machine()
        #expect(other.handle(.start(deviceKnown: true, connected: true, resolved: false), now: .zero) == [])
        #expect(other.phase == .resolving)
        var unknown = Self.machine()
        #expect(unknown.handle(.start(deviceKnown: false, connected: false, resolved: false), now: .zero) == [])
        #expect(unknown.phase == .waitingForStack)
        #expect(unknown.handle(.stackAvailable, now: .seconds(1)) == [.connect])
    }

    @Test func errorClassesChooseTheRecovery() {
        for (kind, expected) in [
            (CentralError.Kind.transient, [State.Action]()), (.timeout, []), (.inProgress, [.disconnect]),
            (.authentication, []), (.other, []),
        ] {
            var state = Self.machine()
            _ = state.handle(.start(deviceKnown: true, connected: false, resolved: false), now: .zero)
            #expect(state.handle(.connectFailed(kind), now: .zero) == expected, "\(kind)")
            guard case .backingOff(let until) = state.phase else {
                Issue.record("\(kind): not backing off")
                continue
            }
            switch kind {
            case .authentication: #expect(until >= .seconds(30))
            case .inProgress: #expect(until >= .seconds(2))
            default: #expect(until <= .milliseconds(250))
            }
            #expect(state.handle(.tick, now: until - .milliseconds(1)) == [])
            #expect(state.handle(.tick, now: until) == [.connect])
            #expect(state.lastFailure == kind)
        }
        var missing = Self.machine()
        _ = missing.handle(.start(deviceKnown: true, connected: false, resolved: false), now: .zero)
        #expect(missing.handle(.connectFailed(.deviceMissing), now: .zero) == [])
        #expect(missing.phase == .waitingForStack)
    }

    @Test func backoffGrowsWithJitterUpToTheCapAndResetsAfterHealthyStreaming() {
        var state = Self.machine()
        _ = state.handle(.start(deviceKnown: true, connected: false, resolved: false), now: .zero)
        var now = Duration.zero
        var waits: [Duration] = []
        for _ in 0..<12 {
            _ = state.handle(.connectFailed(.transient), now: now)
            guard case .backingOff(let until) = state.phase else {
                Issue.record("not backing off")
                return
            }
            waits.append(until - now)
            now = until
            #expect(state.handle(.tick, now: now) == [.connect])
        }
        #expect(waits.first! <= .milliseconds(250) && waits.first! >= .milliseconds(125))
        #expect(waits.last! <= .seconds(60) && waits.last! >= .seconds(30))
        #expect(zip(waits.prefix(8), waits.prefix(8).dropFirst(2)).allSatisfy { $0 < $1 })  // below the cap
        // Streaming for a minute forgives the failures.
        _ = state.handle(.connectSucceeded, now: now)
        _ = state.handle(.servicesResolved(true), now: now)
        _ = state.handle(.subscribed, now: now)
        #expect(state.attempt == 12)
        _ = state.handle(.notification, now: now + .seconds(61))
        #expect(state.attempt == 0)
    }

    @Test func losingTheLinkWhileStreamingReconnectsQuickly() {
        var state = Self.streaming()
        #expect(state.handle(.servicesResolved(false), now: .seconds(10)) == [.linkLost])
        #expect(state.handle(.connected(false), now: .seconds(10)) == [])
        guard case .backingOff(let until) = state.phase else {
            Issue.record("not backing off")
            return
        }
        #expect(until <= .seconds(10) + .milliseconds(250))
        #expect(state.handle(.tick, now: until) == [.connect])
        var direct = Self.streaming()
        #expect(direct.handle(.connected(false), now: .seconds(5)) == [.linkLost])
        #expect(direct.reconnects == 1)
    }

    @Test func theWatchdogDisconnectsASilentSensor() {
        var state = Self.streaming()
        _ = state.handle(.notification, now: .seconds(5))
        #expect(state.handle(.tick, now: .seconds(19)) == [])
        #expect(state.handle(.tick, now: .seconds(20)) == [.linkLost, .disconnect])
        #expect(state.watchdogTrips == 1)
        // Connected=false that follows our Disconnect changes nothing more.
        #expect(state.handle(.connected(false), now: .seconds(20)) == [])
    }

    /// bluetoothd 5.66 sets ServicesResolved=true before the objects of a database it discovers again: the first
    /// look-up without a measurement characteristic waits `layoutSettle` and looks again.
    @Test func noMeasurementCharacteristicIsLookedForAgainAfterAMoment() {
        var state = Self.machine()
        _ = state.handle(.start(deviceKnown: true, connected: true, resolved: true), now: .zero)
        #expect(state.handle(.subscribeFailed(.other, servicesChanged: true), now: .zero) == [])
        #expect(state.phase == .resolving)
        #expect(state.handle(.tick, now: .seconds(4)) == [])
        #expect(state.handle(.tick, now: .seconds(5)) == [.subscribe])
        #expect(state.handle(.subscribed, now: .seconds(5)) == [])
        #expect(state.phase == .streaming)
        // A ServicesResolved=true during the wait looks again at once.
        var other = Self.machine()
        _ = other.handle(.start(deviceKnown: true, connected: true, resolved: true), now: .zero)
        _ = other.handle(.subscribeFailed(.other, servicesChanged: true), now: .zero)
        #expect(other.handle(.servicesResolved(true), now: .seconds(1)) == [.subscribe])
    }

    @Test func aChangedLayoutRemovesTheDeviceOnceThenRetriesSlowly() {
        var state = Self.machine()
        _ = state.handle(.start(deviceKnown: true, connected: true, resolved: true), now: .zero)
        #expect(state.handle(.subscribeFailed(.other, servicesChanged: true), now: .zero) == [])
        #expect(state.handle(.tick, now: .seconds(5)) == [.subscribe])
        #expect(state.handle(.subscribeFailed(.other, servicesChanged: true), now: .seconds(5)) == [.removeDevice])
        guard case .backingOff(let until) = state.phase else {
            Issue.record("not backing off")
            return
        }
        _ = state.handle(.tick, now: until)
        _ = state.handle(.connectSucceeded, now: until)
        _ = state.handle(.servicesResolved(true), now: until)
        #expect(state.handle(.subscribeFailed(.other, servicesChanged: true), now: until) == [])
        _ = state.handle(.tick, now: until + .seconds(5))
        #expect(
            state.handle(.subscribeFailed(.other, servicesChanged: true), now: until + .seconds(5)) == [.disconnect])
        guard case .backingOff(let later) = state.phase else {
            Issue.record("not backing off")
            return
        }
        #expect(later - until >= .seconds(30))
    }

    @Test func aResolutionThatNeverComesIsGivenUp() {
        var state = Self.machine()
        _ = state.handle(.start(deviceKnown: true, connected: false, resolved: false), now: .zero)
        _ = state.handle(.connectSucceeded, now: .zero)
        #expect(state.handle(.tick, now: .seconds(29)) == [])
        #expect(state.handle(.tick, now: .seconds(30)) == [.disconnect])
    }

    @Test func theStackGoingAwayWaitsAndComingBackReconnects() {
        var state = Self.streaming()
        #expect(state.handle(.stackUnavailable, now: .seconds(3)) == [.linkLost])
        #expect(state.phase == .waitingForStack)
        #expect(state.handle(.tick, now: .seconds(100)) == [])
        #expect(state.handle(.stackAvailable, now: .seconds(101)) == [.connect])
    }

    @Test func stopReleasesAConnectedSensorAndIgnoresEverythingAfter() {
        var state = Self.streaming()
        #expect(state.handle(.stop, now: .seconds(1)) == [.linkLost, .release])
        #expect(state.handle(.connected(false), now: .seconds(1)) == [])
        #expect(state.handle(.stackAvailable, now: .seconds(1)) == [])
        #expect(state.phase == .stopped)
        var idle = Self.machine()
        #expect(idle.handle(.stop, now: .zero) == [.linkLost])
    }
}
