import Foundation
import Health
import HealthWeb
import StoreEngine

/// The summary's cards beyond heart rate and activity: resting heart rate, weight, blood pressure, body temperature
/// and last night's sleep, each with a sparkline (the last 7 days; weight and blood pressure, which people measure
/// now and then, the last 30).
extension WebApp {
    /// The sleep stages that count as asleep (HealthKit's asleepUnspecified, asleepCore, asleepDeep, asleepREM).
    static let asleepValues: Set<Int> = [1, 3, 4, 5]

    func measurementCards(now: Instant, subjects filter: [String]?) async throws -> [String] {
        let weekStart = try dayStart(of: now, minusDays: 6)
        let monthStart = try dayStart(of: now, minusDays: 29)
        var cards: [String] = []
        for (identifier, title, unit, since) in [
            ("restingHeartRate", "Resting heart rate", "bpm", weekStart), ("bodyMass", "Weight", "kg", monthStart),
            ("bodyTemperature", "Body temperature", "°C", weekStart),
        ] {
            guard let type = HealthTypeCatalog.type(identifier) else { continue }
            let latest = try await latestSample(type, before: now, subjects: filter)
            let days = try await daily(type, from: since, to: now, subjects: filter)
            let averages = days.compactMap { $0.discrete?.average }
            let span = since == monthStart ? "30" : "7"
            cards.append(
                card(
                    title: title, link: "/type/\(identifier)",
                    main: latest.map { "\(format($0.value)) <small>\(unit)</small>" } ?? "no data",
                    details: [
                        ("measured", latest.map { shortTime($0.start) } ?? "-"),
                        (
                            "avg \(span) days",
                            averages.isEmpty ? "-" : format(averages.reduce(0, +) / Double(averages.count))
                        ),
                    ], sparkline: WebChart.sparkline(days.map { $0.discrete?.average })))
        }
        cards.append(try await bloodPressureCard(now: now, since: monthStart, subjects: filter))
        cards.append(try await sleepCard(now: now, subjects: filter))
        return cards
    }

    func latestSample(_ type: HealthType, before now: Instant, subjects: [String]?) async throws -> QuantitySample? {
        try await store.samples(
            SampleQuery(type: type, to: now, subjects: subjects, ascending: false, limit: 1), as: .owner
        ).samples.first
    }

    /// The latest systolic reading that has a diastolic one over the same interval from the same person (the two
    /// member samples a blood pressure correlation holds).
    func bloodPressureCard(now: Instant, since: Instant, subjects: [String]?) async throws -> String {
        guard let systolicType = HealthTypeCatalog.type("bloodPressureSystolic"),
            let diastolicType = HealthTypeCatalog.type("bloodPressureDiastolic")
        else { return "" }
        let pair = try await latestBloodPressure(
            systolic: systolicType, diastolic: diastolicType, from: since, to: now, subjects: subjects)
        let days = try await daily(systolicType, from: since, to: now, subjects: subjects)
        let main = pair.map { "\(format($0.systolic.value))/\(format($0.diastolic.value)) <small>mmHg</small>" }
        return card(
            title: "Blood pressure", link: "/type/bloodPressureSystolic", main: main ?? "no data",
            details: [
                ("measured", pair.map { shortTime($0.systolic.start) } ?? "-"),
                ("readings, 30 days", String(days.compactMap { $0.discrete?.count }.reduce(0, +))),
            ], sparkline: WebChart.sparkline(days.map { $0.discrete?.average }))
    }

    func latestBloodPressure(
        systolic: HealthType, diastolic: HealthType, from: Instant, to: Instant, subjects: [String]?
    ) async throws -> (systolic: QuantitySample, diastolic: QuantitySample)? {
        let highs = try await store.samples(
            SampleQuery(type: systolic, from: from, to: to, subjects: subjects, ascending: false, limit: 50),
            as: .owner
        ).samples
        guard let oldest = highs.last else { return nil }
        let lows = try await store.samples(
            SampleQuery(type: diastolic, from: oldest.start, to: to, subjects: subjects, ascending: false, limit: 200),
            as: .owner
        ).samples
        for high in highs {
            if let low = lows.first(where: {
                $0.start == high.start && $0.end == high.end && $0.subject == high.subject
            }) {
                return (high, low)
            }
        }
        return nil
    }

    /// Last night: noon yesterday to noon today (to now before noon); hours asleep by stage; the sparkline the
    /// hours asleep of the last 7 nights.
    func sleepCard(now: Instant, subjects: [String]?) async throws -> String {
        guard let sleep = HealthTypeCatalog.type("sleepAnalysis") else { return "" }
        let nights = try lastNights(7, now: now)
        let results = try await store.statistics(
            StatisticsQuery(type: sleep, buckets: nights, subjects: subjects), as: .owner)
        let asleep = results.map { result -> Double? in
            let hours = result.categories.filter { Self.asleepValues.contains($0.value) }.map(\.hours).reduce(0, +)
            return result.categories.isEmpty ? nil : hours
        }
        let last = results.last?.categories ?? []
        let details = last.map { value in
            (sleep.name(of: value.value) ?? String(value.value), String(format: "%.1f h", value.hours))
        }
        let main = asleep.last.flatMap { $0 }.map { String(format: "%.1f", $0) + " <small>h asleep</small>" }
        return card(
            title: "Last night's sleep", link: "/type/sleepAnalysis", main: main ?? "no data",
            details: details.isEmpty ? [("stages", "-")] : details, sparkline: WebChart.sparkline(asleep))
    }

    /// `2025-03-30 08:00` in the app's zone.
    func shortTime(_ instant: Instant) -> String {
        String(localInput(instant).prefix(16)).replacingOccurrences(of: "T", with: " ")
    }

    /// The last `count` nights as buckets from local noon to local noon, the last ending at today's noon (at now,
    /// before noon).
    func lastNights(_ count: Int, now: Instant) throws -> [StatisticsBucket] {
        let today = try StatisticsBuckets.localTime(at: now, in: timeZone)
        let noon = try LocalDateTime(year: today.year, month: today.month, day: today.day, hour: 12)
        return try (0..<count).reversed().map { night in
            let stop = StatisticsBuckets.instant(for: try noon.adding(days: -night), in: timeZone)
            let start = StatisticsBuckets.instant(for: try noon.adding(days: -night - 1), in: timeZone)
            return try bucket(start, min(stop, max(now, start.adding(milliseconds: 1))))
        }
    }
}
