import Foundation
import Gateway
import Health
import StoreEngine
import Traces

/// `wearhouse replay FILE`: a recorded trace through the live ingest path into the store.
struct ReplayCommand: Command {
    let name = "replay"
    let abstract = "Feed a recorded trace through the ingest path into the store, as if it were live."
    var discussion: String {
        """
        The trace's notifications go through the same decoders, sample builders and store writer as live data, one
        builder per sensor, tagged with the device, subject and source the trace recorded (--subject replaces the
        subject). Samples have stable ids, so replaying a trace twice stores nothing new. --speed 1 replays in
        recorded time, 10 ten times faster, max (the default) as fast as the store takes it. A progress bar shows
        on a terminal; a summary always ends the run. The format is described in docs/trace-format.md.
        """
    }

    struct Options: CommandOptions {
        var file = ""
        var speed = ReplaySpeed.max
        var store: String?
        var subject: String?
        var json = false
    }

    let syntax = CommandSyntax<Options>(
        positionals: [.required("file", \.file, kind: .path, help: "The trace to replay.")],
        options: [
            ReplayCommand.speed(\.speed, help: "Replay speed: a factor of recorded time, or max."),
            StoreOptions.store(\.store),
            .text(
                "subject", value: "name", \.subject,
                help: "Tag every sample with this subject instead of the recorded one."),
            .flag("json", \.json, help: "Print the summary as JSON."),
        ])

    /// `--speed <1|10|max>`, shared with `wearhouse import`.
    static func speed<Options: CommandOptions>(
        _ path: any WritableKeyPath<Options, ReplaySpeed> & Sendable, help: String
    ) -> Option<Options> {
        .value(
            "speed", value: "1|10|max", path, help: help,
            format: { speed in
                switch speed {
                case .max: "max"
                case .factor(let factor): decimal(factor)
                }
            }
        ) { text throws(UsageError) in
            guard let speed = ReplaySpeed(text) else {
                throw UsageError("--speed must be a positive factor (1, 10) or max, not \(echo(text))")
            }
            return speed
        }
    }

    func run(_ options: Options, console: Console) async -> ExitCode {
        let path = options.file
        guard FileManager.default.fileExists(atPath: path) else {
            console.error("no trace at \(path)")
            return .noInput
        }
        let reader: TraceReader
        do {
            reader = try TraceReader(path: path)
        } catch {
            console.error("\(error)")
            return .dataError
        }
        var source = reader  // the same reader; `issues` reads it after the replay
        return await TraceReplayRunner.run(
            &source, name: path, speed: options.speed, store: options.store, subject: options.subject,
            json: options.json, console: console, issues: { reader.issues.map(\.description) })
    }
}

/// The part replay and import share: open the store, run the replay with a progress bar, print the summary.
enum TraceReplayRunner {
    static func run<Records: TraceRecordSource>(
        _ source: inout Records, name: String, speed: ReplaySpeed, store location: String?, subject: String?,
        json: Bool, console: Console, issues: () -> [String]
    ) async -> ExitCode {
        let store: any HealthStoreEngine
        do throws(StoreLocation.Failure) {
            store = try StoreLocation.open(store: location, mustExist: false)
        } catch {
            console.error(error.message)
            return error.code
        }
        let writer = StoreWriter(
            sink: HealthStoreSink(store: store),
            settings: TraceReplay.writerSettings)
        let engine = TraceReplayEngine(
            settings: .init(
                source: Health.Source(identifier: "wearhouse", version: WearhouseCLI.version),
                subject: subject))
        let bar = console.isTerminal ? ProgressBar(console: console) : nil
        let clock = ContinuousClock()
        let started = clock.now
        let counters: TraceReplayEngine.Counters
        var failure: (any Error)?
        do {
            counters = try await writer.whileRunning {
                try await TraceReplay.run(
                    &source, engine: engine, writer: writer, speed: speed, progress: bar.map { bar in { bar.show($0) } }
                )
            }
        } catch {
            failure = error
            counters = TraceReplayEngine.Counters()
        }
        bar?.end()
        let elapsed = clock.now - started
        for issue in issues() { console.err("warning: \(issue)\n") }
        let written = await writer.counters
        let rejections = await writer.firstRejections
        if let failure {
            console.error("\(failure) (the replay stopped there; \(storedBefore(written)))")
            explain(rejections, of: written.rejected, console: console)
            return .dataError
        }
        let summary = ReplaySummary(name: name, counters: counters, writer: written, elapsed: elapsed)
        console.out(json ? summary.json : summary.text)
        explain(rejections, of: written.rejected, console: console)
        return written.rejected > 0 ? .dataError : .success
    }

    /// What a replay that stopped at a bad line left in the store, in words.
    static func storedBefore(_ written: StoreWriter.Counters) -> String {
        if written.inserted > 0 { return "the \(written.inserted) new samples before it were stored" }
        if written.duplicates > 0 {
            return "nothing new was stored: the \(written.duplicates) samples before it were in the store already"
        }
        return "nothing was stored"
    }

    /// Why the store refused samples: the count and the first few, each with its type, start and reason.
    static func explain(_ rejections: [String], of count: Int, console: Console) {
        guard count > 0 else { return }
        let shown = rejections.isEmpty ? "" : ", the first \(rejections.count) of them:"
        console.error(
            "the store rejected \(count) samples or series as invalid\(shown)"
                + rejections.map { "\n  \($0)" }.joined())
    }
}

/// What a replay did, for people or as JSON.
struct ReplaySummary {
    let name: String
    let counters: TraceReplayEngine.Counters
    let writer: StoreWriter.Counters
    let elapsed: Duration

    var seconds: Double { Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18 }

    var text: String {
        let rate = seconds > 0 ? Int(Double(counters.notifications + counters.indications) / seconds) : 0
        var lines = [
            "Replayed \(name): \(counters.notifications) notifications, \(counters.indications) indications, "
                + "\(counters.reads) reads, \(counters.connectionEvents) connection events, \(counters.sensors) "
                + "sensor(s) in \(String(format: "%.2f", seconds)) s (\(rate) notifications/s)"
        ]
        let types = counters.samplesByType.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }
        lines.append(
            "Samples built: \(counters.samples)" + (types.isEmpty ? "" : " (" + types.joined(separator: ", ") + ")"))
        lines.append(
            "Stored: \(writer.inserted) new, \(writer.duplicates) duplicates skipped, \(writer.conflicts) conflicts, "
                + "\(writer.rejected) rejected")
        lines.append(
            "Malformed values: \(counters.malformed); not measurements (ignored): \(counters.ignored); "
                + "out of contact: \(counters.outOfContact)"
                + (counters.unusable > 0
                    ? "; health-device measurements with nothing to store: \(counters.unusable)" : "")
                + (counters.beatsLeftOut > 0
                    ? "; RR intervals left out of heartbeat series (implausible, or overlapping after the beat "
                        + "clock restarted): \(counters.beatsLeftOut)" : ""))
        return lines.joined(separator: "\n") + "\n"
    }

    var json: String {
        let object: [String: Any] = [
            "trace": name, "notifications": counters.notifications, "indications": counters.indications,
            "reads": counters.reads, "connectionEvents": counters.connectionEvents, "sensors": counters.sensors,
            "samples": counters.samplesByType, "inserted": writer.inserted, "duplicates": writer.duplicates,
            "conflicts": writer.conflicts, "rejected": writer.rejected, "malformed": counters.malformed,
            "ignored": counters.ignored, "unusable": counters.unusable, "beatsLeftOut": counters.beatsLeftOut,
            "seconds": seconds,
        ]
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data()
        return String(decoding: data, as: UTF8.self) + "\n"
    }
}

/// `[#########           ]  45%` on stderr, redrawn in place.
final class ProgressBar: Sendable {
    let console: Console

    init(console: Console) {
        self.console = console
    }

    func show(_ fraction: Double) {
        let clamped = min(max(fraction, 0), 1)
        let filled = Int(clamped * 40)
        let bar = String(repeating: "#", count: filled) + String(repeating: " ", count: 40 - filled)
        console.err("\r[\(bar)] \(String(format: "%3d", Int(clamped * 100)))%")
    }

    func end() {
        console.err("\r" + String(repeating: " ", count: 48) + "\r")
    }
}
