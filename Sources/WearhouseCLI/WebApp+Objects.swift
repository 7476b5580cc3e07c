import Foundation
import Health
import HealthWeb

/// The pages of the types that are not samples of one value: workouts (each with its totals, and its routes drawn)
/// and correlations (a blood pressure as `121/79 mmHg`, a meal as its parts), listed newest first over the range,
/// to be ticked and deleted as samples are.
extension WebApp {
    /// How many routes one page draws (each is an SVG of at most ``WebChart/routePoints`` points).
    static let routesPerPage = 12

    func objectPage(
        _ type: HealthType, from: Instant, to: Instant, subjects: [String]?, page number: Int, link: String,
        navigation: String, _ session: SessionGate.Session
    ) async throws -> HTTPResponse {
        var query = SampleQuery(
            type: type, from: from, to: to, subjects: subjects, ascending: false, limit: Self.pageSize)
        var rows: [String] = []
        var routes: [String] = []
        var hasMore = false
        for current in 1...number {
            let next: SampleCursor?
            if type.kind == .workout {
                let read = try await store.workouts(query, as: .owner)
                if current == number {
                    for workout in read.workouts {
                        rows.append(
                            sampleRow(
                                id: workout.id, start: workout.start, end: workout.end,
                                offset: workout.startOffsetSeconds, value: ObjectRecords.summary(workout),
                                source: workout.provenance.description, subject: workout.subject,
                                metadata: workout.metadata))
                        for route in workout.routes where routes.count < Self.routesPerPage {
                            routes.append(
                                "<figure>" + WebChart.route(route.locations) + "<figcaption>"
                                    + time(workout.start, workout.startOffsetSeconds) + " "
                                    + html(workout.activityType.name) + ", \(route.locations.count) locations"
                                    + "</figcaption></figure>")
                        }
                    }
                }
                next = read.next
            } else {
                let read = try await store.correlations(query, as: .owner)
                if current == number {
                    rows = read.correlations.map { correlation in
                        sampleRow(
                            id: correlation.id, start: correlation.start, end: correlation.end,
                            offset: correlation.startOffsetSeconds, value: ObjectRecords.summary(correlation),
                            source: correlation.provenance.description, subject: correlation.subject,
                            metadata: correlation.metadata)
                    }
                }
                next = read.next
            }
            hasMore = next != nil
            guard let next else { break }
            query.cursor = next
        }
        let noun = type.kind == .workout ? "workouts" : "\(type.identifier) records"
        let list =
            rows.isEmpty
            ? "<p class=\"empty\">No \(html(noun)) in this range.</p>"
            : tickableList(
                type, rows: rows, valueHeading: "What", button: "Delete the ticked…", page: number, hasMore: hasMore,
                link: link, session)
        let drawn = routes.isEmpty ? "" : "<h2>Routes</h2><div class=\"routes\">" + routes.joined() + "</div>"
        return page(type.identifier, session: session) {
            "<h1>\(html(type.identifier))</h1>" + navigation + drawn
                + "<h2>\(html(noun.prefix(1).uppercased() + noun.dropFirst()))</h2>"
                + list + deleteRangeForm(type, from: from, to: to, session)
        }
    }
}

extension WebChart {
    /// The most points a route's drawing has (a longer route is drawn through every n-th location, its last
    /// included).
    static let routePoints = 600

    /// A route as a line on a square, north up: longitudes scaled by the cosine of the middle latitude, so that a
    /// short route keeps its shape (one across the antimeridian too); the start a dot.
    static func route(_ locations: [RouteLocation]) -> String {
        let size = 240.0
        let inset = 10.0
        guard locations.count > 1 else {
            return "<svg class=\"route\" viewBox=\"0 0 240 240\" role=\"img\" aria-label=\"no route\"></svg>"
        }
        let latitudes = locations.map(\.latitude)
        let low = latitudes.min() ?? 0
        let high = latitudes.max() ?? 0
        let scale = cos((low + high) / 2 * .pi / 180)
        // A route across the antimeridian (longitudes from near -180 and near 180) is drawn with the west side
        // continued past 180, not across the whole square.
        let longitudes = locations.map(\.longitude)
        let crosses = (longitudes.max() ?? 0) - (longitudes.min() ?? 0) > 180
        let xs = longitudes.map { ($0 < 0 && crosses ? $0 + 360 : $0) * scale }
        let left = xs.min() ?? 0
        let span = max(high - low, (xs.max() ?? 0) - left, 1e-9)
        func point(_ index: Int) -> String {
            let x = inset + (xs[index] - left) / span * (size - 2 * inset)
            let y = size - inset - (locations[index].latitude - low) / span * (size - 2 * inset)
            return String(format: "%.1f %.1f", x, y)
        }
        let step = max(1, (locations.count + routePoints - 1) / routePoints)
        var indices = Array(stride(from: 0, to: locations.count, by: step))
        if indices.last != locations.count - 1 { indices.append(locations.count - 1) }
        let path = "M" + indices.map(point).joined(separator: "L")
        let start = point(0).split(separator: " ")
        return "<svg class=\"route\" viewBox=\"0 0 240 240\" role=\"img\" aria-label=\"route of \(locations.count) "
            + "locations\"><path d=\"\(path)\"/><circle cx=\"\(start[0])\" cy=\"\(start[1])\" r=\"4\"/></svg>"
    }
}
