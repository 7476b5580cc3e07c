internal import Glibc
internal import Support

/// Reads a trace file line by line, in constant memory, as it is being appended to or after a crash.
///
/// ```swift
/// let reader = try TraceReader(path: "run.trace")
/// while let record = try reader.next() { ... }
/// for issue in reader.issues { print(issue) }     // a torn last line, unknown kinds
/// ```
///
/// The first line must be the header. A line that is not valid is an error naming the file and line, except a
/// torn line (the last one, or one followed by a new session after a crash), which is reported in ``issues``
/// and skipped. Lines of kinds this version does not know are skipped and reported too.
public final class TraceReader {
    public let path: String
    /// The header (the first line).
    public private(set) var header: TraceHeader
    /// What was skipped so far.
    public private(set) var issues: [TraceIssue] = []
    /// The number of the last line read (1-based).
    public private(set) var lineNumber = 0
    /// Bytes consumed so far, and the file's size when it was opened (for progress).
    public private(set) var bytesRead = 0
    public let fileSize: Int

    private var descriptor: Int32
    /// What was read and not consumed yet: bytes `start..<count` of `storage`. Lines are decoded where they lie.
    private var storage = UnsafeMutableBufferPointer<UInt8>(start: nil, count: 0)
    private var count = 0
    private var start = 0
    private var atEnd = false
    /// Decodes value lines without the general JSON parser (which handles every line it declines).
    private var fast = ValueLineDecoder()
    /// A record decoded while looking past a bad line, handed out next.
    private var pending: TraceRecord?

    static let chunk = 1 << 20

    /// Opens `path` and reads its header.
    ///
    /// - Throws: ``TraceError`` when the file cannot be opened or does not start with a trace header.
    public init(path: String) throws(TraceError) {
        self.path = path
        descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw TraceError(file: path, reason: "cannot open: \(String(cString: strerror(errno)))")
        }
        var info = stat()
        fileSize = fstat(descriptor, &info) == 0 ? Int(info.st_size) : 0
        header = TraceHeader()
        do throws(TraceError) {
            guard let first = try nextLine() else {
                throw TraceError(file: path, line: 1, reason: "empty file: not a wearhouse trace")
            }
            let decoded: TraceLineCodec.Decoded
            do throws(TraceSyntaxError) {
                decoded = try TraceLineCodec.decode(first)
            } catch {
                throw TraceError(file: path, line: lineNumber, reason: "not a wearhouse trace header: \(error.reason)")
            }
            guard case .record(.header(let header)) = decoded else {
                throw TraceError(
                    file: path, line: lineNumber,
                    reason: "not a wearhouse trace: the first line must be {\"wearhouse-trace\":1,...}")
            }
            self.header = header
        } catch {
            Glibc.close(descriptor)
            descriptor = -1
            throw error
        }
    }

    deinit {
        if descriptor >= 0 { Glibc.close(descriptor) }
        storage.deallocate()
    }

    /// The next record, or `nil` at the end of the file.
    ///
    /// - Throws: ``TraceError`` for a line that is not a valid record (other than a torn one), or a read error.
    public func next() throws(TraceError) -> TraceRecord? {
        if let pending {
            self.pending = nil
            return pending
        }
        while let line = try nextLine() {
            if let value = fast.decode(line) { return .value(value) }
            let number = lineNumber
            let result: Result<TraceLineCodec.Decoded, TraceSyntaxError> = Result {
                () throws(TraceSyntaxError) in try TraceLineCodec.decode(line)
            }
            switch result {
            case .success(.record(.header)):
                throw TraceError(file: path, line: number, reason: "a second header (use a session line)")
            case .success(.record(let record)):
                return record
            case .success(.unknownKind(let kind)):
                issues.append(
                    TraceIssue(
                        file: path, line: number, reason: "skipped a line of unknown kind \(ErrorEcho.echo(kind))"))
            case .failure(let error):
                let reason = error.offset > 0 ? "column \(error.offset + 1): \(error.reason)" : error.reason
                // A torn line is the last one, or the one a crashed recorder left before a new session began.
                guard let following = try nextLine() else {
                    issues.append(TraceIssue(file: path, line: number, reason: "torn last line skipped (\(reason))"))
                    return nil
                }
                let after = try? TraceLineCodec.decode(following)
                guard case .record(.session)? = after else {
                    throw TraceError(file: path, line: number, reason: reason)
                }
                issues.append(
                    TraceIssue(file: path, line: number, reason: "torn line before a new session skipped (\(reason))"))
                if case .record(let record)? = after { return record }
            }
        }
        return nil
    }

    /// Reads every remaining record.
    public func readAll() throws(TraceError) -> [TraceRecord] {
        var records: [TraceRecord] = []
        while let record = try next() { records.append(record) }
        return records
    }

    /// The next non-blank line without its newline, or `nil` at the end.
    ///
    /// The line lies in the read buffer: it is valid until the next call.
    private func nextLine() throws(TraceError) -> UnsafeBufferPointer<UInt8>? {
        while true {
            if let base = storage.baseAddress, start < count,
                let found = memchr(base + start, Int32(UInt8(ascii: "\n")), count - start)
            {
                let newline = found.assumingMemoryBound(to: UInt8.self) - base
                let line = UnsafeBufferPointer(start: base + start, count: newline - start)
                bytesRead += newline + 1 - start
                start = newline + 1
                lineNumber += 1
                if isBlank(line) { continue }
                return line
            }
            if atEnd {
                guard let base = storage.baseAddress, start < count else { return nil }
                let line = UnsafeBufferPointer(start: base + start, count: count - start)
                bytesRead += count - start
                start = count
                lineNumber += 1
                return isBlank(line) ? nil : line
            }
            try fill()
        }
    }

    private func isBlank(_ line: UnsafeBufferPointer<UInt8>) -> Bool {
        line.allSatisfy { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") || $0 == UInt8(ascii: "\r") }
    }

    /// Moves what is left to the front of the buffer and reads up to ``chunk`` bytes after it (growing the buffer
    /// for a line longer than what it holds).
    private func fill() throws(TraceError) {
        let left = count - start
        if storage.count - left < Self.chunk {
            let larger = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: left + Self.chunk)
            if let base = storage.baseAddress, left > 0 {
                memcpy(larger.baseAddress!, base + start, left)
            }
            storage.deallocate()
            storage = larger
        } else if start > 0, let base = storage.baseAddress {
            memmove(base, base + start, left)
        }
        start = 0
        count = left
        var got = -1
        while got < 0 {
            got = read(descriptor, storage.baseAddress! + count, Self.chunk)
            if got < 0, errno != EINTR {
                throw TraceError(file: path, reason: "read failed: \(String(cString: strerror(errno)))")
            }
        }
        count += got
        if got == 0 { atEnd = true }
    }
}

@available(*, unavailable)
extension TraceReader: Sendable {}
