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

    /// The min-max band with the average line.
    static func band(_ results: [StatisticsResult], unit: String) -> String {
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
        return frame(shapes + "<path class=\"avg\" d=\"\(line)\"/>" + axis(buckets, high: high, low: low, unit: unit))
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
