import Foundation
import Health

/// The lines of a file descriptor, read ``chunkBytes`` at a time: what it holds is one read plus the longest line,
/// whatever the file's size. A line longer than `maximumLineBytes` is refused before it is read whole.
struct LineReader {
    static let chunkBytes = 1 << 20

    let descriptor: Int32
    let maximumLineBytes: Int
    private var buffer: [UInt8] = []
    /// Where the next line starts in `buffer`, and where the search for its newline goes on.
    private var start = 0
    private var searched = 0
    private var atEnd = false
    /// The number of the line ``next()`` returned last (1 for the first).
    private(set) var lineNumber = 0
    /// Bytes read from the descriptor so far.
    private(set) var bytesRead: Int64 = 0

    init(descriptor: Int32, maximumLineBytes: Int) {
        self.descriptor = descriptor
        self.maximumLineBytes = maximumLineBytes
    }

    /// The next line without its newline, or `nil` at the end. The slice is valid until the next call.
    mutating func next() throws(ImportSamplesCommand.LineError) -> ArraySlice<UInt8>? {
        while true {
            let found = buffer.withUnsafeBufferPointer { bytes -> Int? in
                guard searched < bytes.count, let base = bytes.baseAddress else { return nil }
                guard let hit = memchr(base + searched, 0x0A, bytes.count - searched) else { return nil }
                return base.distance(to: hit.assumingMemoryBound(to: UInt8.self))
            }
            if let newline = found {
                return take(upTo: newline, skipping: 1)
            }
            searched = buffer.count
            if atEnd {
                guard start < buffer.count else { return nil }
                return take(upTo: buffer.count, skipping: 0)
            }
            guard buffer.count - start <= maximumLineBytes else {
                throw ImportSamplesCommand.LineError(
                    line: lineNumber + 1, message: "the line is longer than \(maximumLineBytes) bytes")
            }
            if start > 0 {
                buffer.removeSubrange(0..<start)
                searched -= start
                start = 0
            }
            try read()
        }
    }

    private mutating func take(upTo end: Int, skipping separator: Int) -> ArraySlice<UInt8> {
        lineNumber += 1
        let line = buffer[start..<end]
        start = end + separator
        searched = start
        return line
    }

    private mutating func read() throws(ImportSamplesCommand.LineError) {
        let old = buffer.count
        buffer.append(contentsOf: repeatElement(0, count: Self.chunkBytes))
        while true {
            let count = buffer.withUnsafeMutableBufferPointer { bytes in
                Foundation.read(descriptor, bytes.baseAddress! + old, Self.chunkBytes)
            }
            if count < 0, errno == EINTR { continue }
            guard count >= 0 else {
                let reason = String(cString: strerror(errno))
                buffer.removeSubrange(old...)
                throw ImportSamplesCommand.LineError(
                    line: lineNumber + 1, message: "cannot read: \(reason)", isRead: true)
            }
            buffer.removeSubrange((old + count)...)
            bytesRead += Int64(count)
            if count == 0 { atEnd = true }
            return
        }
    }
}

/// The batches of one import, read from a ``LineReader`` as the store asks for them: at most ``batchLines``
/// samples or ``batchBytes`` of their lines each.
///
/// The store's write transaction calls ``next()`` on its own executor, one call after the other
/// (``HealthStoreEngine/saveAll(as:_:)``), and the command reads ``line(ofBatchIndex:)`` only after that call has
/// returned: one user at a time, which the compiler cannot see through the store's executor.
final class ImportReader: @unchecked Sendable {
    static let batchLines = 10_000
    static let batchBytes = 8 << 20
    /// Workouts are held until the samples are saved (their samples may come anywhere in the file): at most this
    /// many in one file.
    static let maximumObjects = 100_000

    private var lines: LineReader
    private let defaultSource: String
    private let size: Int64
    private let progress: (@Sendable (Double) -> Void)?
    /// The line numbers of the last batch's quantity samples and heartbeat series, in the batch's order.
    private var quantityLines: [Int] = []
    private var seriesLines: [Int] = []
    /// And of its samples that keep their own ids (``SampleBatch/identified``) and its correlations.
    private var identifiedLines: [Int] = []
    private var correlationLines: [Int] = []
    /// And of its workouts (which the store counts after everything else of the batch).
    private var workoutLines: [Int] = []
    private var shownPercent = -1
    /// The fast path for flat lines, and the stream of the last one it read.
    private var flat = FlatLineParser()
    /// The workouts read so far (each goes in with its batch, routes and all, and is not held).
    private(set) var workoutCount = 0
    /// The ids of the samples each workout lists, associated once every batch is in (a workout's samples may be
    /// anywhere in the file).
    private(set) var associations: [(workout: UUID, samples: [UUID])] = []

    init(lines: LineReader, defaultSource: String, size: Int64, progress: (@Sendable (Double) -> Void)?) {
        self.lines = lines
        self.defaultSource = defaultSource
        self.size = size
        self.progress = progress
    }

    /// The next batch, or `nil` at the end of the file. A bad line throws ``ImportSamplesCommand/LineError``
    /// with its number.
    func next() throws(ImportSamplesCommand.LineError) -> SampleBatch? {
        quantityLines.removeAll(keepingCapacity: true)
        seriesLines.removeAll(keepingCapacity: true)
        identifiedLines.removeAll(keepingCapacity: true)
        correlationLines.removeAll(keepingCapacity: true)
        workoutLines.removeAll(keepingCapacity: true)
        var batch = SampleBatch()
        var workouts: [SampleBatch.WorkoutEntry] = []
        var series: [HeartbeatSeriesSample] = []
        var identified: [QuantitySample] = []
        var correlations: [Correlation] = []
        // The fast path's samples, a stream at a time (``FlatLineParser``): added to the batch when the stream
        // changes, before a sample of the general reader, and at the end, so the batch keeps the file's order.
        var run: QuantitySeries?
        // The run's stream, kept apart: comparing `run` with `nil` copied it on every line.
        var hasRun = false
        var runGeneration = 0
        var runOffset: Int32 = 0
        var parser = flat
        defer { flat = parser }
        var bytes = 0
        while quantityLines.count + seriesLines.count + identifiedLines.count + correlationLines.count
            < Self.batchLines,
            bytes < Self.batchBytes,
            let line = try lines.next()
        {
            if let sample = line.withUnsafeBufferPointer({ parser.sample($0, defaultSource: defaultSource) }) {
                bytes += line.count
                if !hasRun || runGeneration != parser.generation || runOffset != sample.offset,
                    let type = parser.type, let source = parser.source
                {
                    if let stream = run.take() { batch.append(stream) }
                    run = QuantitySeries(type: type, startOffsetSeconds: sample.offset, source: source)
                    hasRun = true
                    runGeneration = parser.generation
                    runOffset = sample.offset
                }
                run?.append(start: sample.start, end: sample.end, value: sample.value)
                quantityLines.append(lines.lineNumber)
                continue
            }
            guard let text = Self.trimmed(line) else { continue }
            bytes += line.count
            do {
                switch try ImportSamplesCommand.sample(from: text, defaultSource: defaultSource) {
                case .quantity(let sample, keepsID: false):
                    if let stream = run.take() {
                        batch.append(stream)
                        hasRun = false
                    }
                    batch.append(sample)
                    quantityLines.append(lines.lineNumber)
                case .quantity(let sample, keepsID: true):
                    identified.append(sample)
                    identifiedLines.append(lines.lineNumber)
                case .series(let one):
                    series.append(one)
                    seriesLines.append(lines.lineNumber)
                case .correlation(let correlation):
                    correlations.append(correlation)
                    correlationLines.append(lines.lineNumber)
                case .workout(let workout, let ids):
                    try countOneMoreWorkout()
                    workouts.append(SampleBatch.WorkoutEntry(workout, sampleIDs: []))
                    workoutLines.append(lines.lineNumber)
                    if !ids.isEmpty { associations.append((workout.id, ids)) }
                }
            } catch {
                throw ImportSamplesCommand.LineError(line: lines.lineNumber, message: error.message)
            }
        }
        if let progress, size > 0 {
            let percent = Int(min(lines.bytesRead * 100 / size, 100))
            if percent != shownPercent {
                shownPercent = percent
                progress(Double(percent) / 100)
            }
        }
        if let stream = run.take() { batch.append(stream) }
        batch.heartbeats = series
        batch.identified = identified
        batch.correlations = correlations
        batch.workouts = workouts
        return batch.isEmpty ? nil : batch
    }

    private func countOneMoreWorkout() throws(ImportSamplesCommand.LineError) {
        workoutCount += 1
        guard workoutCount <= Self.maximumObjects else {
            throw ImportSamplesCommand.LineError(
                line: lines.lineNumber, message: "more than \(Self.maximumObjects) workouts in one file; split it")
        }
    }

    /// The line number of the sample at `index` of the last batch (``SampleBatch/samples``, its heartbeat series,
    /// its ``SampleBatch/identified`` samples, its correlations, then its workouts), for the store's
    /// ``InvalidSampleError``.
    func line(ofBatchIndex index: Int) -> Int {
        var position = index
        for numbers in [quantityLines, seriesLines, identifiedLines, correlationLines, workoutLines] {
            if numbers.indices.contains(position) { return numbers[position] }
            position -= numbers.count
        }
        return lines.lineNumber
    }

    /// The line without spaces, tabs and carriage returns around it; `nil` when that leaves nothing or a comment.
    static func trimmed(_ line: ArraySlice<UInt8>) -> String? {
        func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0D }
        guard let first = line.firstIndex(where: { !isSpace($0) }), line[first] != UInt8(ascii: "#"),
            let last = line.lastIndex(where: { !isSpace($0) })
        else { return nil }
        return String(decoding: line[first...last], as: UTF8.self)
    }
}
