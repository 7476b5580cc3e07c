import Foundation

/// One row of a scenario: a measured subject and its median rate.
struct BenchRow: Codable {
    var subject: String
    var unit: String
    /// Every run's rate, warm-up excluded.
    var runs: [Double]
    var median: Double { runs.sorted()[runs.count / 2] }
}

/// A scenario's results, printed as a table and written as JSON.
struct BenchReport: Codable {
    var scenario: String
    var size: BenchSize
    var machine: String
    var date: String
    var rows: [BenchRow]
    /// Targets and notes shown under the table.
    var notes: [String]

    init(scenario: String, size: BenchSize, rows: [BenchRow], notes: [String]) {
        self.scenario = scenario
        self.size = size
        self.rows = rows
        self.notes = notes
        machine = BenchReport.machineDescription
        date = ISO8601DateFormatter().string(from: Date())
    }

    var table: String {
        guard let subject = rows.first else { return "" }
        let label = size.pick(full: "", quick: " (quick)", smoke: " (smoke: the harness runs; measures nothing)")
        var lines = ["## \(scenario)\(label)  [\(machine)]", ""]
        lines.append("| subject | median | unit | runs | ratio to \(subject.subject) |")
        lines.append("|---|---:|---|---:|---:|")
        for row in rows {
            let ratio = row.median / subject.median
            lines.append(
                "| \(row.subject) | \(Self.format(row.median)) | \(row.unit) | \(row.runs.count) | \(String(format: "%.2f", ratio)) |"
            )
        }
        lines += notes.map { "- \($0)" }
        return lines.joined(separator: "\n") + "\n"
    }

    func write(to directory: String) throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try encoder.encode(self).write(to: URL(fileURLWithPath: "\(directory)/\(scenario).json"))
    }

    static func format(_ value: Double) -> String {
        switch value {
        case 1e6...: String(format: "%.2f M", value / 1e6)
        case 1e3...: String(format: "%.1f k", value / 1e3)
        default: String(format: "%.2f", value)
        }
    }

    static var machineDescription: String {
        let cpu =
            (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8))?
            .split(separator: "\n").first { $0.hasPrefix("model name") }?
            .split(separator: ":").last?.trimmingCharacters(in: .whitespaces) ?? "unknown CPU"
        return "\(cpu), \(ProcessInfo.processInfo.activeProcessorCount) cores"
    }
}

/// Runs `body` once to warm up, then `runs` times, and returns each run's rate (`work` units per second).
func measureRate(runs: Int, work: Double, _ body: () -> Void) -> [Double] {
    body()
    let clock = ContinuousClock()
    return (0..<runs).map { _ in
        let elapsed = clock.measure(body)
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
        return work / seconds
    }
}

/// Prevents the optimiser from removing a computation whose result is otherwise unused.
@inline(never)
func blackHole<T>(_ value: T) {
    withExtendedLifetime(value) {}
}
