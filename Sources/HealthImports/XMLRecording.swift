import Foundation
import Support

/// Elements of a document recorded into a temporary file and read back later by an ``XMLPullReader`` with the
/// same events, lines and attributes (``replay()``): an Apple Health export's correlations and workouts, which
/// are saved after its samples, kept until then on disk rather than in memory, so that memory stays the same
/// whatever their number.
///
/// The file is made in the temporary folder (`TMPDIR`, else `/tmp`) with mode 0600 and unlinked at once, so it
/// leaves nothing behind however the process ends. Events are written in frames of about 64 KiB (a length, then
/// the events); a frame read back is a piece of the replaying reader, and whatever in it does not decode (the
/// file changed under the process) is an error naming the file, never a trap.
final class XMLRecording {
    private let descriptor: Int32
    private let path: String
    /// The events of the frame not yet written.
    private var frame: [UInt8] = []
    private var replaying = false
    /// Elements recorded (each with what is inside it).
    private(set) var elements = 0

    static let frameBytes = 65_536
    /// The largest frame read back: one event may pass ``frameBytes`` (64 attributes of 64 KiB each, a name of
    /// libxml2's longest), never this.
    static let maximumFrameBytes = 16 << 20

    init() throws(XMLReadError) {
        let folder = FileManager.default.temporaryDirectory.path
        var template = Array((folder + "/wearhouse-import-XXXXXX").utf8CString)
        let descriptor = template.withUnsafeMutableBufferPointer { buffer -> Int32 in
            guard let base = buffer.baseAddress else { return -1 }
            return mkstemp(base)
        }
        guard descriptor >= 0 else {
            throw XMLReadError(
                line: 0, message: "cannot make a temporary file in \(folder): \(String(cString: strerror(errno)))",
                isRead: true)
        }
        path = template.withUnsafeBufferPointer { buffer in
            buffer.baseAddress.map { String(cString: $0) } ?? folder
        }
        unlink(path)
        self.descriptor = descriptor
        frame.reserveCapacity(Self.frameBytes + 4_096)
    }

    deinit { close(descriptor) }

    /// Records the element `reader` just started at `depth` and everything inside it, up to its end (which
    /// `reader` has read then). An element inside whose attributes pass the reader's limits is refused here,
    /// whether it would be asked for later or not.
    func record(_ reader: XMLPullReader, startedAt depth: Int) throws(XMLReadError) {
        guard !replaying else { return }
        elements += 1
        try append(start: reader, depth: depth)
        while let event = try reader.next() {
            switch event {
            case .start(_, let at):
                try append(start: reader, depth: at)
            case .end(let name, let at):
                append(kind: 2, name: name, depth: at, line: reader.line)
            }
            try flush(whole: false)
            if case .end(_, depth) = event { return }
        }
    }

    private func append(start reader: XMLPullReader, depth: Int) throws(XMLReadError) {
        guard case .start(let name, _) = reader.currentEvent else { return }
        let attributes = try reader.elementAttributes()
        append(kind: 1, name: name, depth: depth, line: reader.line)
        appendNumber(attributes.count)
        attributes.bytes.storage.withUnsafeBufferPointer { storage in
            for entry in attributes.bytes.entries[attributes.entries] {
                appendBytes(UnsafeBufferPointer(rebasing: storage[entry.name]))
                appendBytes(UnsafeBufferPointer(rebasing: storage[entry.value]))
            }
        }
    }

    private func append(kind: UInt8, name: String, depth: Int, line: Int) {
        frame.append(kind)
        appendNumber(depth)
        appendNumber(line)
        var name = name
        name.withUTF8 { appendBytes($0) }
    }

    /// A number as 8 bytes, little-endian.
    private func appendNumber(_ number: Int) {
        withUnsafeBytes(of: Int64(number).littleEndian) { frame.append(contentsOf: $0) }
    }

    private func appendBytes(_ bytes: UnsafeBufferPointer<UInt8>) {
        appendNumber(bytes.count)
        frame.append(contentsOf: bytes)
    }

    /// Writes the frame when it is full (or, `whole`, whatever it holds).
    private func flush(whole: Bool) throws(XMLReadError) {
        guard frame.count >= (whole ? 1 : Self.frameBytes) else { return }
        var length = [UInt8]()
        withUnsafeBytes(of: Int64(frame.count).littleEndian) { length.append(contentsOf: $0) }
        try write(length)
        try write(frame)
        frame.removeAll(keepingCapacity: true)
    }

    private func write(_ bytes: [UInt8]) throws(XMLReadError) {
        var written = 0
        while written < bytes.count {
            let count = bytes.withUnsafeBytes { raw in
                Foundation.write(descriptor, raw.baseAddress.map { $0 + written }, raw.count - written)
            }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else {
                throw XMLReadError(
                    line: 0,
                    message: "cannot write the temporary file \(path): \(String(cString: strerror(errno)))",
                    isRead: true)
            }
            written += count
        }
    }

    /// A reader of everything recorded, from the first element on; nothing more is recorded after it.
    func replay() throws(XMLReadError) -> XMLPullReader {
        try flush(whole: true)
        replaying = true
        guard lseek(descriptor, 0, SEEK_SET) == 0 else {
            throw XMLReadError(
                line: 0, message: "cannot read the temporary file \(path): \(String(cString: strerror(errno)))",
                isRead: true)
        }
        return XMLPullReader(replaying: Replay(recording: self))
    }

    /// The recording's frames read back as pieces, one at a time.
    final class Replay {
        private let recording: XMLRecording
        /// Bytes read from the file so far.
        private var offset: Int64 = 0

        init(recording: XMLRecording) { self.recording = recording }

        private func damaged(_ what: String) -> XMLReadError {
            XMLReadError(
                line: 0, message: "the temporary file \(recording.path) cannot be read back (\(what))", isRead: true)
        }

        /// Reads exactly `count` bytes; `nil` at the end of the file before the first.
        private func read(_ count: Int) throws(XMLReadError) -> [UInt8]? {
            var bytes = [UInt8](repeating: 0, count: count)
            var done = 0
            while done < count {
                let got = bytes.withUnsafeMutableBytes { raw in
                    Foundation.read(recording.descriptor, raw.baseAddress.map { $0 + done }, count - done)
                }
                if got < 0, errno == EINTR { continue }
                guard got >= 0 else { throw damaged(String(cString: strerror(errno))) }
                if got == 0 {
                    if done == 0 { return nil }
                    throw damaged("it ends inside a frame")
                }
                done += got
            }
            offset += Int64(count)
            return bytes
        }

        /// The next frame's events, or `nil` after the last.
        func next() throws(XMLReadError) -> XMLPullReader.Piece? {
            guard let head = try read(8) else { return nil }
            var cursor = ByteCursor(head)
            guard let raw = cursor.readUInt64(.little), raw > 0, raw <= UInt64(XMLRecording.maximumFrameBytes)
            else { throw damaged("a frame's length is out of range") }
            guard let bytes = try read(Int(raw)) else { throw damaged("it ends inside a frame") }
            return try decode(bytes)
        }

        private func decode(_ bytes: [UInt8]) throws(XMLReadError) -> XMLPullReader.Piece {
            var piece = XMLPullReader.Piece()
            piece.bytesRead = offset
            var cursor = ByteCursor(bytes)
            // A count or a length is at most a frame; a line, at most libxml2's (a C int).
            func number(upTo maximum: Int = XMLRecording.maximumFrameBytes) throws(XMLReadError) -> Int {
                guard let raw = cursor.readUInt64(.little), raw <= UInt64(maximum) else {
                    throw damaged("a number is out of range")
                }
                return Int(raw)
            }
            func text() throws(XMLReadError) -> ArraySlice<UInt8> {
                guard let text = cursor.take(try number()) else { throw damaged("a text passes its frame") }
                return text
            }
            while !cursor.isAtEnd {
                guard let kind = cursor.readUInt8(), kind == 1 || kind == 2 else { throw damaged("an unknown event") }
                let depth = try number()
                let line = try number(upTo: Int(Int32.max))
                let name = String(decoding: try text(), as: UTF8.self)
                guard kind == 1 else {
                    piece.events.append(XMLPullReader.Queued(event: .end(name, depth: depth), line: line))
                    continue
                }
                let first = piece.attributes.count
                let count = try number()
                for _ in 0..<count {
                    let attributeName = try text()
                    let value = try text()
                    attributeName.withUnsafeBufferPointer { name in
                        value.withUnsafeBufferPointer { value in piece.attributes.append(name: name, value: value) }
                    }
                }
                piece.events.append(
                    XMLPullReader.Queued(
                        event: .start(name, depth: depth), line: line,
                        attributes: first..<piece.attributes.count))
            }
            return piece
        }
    }
}

@available(*, unavailable)
extension XMLRecording: Sendable {}
