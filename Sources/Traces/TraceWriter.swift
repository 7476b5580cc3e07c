internal import Glibc

/// Appends records to a trace file: buffered, flushed at least once a second (on ``append(_:)`` and
/// ``flushIfDue()``), on ``flush()`` and on ``close()``, which also fsyncs.
///
/// A new file starts with the header; an existing trace gets a session line instead, after a newline if its last
/// line was torn by a crash, so appending never damages what is there. A file that is not a trace is refused.
///
/// ```swift
/// let writer = try TraceWriter(path: "run.trace", header: TraceHeader(recorder: "wearhouse 0.1.0"))
/// try writer.append(.value(value))
/// try writer.close()
/// ```
///
/// Not thread-safe: one owner serializes access (the gateway's recorder keeps it behind a mutex).
public final class TraceWriter {
    public let path: String
    /// Flush when this many bytes are waiting.
    public static let bufferLimit = 1 << 16
    /// Flush when the oldest waiting byte is this old.
    public static let flushInterval = Duration.seconds(1)

    private var descriptor: Int32
    private var buffer: [UInt8] = []
    private var lastFlush: ContinuousClock.Instant
    private let clock = ContinuousClock()
    /// Records appended (the header or session line included).
    public private(set) var records = 0

    /// Opens (or creates, mode 0600: a trace is health data) `path` for appending and writes the header, or a
    /// session line when it already holds a trace.
    ///
    /// - Throws: ``TraceError`` when the file cannot be opened or written, or exists and is not a trace.
    public init(path: String, header: TraceHeader) throws(TraceError) {
        self.path = path
        lastFlush = clock.now
        descriptor = open(path, O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw TraceError(file: path, reason: "cannot open for writing: \(Self.errorText())")
        }
        do throws(TraceError) {
            let size = lseek(descriptor, 0, SEEK_END)
            if size > 0 {
                try checkExistingTrace(size: Int(size))
                try append(.session(header))
            } else {
                try append(.header(header))
            }
            try flush()
        } catch {
            Glibc.close(descriptor)
            descriptor = -1
            throw error
        }
    }

    deinit {
        if descriptor >= 0 {
            try? flush()
            Glibc.close(descriptor)
        }
    }

    /// Queues one record; flushes when the buffer is full or a second has passed since the last flush.
    public func append(_ record: TraceRecord) throws(TraceError) {
        buffer.append(contentsOf: TraceLineCodec.encode(record))
        records += 1
        if buffer.count >= Self.bufferLimit { try flush() } else { try flushIfDue() }
    }

    /// Flushes when a second has passed since the last flush (call it from a ticker during quiet periods).
    public func flushIfDue() throws(TraceError) {
        guard !buffer.isEmpty, clock.now - lastFlush >= Self.flushInterval else { return }
        try flush()
    }

    /// Writes everything waiting (to the kernel; ``close()`` also fsyncs).
    public func flush() throws(TraceError) {
        lastFlush = clock.now
        guard !buffer.isEmpty else { return }
        guard descriptor >= 0 else { throw TraceError(file: path, reason: "written after close") }
        try writeAll(buffer)
        buffer.removeAll(keepingCapacity: true)
    }

    /// Flushes, fsyncs and closes. Idempotent.
    public func close() throws(TraceError) {
        guard descriptor >= 0 else { return }
        defer {
            Glibc.close(descriptor)
            descriptor = -1
        }
        try flush()
        guard fsync(descriptor) == 0 else { throw TraceError(file: path, reason: "fsync failed: \(Self.errorText())") }
    }

    private func writeAll(_ bytes: [UInt8]) throws(TraceError) {
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { raw in
                write(descriptor, raw.baseAddress.map { $0 + offset }, raw.count - offset)
            }
            if written < 0 {
                if errno == EINTR { continue }
                throw TraceError(file: path, reason: "write failed: \(Self.errorText())")
            }
            offset += written
        }
    }

    /// Refuses files that are not traces; ends a torn last line so the session starts on a line of its own.
    private func checkExistingTrace(size: Int) throws(TraceError) {
        var first = [UInt8](repeating: 0, count: min(size, 4096))
        let got = first.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, $0.count, 0) }
        guard got > 0 else { throw TraceError(file: path, reason: "cannot read: \(Self.errorText())") }
        let line = first.prefix(got).prefix { $0 != UInt8(ascii: "\n") }
        guard case .record(.header)? = try? TraceLineCodec.decode(Array(line)) else {
            throw TraceError(file: path, line: 1, reason: "exists and is not a wearhouse trace; not appending to it")
        }
        var last: UInt8 = 0
        guard pread(descriptor, &last, 1, off_t(size - 1)) == 1 else {
            throw TraceError(file: path, reason: "cannot read: \(Self.errorText())")
        }
        if last != UInt8(ascii: "\n") { buffer.append(UInt8(ascii: "\n")) }
    }

    private static func errorText() -> String { String(cString: strerror(errno)) }
}

@available(*, unavailable)
extension TraceWriter: Sendable {}
