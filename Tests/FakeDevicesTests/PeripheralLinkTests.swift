import FakeDevices
import GATT
import Testing

/// What the BlueZ VM rig's peripheral host tells the peripheral it serves of its link (``PeripheralLink``), with the
/// simulated scale: a pause is contact lost, and the scale behaves as it does across a reconnection.
@Suite struct PeripheralLinkTests {
    /// A scale that weighs every second (at 0.1, 1.1, 2.1 s, ...), as in the rig.
    static func scale() -> BathroomScale {
        BathroomScale(
            script: PeripheralScript(
                kind: .bathroomScale, address: "C0:FF:EE:00:00:61", seed: 3, summaryInterval: .seconds(1)))
    }

    @Test func aPausedScaleKeepsItsReadingsAndSendsThemAfterItsLastOneAgainWhenThePauseEnds() {
        var scale = Self.scale()
        var link = PeripheralLink()
        #expect(link.update(&scale, connected: true, paused: false, subscriptions: [], at: .zero))
        link.subscribed(&scale, to: .weightMeasurement, at: .zero)  // the central's StartNotify, link up
        let before = scale.advance(to: .milliseconds(2_500))
        #expect(before.count == 3)
        let subscriptions: Set<BluetoothUUID> = [.weightMeasurement]
        #expect(!link.update(&scale, connected: true, paused: true, subscriptions: subscriptions, at: .seconds(3)))
        #expect(!link.isUp)
        #expect(scale.advance(to: .milliseconds(5_500)).isEmpty)  // 3.1, 4.1 and 5.1 s: kept
        #expect(link.update(&scale, connected: true, paused: false, subscriptions: subscriptions, at: .seconds(6)))
        let after = scale.advance(to: .seconds(6))
        // The last reading before the pause once more (the scale cannot tell whether it was confirmed), then the
        // three kept, oldest first.
        #expect(after.map(\.value) == [before[2].value] + scale.readings[3...5].map { $0.encoded() })
        #expect(after.allSatisfy { $0.isIndication })
    }

    @Test func aSubscriptionMadeWhileTheLinkIsDownTakesEffectWhenTheLinkComesUp() {
        var scale = Self.scale()
        var link = PeripheralLink()
        #expect(!link.update(&scale, connected: false, paused: false, subscriptions: [], at: .zero))
        link.subscribed(&scale, to: .weightMeasurement, at: .zero)
        #expect(scale.advance(to: .milliseconds(1_500)).isEmpty)  // 0.1 and 1.1 s: kept
        #expect(
            link.update(&scale, connected: true, paused: false, subscriptions: [.weightMeasurement], at: .seconds(2)))
        #expect(scale.advance(to: .seconds(2)).map(\.value) == scale.readings.map { $0.encoded() })
        #expect(scale.readings.count == 2)
    }

    @Test func aReconnectedScaleWaitsForTheCentralsSubscriptionOfTheNewLink() {
        var scale = Self.scale()
        var link = PeripheralLink()
        #expect(link.update(&scale, connected: true, paused: false, subscriptions: [], at: .zero))
        link.subscribed(&scale, to: .weightMeasurement, at: .zero)
        let before = scale.advance(to: .milliseconds(1_500))
        #expect(before.count == 2)
        // The link drops; the central was not bonded, so its subscription went with it (bluetoothd's StopNotify).
        #expect(!link.update(&scale, connected: false, paused: false, subscriptions: [], at: .seconds(2)))
        #expect(scale.advance(to: .milliseconds(2_500)).isEmpty)  // 2.1 s: kept
        #expect(link.update(&scale, connected: true, paused: false, subscriptions: [], at: .seconds(3)))
        #expect(scale.advance(to: .milliseconds(3_500)).isEmpty)  // 3.1 s: kept, nobody subscribed yet
        link.subscribed(&scale, to: .weightMeasurement, at: .milliseconds(3_600))
        #expect(
            scale.advance(to: .milliseconds(3_600)).map(\.value)
                == [before[1].value] + scale.readings[2...3].map { $0.encoded() })
    }
}
