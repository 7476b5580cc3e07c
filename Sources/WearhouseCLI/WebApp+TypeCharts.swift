import Foundation
import Health
import HealthWeb
import StoreEngine

/// The type pages' charts: bars for cumulative types and series counts, the band for discrete types (heart rate
/// with its zones, weight with its trend line), category samples as a timeline of stages (a day or a week) or
/// stacked hours (a month, a year); and on the heart-rate page the RR-derived HRV.
extension WebApp {
    /// The zones' lower bounds as shares of the maximum heart rate.
    static let zoneShares: [(name: String, share: Double)] = [
        ("zone 1", 0.5), ("zone 2", 0.6), ("zone 3", 0.7), ("zone 4", 0.8), ("zone 5", 0.9),
    ]
    /// The most heartbeat series read for one HRV chart.
    static let maximumHRVSeries = 20_000

    /// What ``heartRateZones(_:)`` returns: the age, the maximum and the zones' lower bounds.
    typealias Zones = (age: Int, maximum: Double, bounds: [(name: String, low: Double)])

    func typeChart(
        _ type: HealthType, _ results: [StatisticsResult], from: Instant, to: Instant, range: Range,
        session: SessionGate.Session, zones: Zones?
    ) async throws -> String {
        switch type.aggregation {
        case .cumulative: return WebChart.bars(results.map { ($0.bucket, $0.sum) }, unit: type.canonicalUnit)
        case .series:
            return WebChart.bars(results.map { ($0.bucket, $0.discrete.map { Double($0.count) }) }, unit: "series")
        case .category:
            let names = Dictionary(type.values.map { ($0.value, $0.name) }, uniquingKeysWith: { a, _ in a })
            guard range == .day || range == .week else { return WebChart.stacked(results, names: names) }
            let read = try await store.samples(
                SampleQuery(type: type, from: from, to: to, subjects: session.subject.map { [$0] }, limit: 5_000),
                as: .owner)
            let spans = read.samples.map { WebChart.Span(start: $0.start, end: $0.end, value: Int($0.value)) }
            // Sleep from the lightest stage at the top to the deepest at the bottom; other categories in order.
            let order = type.identifier == "sleepAnalysis" ? [0, 2, 5, 1, 3, 4] : type.values.map(\.value)
            let rows = order.compactMap { value in names[value].map { (value, $0) } }
            return WebChart.timeline(spans, from: from, to: to, rows: rows, ticks: results.map(\.bucket))
        default:
            if type == .heartRate {
                return WebChart.band(
                    results, unit: type.canonicalUnit,
                    zones: zones?.bounds.map { WebChart.Zone(name: $0.name, low: $0.low) } ?? [])
            }
            return WebChart.band(results, unit: type.canonicalUnit, trend: type.identifier == "bodyMass")
        }
    }

    /// The maximum heart rate by 220 minus the age (from the date of birth on the Me page), and the zones from
    /// 50 % of it in steps of 10 %; `nil` without a date of birth.
    func heartRateZones(_ session: SessionGate.Session) async throws -> Zones? {
        let characteristics = try await store.characteristics(of: session.subject, as: .owner)
        guard let age = characteristics.age(at: .now, timeZone: timeZone) else { return nil }
        let maximum = Double(max(100, 220 - age))
        return (age, maximum, Self.zoneShares.map { ($0.name, ($0.share * maximum).rounded()) })
    }

    /// What the heart-rate page shows below its chart: the zones and the HRV chart.
    func heartRateExtras(
        _ results: [StatisticsResult], from: Instant, to: Instant, session: SessionGate.Session, zones: Zones?
    ) async throws -> String {
        var text = "<h2>Zones</h2>"
        if let zones {
            let rows = zones.bounds.enumerated().map { index, zone in
                let top =
                    index + 1 < zones.bounds.count ? format(zones.bounds[index + 1].low - 1) : format(zones.maximum)
                return "<tr><td>\(zone.name)</td><td class=\"num\">\(format(zone.low))-\(top)</td></tr>"
            }.joined()
            text +=
                "<p id=\"zones\">Maximum \(format(zones.maximum)) bpm (220 minus the age, \(zones.age)); the zones "
                + "start at 50, 60, 70, 80 and 90 % of it.</p><table><tr><th>Zone</th><th>bpm</th></tr>\(rows)</table>"
        } else {
            text +=
                "<p class=\"note\" id=\"zones\">Set a date of birth on the <a href=\"/me\">Me</a> page to see zones "
                + "(220 minus the age).</p>"
        }
        let hrv = try await rmssd(buckets: results.map(\.bucket), from: from, to: to, session: session)
        let capped = hrv.capped ? " From the latest \(Self.maximumHRVSeries) series only." : ""
        text +=
            "<h2>Heart rate variability</h2><p class=\"note\">RMSSD of successive RR intervals from the heartbeat "
            + "series, per bucket (beats after a gap are not paired).\(capped)</p>"
            + WebChart.line(Array(zip(results.map(\.bucket), hrv.values)), unit: "ms", label: "heartbeat series")
        return text
    }

    /// RMSSD per bucket: the root mean square of the differences of successive RR intervals of the series in
    /// range (a pair counts in the bucket of its second beat; a beat after a gap starts again), from the latest
    /// ``maximumHRVSeries`` series at most (`capped` when there were more).
    func rmssd(buckets: [StatisticsBucket], from: Instant, to: Instant, session: SessionGate.Session) async throws
        -> (values: [Double?], capped: Bool)
    {
        guard !buckets.isEmpty else { return ([], false) }
        var squares = [Double](repeating: 0, count: buckets.count)
        var counts = [Int](repeating: 0, count: buckets.count)
        var query = SampleQuery(
            type: .heartbeatSeries, from: from, to: to, subjects: session.subject.map { [$0] }, ascending: false,
            limit: 500)
        var read = 0
        var capped = false
        let starts = buckets.map(\.start.milliseconds)
        while read < Self.maximumHRVSeries {
            let page = try await store.heartbeatSeries(query, as: .owner)
            for series in page.series {
                var previous: Double?
                for beat in series.beats {
                    defer { previous = beat.rrMilliseconds }
                    guard let last = previous, !beat.precededByGap else {
                        if beat.precededByGap { previous = nil }
                        continue
                    }
                    let at = series.start.milliseconds + Int64(beat.offsetMilliseconds.rounded())
                    guard at >= starts[0], at < to.milliseconds else { continue }
                    var low = 0
                    var high = starts.count - 1
                    while low < high {
                        let middle = (low + high + 1) / 2
                        if starts[middle] <= at { low = middle } else { high = middle - 1 }
                    }
                    let difference = beat.rrMilliseconds - last
                    squares[low] += difference * difference
                    counts[low] += 1
                }
            }
            read += page.series.count
            guard let next = page.next else { break }
            capped = read >= Self.maximumHRVSeries
            query.cursor = next
        }
        return (zip(squares, counts).map { $1 == 0 ? nil : ($0 / Double($1)).squareRoot() }, capped)
    }
}
