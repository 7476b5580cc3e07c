internal import Health

/// Puts RR intervals on the timeline and cuts them into heartbeat series of a fixed window.
///
/// A notification carries RR intervals (1/1024 s, oldest first) but no time of its own
/// (`docs/gatt-policy.md`, "Heart Rate Measurement"), so beats are placed by a beat clock: each beat ends its RR
/// interval after the previous beat. The chain starts (and restarts) at a notification's arrival, walking back
/// from it; it breaks, and the next beat is marked as preceded by a gap, when notifications stop for longer than
/// the gap threshold, when the beat clock and the arrival times disagree by more than ``tolerance`` (beats were
/// lost), when the sensor loses contact or the link drops, and around implausible intervals (outside
/// 240-3000 ms, 20-250 bpm), which are left out. A new chain's beats that would fall at or before the last beat
/// placed are left out too, so that a series' beats always move forward.
struct HeartbeatAccumulator: Sendable {
    /// A closed series: absolute times in milliseconds since the epoch, beats relative to the start.
    struct Series: Sendable, Equatable {
        var startMilliseconds: Int64
        var endMilliseconds: Int64
        var beats: [Beat]
        var variability: Variability?
    }

    struct Variability: Sendable, Equatable {
        /// Standard deviation of the RR intervals (n - 1), ms.
        var sdnn: Double
        /// Root mean square of successive differences within unbroken runs, ms.
        var rmssd: Double
    }

    /// RR intervals outside this range (ms) are artefacts.
    static let plausible: ClosedRange<Double> = 240...3000
    /// How far the beat clock may run from the arrival times before the chain is considered broken, ms.
    static let tolerance: Double = 1500
    /// Fewest beats for an HRV value.
    static let minimumBeatsForVariability = 20

    let window: Int64
    let gapThreshold: Int64
    /// Absolute time of the last placed beat (ms, fractional), `nil` when the chain is broken.
    private var lastBeat: Double?
    private var lastArrival: Int64?
    /// The open series' start (ms) and beats.
    private var start: Int64?
    private var beats: [Beat] = []
    private var gapPending = false
    private(set) var artefacts = 0
    /// Beats of a new chain that fell at or before the last beat placed, left out.
    private(set) var overlapping = 0
    /// Absolute time of the last beat put into a series (ms, fractional); kept across series and chains.
    private var lastPlaced: Double?

    init(window: Int64, gapThreshold: Int64) {
        self.window = max(window, 1000)
        self.gapThreshold = gapThreshold
    }

    /// Adds the RR intervals of one notification that arrived at `arrival`; returns series that filled their window.
    mutating func add(rr1024: some Collection<UInt16>, arrivedAt arrival: Instant) -> [Series] {
        // Two passes over the intervals, without arrays: their sum places the chain, then each beat is placed.
        let now = Double(arrival.milliseconds)
        var total = 0.0
        for rr in rr1024 { total += Self.milliseconds(rr) }
        var clock: Double
        if let lastBeat, let lastArrival, arrival.milliseconds - lastArrival <= gapThreshold,
            abs(lastBeat + total - now) <= Self.tolerance
        {
            clock = lastBeat
        } else {
            // A new chain: the last beat is at the arrival, the earlier ones walk back from it.
            if lastBeat != nil || !beats.isEmpty { gapPending = true }
            clock = now - total
        }
        lastArrival = arrival.milliseconds
        var closed: [Series] = []
        for rr in rr1024 {
            let interval = Self.milliseconds(rr)
            clock += interval
            let time = clock
            guard Self.plausible.contains(interval) else {
                artefacts += 1
                gapPending = true
                lastBeat = time
                continue
            }
            // A new chain walks back from its arrival and may reach at or before the last beat placed (the
            // sensor sent intervals late, in a burst): those beats are left out (counted) rather than making a
            // series' offsets go back, or a series start before the previous one ended.
            if let lastPlaced, time <= lastPlaced {
                overlapping += 1
                lastBeat = time
                continue
            }
            if let start, Int64(time.rounded(.down)) - start >= window, let series = close() {
                closed.append(series)
            }
            let seriesStart = start ?? Int64(time.rounded(.down))
            start = seriesStart
            beats.append(
                Beat(
                    offsetMilliseconds: time - Double(seriesStart), rrMilliseconds: interval,
                    precededByGap: gapPending && !beats.isEmpty))
            gapPending = false
            lastBeat = time
            lastPlaced = time
        }
        return closed
    }

    /// An RR interval in 1/1024 s as milliseconds.
    private static func milliseconds(_ rr1024: UInt16) -> Double { Double(rr1024) * 1000 / 1024 }

    /// The chain breaks: the next beat starts a new chain and is marked as preceded by a gap.
    mutating func breakChain() {
        lastBeat = nil
        lastArrival = nil
        gapPending = true
    }

    /// Closes the open series, if it has beats; the chain goes on into the next series.
    mutating func close() -> Series? {
        defer {
            start = nil
            beats = []
        }
        guard let start, let last = beats.last else { return nil }
        let end = start + Int64((last.offsetMilliseconds).rounded(.up))
        return Series(
            startMilliseconds: start, endMilliseconds: end, beats: beats, variability: Self.variability(of: beats))
    }

    static func variability(of beats: [Beat]) -> Variability? {
        guard beats.count >= minimumBeatsForVariability else { return nil }
        let intervals = beats.map(\.rrMilliseconds)
        let mean = intervals.reduce(0, +) / Double(intervals.count)
        let variance = intervals.reduce(0) { $0 + ($1 - mean) * ($1 - mean) } / Double(intervals.count - 1)
        var squares = 0.0
        var differences = 0
        for index in beats.indices.dropFirst() where !beats[index].precededByGap {
            let difference = beats[index].rrMilliseconds - beats[index - 1].rrMilliseconds
            squares += difference * difference
            differences += 1
        }
        guard differences > 0 else { return nil }
        return Variability(sdnn: variance.squareRoot(), rmssd: (squares / Double(differences)).squareRoot())
    }
}
