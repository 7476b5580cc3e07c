import Foundation
import Health

/// The Health app's charts, drawn here as inline SVG (no script, no library): sparklines, bars per bucket (cumulative
/// types: the merged total) and the min-max band with the average line (discrete types).
enum WebChart {
    static let width = 720.0
    static let height = 220.0
    static let margin = 36.0

    /// A small line over the values (gaps where a value is missing).
    static func sparkline(_ values: [Double?]) -> String {
        let present = values.compactMap { $0 }
        guard let low = present.min(), let high = present.max(), values.count > 1 else {
            return "<svg class=\"spark\" viewBox=\"0 0 120 30\" role=\"img\" aria-label=\"no data\"></svg>"
        }
        let span = high - low == 0 ? 1 : high - low
        var path = ""
        var pen = false
        for (index, value) in values.enumerated() {
            guard let value else {
                pen = false
                continue
            }
            let x = Double(index) / Double(values.count - 1) * 116 + 2
            let y = 28 - (value - low) / span * 26
            path += (pen ? "L" : "M") + String(format: "%.1f %.1f ", x, y)
            pen = true
        }
        return
            "<svg class=\"spark\" viewBox=\"0 0 120 30\" role=\"img\" aria-label=\"last 7 days\"><path d=\"\(path)\"/></svg>"
    }

    /// Bars per bucket.
    static func bars(_ values: [(StatisticsBucket, Double?)], unit: String) -> String {
        let high = max(values.compactMap(\.1).max() ?? 0, 1)
        let step = (width - 2 * margin) / Double(max(values.count, 1))
        var shapes = ""
        for (index, (bucket, value)) in values.enumerated() {
            guard let value, value > 0 else { continue }
            let h = value / high * (height - 2 * margin)
            let x = margin + Double(index) * step
            shapes += String(
                format:
                    "<rect class=\"bar\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\"><title>%@: %.0f %@</title></rect>",
                x + step * 0.1, height - margin - h, step * 0.8, h, label(bucket) as NSString, value, unit as NSString)
        }
        return frame(shapes + axis(values.map(\.0), high: high, low: 0, unit: unit))
    }

    /// A heart-rate zone: its name and its lowest value (the next zone's lowest is its top).
    struct Zone {
        var name: String
        var low: Double
    }

    /// The min-max band with the average line; `zones` drawn as labelled lines where they fall inside the chart;
    /// with `trend`, the least-squares line through the buckets' averages.
    static func band(_ results: [StatisticsResult], unit: String, zones: [Zone] = [], trend: Bool = false) -> String {
        let buckets = results.map(\.bucket)
        let lows = results.compactMap { $0.discrete?.minimum }
        let highs = results.compactMap { $0.discrete?.maximum }
        guard let low = lows.min(), let high = highs.max() else {
            return frame("<text x=\"\(width / 2)\" y=\"\(height / 2)\" class=\"empty\">no data</text>")
        }
        let span = high - low == 0 ? 1 : high - low
        let step = (width - 2 * margin) / Double(max(results.count, 1))
        func y(_ value: Double) -> Double { height - margin - (value - low) / span * (height - 2 * margin) }
        var shapes = ""
        var line = ""
        var pen = false
        for (index, result) in results.enumerated() {
            let x = margin + (Double(index) + 0.5) * step
            guard let stats = result.discrete, let minimum = stats.minimum, let maximum = stats.maximum,
                let average = stats.average
            else {
                pen = false
                continue
            }
            shapes += String(
                format:
                    "<rect class=\"band\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\"><title>%@: %.0f-%.0f, avg %.1f</title></rect>",
                x - step * 0.4, y(maximum), step * 0.8, max(1, y(minimum) - y(maximum)),
                label(result.bucket) as NSString,
                minimum, maximum, average)
            line += (pen ? "L" : "M") + String(format: "%.1f %.1f ", x, y(average))
            pen = true
        }
        for zone in zones where zone.low > low && zone.low < high {
            shapes += String(
                format:
                    "<path class=\"zone\" d=\"M%.1f %.1fH%.1f\"/><text class=\"zone\" x=\"%.1f\" y=\"%.1f\">%@</text>",
                margin, y(zone.low), width - margin, width - margin - 44, y(zone.low) - 3, html(zone.name) as NSString)
        }
        if trend, let fit = trendLine(results.map { $0.discrete?.average }) {
            let first = margin + 0.5 * step
            let last = margin + (Double(results.count) - 0.5) * step
            shapes += String(
                format:
                    "<path class=\"trend\" d=\"M%.1f %.1fL%.1f %.1f\"><title>trend %+.2f %@ a bucket</title></path>",
                first, y(fit.start), last, y(fit.start + fit.slope * Double(results.count - 1)), fit.slope,
                unit as NSString)
        }
        return frame(shapes + "<path class=\"avg\" d=\"\(line)\"/>" + axis(buckets, high: high, low: low, unit: unit))
    }

    /// The least-squares line through the values present (by index): its value at index 0 and its slope per index;
    /// `nil` for fewer than two values.
    static func trendLine(_ values: [Double?]) -> (start: Double, slope: Double)? {
        let points = values.enumerated().compactMap { index, value in value.map { (Double(index), $0) } }
        guard points.count >= 2 else { return nil }
        let n = Double(points.count)
        let meanX = points.map(\.0).reduce(0, +) / n
        let meanY = points.map(\.1).reduce(0, +) / n
        let sxx = points.map { ($0.0 - meanX) * ($0.0 - meanX) }.reduce(0, +)
        guard sxx > 0 else { return nil }
        let slope = points.map { ($0.0 - meanX) * ($0.1 - meanY) }.reduce(0, +) / sxx
        return (meanY - slope * meanX, slope)
    }

    /// A line through one value per bucket (gaps where there is none), with a dot at each.
    static func line(_ values: [(StatisticsBucket, Double?)], unit: String, label name: String) -> String {
        let present = values.compactMap(\.1)
        guard let low = present.min(), let high = present.max() else {
            return frame("<text x=\"\(width / 2)\" y=\"\(height / 2)\" class=\"empty\">no \(html(name))</text>")
        }
        let span = high - low == 0 ? 1 : high - low
        let step = (width - 2 * margin) / Double(max(values.count, 1))
        func y(_ value: Double) -> Double { height - margin - (value - low) / span * (height - 2 * margin) }
        var path = ""
        var dots = ""
        var pen = false
        for (index, (bucket, value)) in values.enumerated() {
            guard let value else {
                pen = false
                continue
            }
            let x = margin + (Double(index) + 0.5) * step
            path += (pen ? "L" : "M") + String(format: "%.1f %.1f ", x, y(value))
            dots += String(
                format: "<circle class=\"dot\" cx=\"%.1f\" cy=\"%.1f\" r=\"3\"><title>%@: %.1f %@</title></circle>", x,
                y(value), label(bucket) as NSString, value, unit as NSString)
            pen = true
        }
        return frame(
            "<path class=\"line\" d=\"\(path)\"/>" + dots + axis(values.map(\.0), high: high, low: low, unit: unit))
    }

    /// One category sample on a timeline.
    struct Span {
        var start: Instant
        var end: Instant
        var value: Int
    }

    /// Category samples as a timeline: one row per value in `rows` (top to bottom), time across.
    static func timeline(
        _ spans: [Span], from: Instant, to: Instant, rows: [(value: Int, name: String)], ticks: [StatisticsBucket]
    ) -> String {
        let total = Double(max(1, to.milliseconds - from.milliseconds))
        let rowHeight = (height - 2 * margin) / Double(max(rows.count, 1))
        var shapes = ""
        for (index, row) in rows.enumerated() {
            shapes += String(
                format: "<text x=\"2\" y=\"%.1f\">%@</text>", margin + (Double(index) + 0.65) * rowHeight,
                html(row.name) as NSString)
        }
        let plotStart = margin * 2.5
        let plotWidth = width - plotStart - margin
        for span in spans {
            guard let row = rows.firstIndex(where: { $0.value == span.value }) else { continue }
            let start = max(0, Double(span.start.milliseconds - from.milliseconds)) / total
            let end = min(total, Double(span.end.milliseconds - from.milliseconds)) / total
            guard end > start else { continue }
            shapes += String(
                format: "<rect class=\"stage stage-%d\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\"><title>%@"
                    + "</title></rect>",
                span.value, plotStart + start * plotWidth, margin + Double(row) * rowHeight + 2,
                max(1, (end - start) * plotWidth), rowHeight - 4, html(rows[row].name) as NSString)
        }
        let every = max(1, ticks.count / 8)
        for (index, bucket) in ticks.enumerated() where index % every == 0 {
            let x = plotStart + Double(bucket.start.milliseconds - from.milliseconds) / total * plotWidth
            shapes += String(
                format: "<text x=\"%.1f\" y=\"%.0f\" class=\"tick\">%@</text>", x, height - margin + 16,
                label(bucket) as NSString)
        }
        return frame(shapes)
    }

    /// Hours per value per bucket, stacked (category types over weeks and months).
    static func stacked(_ results: [StatisticsResult], names: [Int: String]) -> String {
        let totals = results.map { $0.categories.map(\.hours).reduce(0, +) }
        let high = max(totals.max() ?? 0, 1)
        let step = (width - 2 * margin) / Double(max(results.count, 1))
        var shapes = ""
        for (index, result) in results.enumerated() {
            var top = height - margin
            for value in result.categories where value.milliseconds > 0 {
                let h = value.hours / high * (height - 2 * margin)
                top -= h
                shapes += String(
                    format: "<rect class=\"stage stage-%d\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\">"
                        + "<title>%@: %@ %.1f h</title></rect>",
                    value.value, margin + Double(index) * step + step * 0.1, top, step * 0.8, h,
                    label(result.bucket) as NSString, html(names[value.value] ?? String(value.value)) as NSString,
                    value.hours)
            }
        }
        return frame(shapes + axis(results.map(\.bucket), high: high, low: 0, unit: "h"))
    }

    static func frame(_ content: String) -> String {
        "<svg class=\"chart\" viewBox=\"0 0 \(Int(width)) \(Int(height))\" role=\"img\">\(content)</svg>"
    }

    static func axis(_ buckets: [StatisticsBucket], high: Double, low: Double, unit: String) -> String {
        var text = String(
            format: "<text x=\"2\" y=\"%.0f\">%.0f</text><text x=\"2\" y=\"%.0f\">%.0f</text>", margin, high,
            height - margin, low)
        text += "<text x=\"2\" y=\"14\">\(html(unit))</text>"
        let every = max(1, buckets.count / 8)
        let step = (width - 2 * margin) / Double(max(buckets.count, 1))
        for (index, bucket) in buckets.enumerated() where index % every == 0 {
            text += String(
                format: "<text x=\"%.1f\" y=\"%.0f\" class=\"tick\">%@</text>", margin + Double(index) * step,
                height - margin + 16, label(bucket) as NSString)
        }
        return text
    }

    /// `08:00` for buckets under a day, `03-30` for longer ones.
    static func label(_ bucket: StatisticsBucket) -> String {
        let local = bucket.localStart.description
        let time = local.dropFirst(11).prefix(5)
        return bucket.durationMilliseconds < 86_400_000 - 3_600_000
            ? String(time) : String(local.dropFirst(5).prefix(5))
    }
}
