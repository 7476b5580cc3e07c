internal import GATT
internal import Health
public import Support
public import Traces

/// Where replay reads records from: a ``Traces/TraceReader`` (a file) or an array (an imported capture).
public protocol TraceRecordSource {
    /// The next record, or `nil` at the end.
    mutating func nextRecord() throws -> TraceRecord?
    /// How far through the source (0...1), for a progress bar.
    var fractionDone: Double { get }
    /// The header, when the source read it already (a file's first line); `nil` when it comes as a record.
    var headerAlreadyRead: TraceHeader? { get }
}

extension TraceReader: TraceRecordSource {
    public func nextRecord() throws -> TraceRecord? { try next() }
    public var fractionDone: Double { fileSize > 0 ? Double(bytesRead) / Double(fileSize) : 0 }
    public var headerAlreadyRead: TraceHeader? { header }
}

/// Records held in memory.
public struct TraceRecordArray: TraceRecordSource {
    private let records: [TraceRecord]
    private var position = 0

    public init(_ records: [TraceRecord]) {
        self.records = records
    }

    public mutating func nextRecord() throws -> TraceRecord? {
        guard position < records.count else { return nil }
        defer { position += 1 }
        return records[position]
    }

    public var fractionDone: Double { records.isEmpty ? 1 : Double(position) / Double(records.count) }
    public var headerAlreadyRead: TraceHeader? { nil }
}

/// How fast a replay goes.
public enum ReplaySpeed: Hashable, Sendable {
    /// As fast as the store takes it.
    case max
    /// In trace time divided by the factor (1 = as recorded).
    case factor(Double)

    /// Parses `1`, `10`, `0.5`, `max`.
    public init?(_ text: String) {
        if text == "max" {
            self = .max
        } else if let factor = Double(text), factor > 0, factor.isFinite {
            self = .factor(factor)
        } else {
            return nil
        }
    }
}

/// Replays a trace through the live ingest path into a ``StoreWriter`` (`wearhouse replay`, `wearhouse import`).
///
/// ```swift
/// let writer = StoreWriter(sink: HealthStoreSink(store: store))
/// var reader = try TraceReader(path: "run.trace")
/// let counters = try await writer.whileRunning {
///     try await TraceReplay.run(&reader, engine: TraceReplayEngine(settings: settings), writer: writer)
/// }
/// ```
public enum TraceReplay {
    /// Samples handed to the writer at a time.
    static let submitSize = 4_096

    /// The writer settings of `wearhouse replay`: large batches (a replay is not waiting for anyone, and each
    /// commit costs an fsync), flushed within 100 ms when the trace is paced.
    public static let writerSettings = StoreWriter.Settings(
        batchSize: 16_384, flushInterval: .milliseconds(100), capacity: 200_000)

    /// Reads every record of `source`, builds its samples and submits them to `writer`, pacing by the records'
    /// monotonic times (on `clock`) unless `speed` is ``ReplaySpeed/max``; waits until the writer has written them
    /// (the writer's ``StoreWriter/run()`` must be running).
    ///
    /// - Parameter progress: called with the fraction done, at most about ten times a second.
    /// - Returns: the engine's counters.
    /// - Throws: what the source throws (a bad trace line).
    public static func run<Source: TraceRecordSource>(
        _ source: inout Source, engine: TraceReplayEngine, writer: StoreWriter, speed: ReplaySpeed = .max,
        clock: any Support.Clock = SystemClock(), progress: ((Double) -> Void)? = nil
    ) async throws -> TraceReplayEngine.Counters {
        var engine = engine
        var pending = SampleBuilder.Output()
        let started = clock.now
        var lastProgress = started
        var firstTime: Duration?
        var records = 0
        if let header = source.headerAlreadyRead { engine.handle(.header(header), into: &pending) }
        func submit() async {
            guard !pending.isEmpty else { return }
            engine.count(pending)
            let batch = pending
            pending = SampleBuilder.Output()
            await writer.submit(batch)
        }
        while true {
            let next: TraceRecord?
            do {
                next = try source.nextRecord()
            } catch {
                // A bad line ends the replay, but what came before it is stored: the open samples are finished.
                engine.finish(into: &pending)
                await submit()
                await writer.flush()
                throw error
            }
            guard let record = next else { break }
            records += 1
            if case .factor(let factor) = speed, let at = record.time {
                let first = firstTime ?? at
                firstTime = first
                let due = started + (at - first) / factor
                if clock.now < due {
                    await submit()
                    try? await clock.sleep(until: due)
                }
            }
            engine.handle(record, into: &pending)
            if pending.count >= submitSize { await submit() }
            if let progress, records % 1024 == 0, clock.now - lastProgress >= .milliseconds(100) {
                lastProgress = clock.now
                progress(source.fractionDone)
            }
        }
        engine.finish(into: &pending)
        await submit()
        await writer.flush()
        progress?(1)
        return engine.totals
    }
}

extension TraceRecord {
    /// The record's monotonic time, when it has one.
    var time: Duration? {
        switch self {
        case .header, .session: nil
        case .sensor(let sensor): sensor.at?.monotonic
        case .connection(let connection): connection.at.monotonic
        case .value(let value): value.at.monotonic
        }
    }
}
