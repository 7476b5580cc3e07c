internal import CLibXML2
import Foundation

/// Why an XML document could not be read: the line where it went wrong and what was wrong (malformed XML, a
/// limit passed, a declared entity, or the input failing to read).
public struct XMLReadError: Error, CustomStringConvertible, Sendable {
    public var line: Int
    public var message: String
    /// The input could not be read (an I/O or archive error), as opposed to bad XML.
    public var isRead: Bool

    public init(line: Int, message: String, isRead: Bool = false) {
        self.line = line
        self.message = message
        self.isRead = isRead
    }

    public var description: String { line > 0 ? "line \(line): \(message)" : message }
}

/// A streaming XML pull reader over libxml2's SAX2 push parser, wrapped once (the only user of `CLibXML2`).
///
/// It reads from a callback (so a zip entry is parsed in place), in pieces of 64 KiB: libxml2 calls back for each
/// element start and end of a piece, which are queued (names, depths, lines and attributes, nothing of a tree) and
/// handed out one by one, so memory holds one piece's elements whatever the document's size. It keeps to
/// ``Limits``, and never touches the network or the file system on the document's behalf: `XML_PARSE_NONET`, no
/// DTD loading, no entity substitution, an external entity loader that refuses everything, and a document that
/// declares entities at all (an Apple Health export declares none) or refers to one is refused. libxml2's own
/// limits stay on (no `XML_PARSE_HUGE`: text nodes and names of at most 10 MB, nesting of at most 256).
///
/// Events come as ``Event/start(_:depth:)`` and ``Event/end(_:depth:)``, an empty element's end right after its
/// start; comments and processing instructions are skipped, and so is text unless the reader keeps it (`keepsText`:
/// then ``text()`` at an element's end is the text since the last start or end, at most
/// ``Limits/maximumAttributeBytes``). An element's line is the one its start tag ends on (its end's, for an end).
/// Not thread-safe: one owner reads it. The pieces may be parsed on another thread, ahead of the reader
/// (``readAhead(pieces:)``), or come from a recording (``XMLRecording``).
public final class XMLPullReader {
    public struct Limits: Sendable {
        /// The deepest an element may nest (the root is depth 0).
        public var maximumDepth = 16
        /// The most attributes one element may have, and the longest value, in UTF-8 bytes.
        public var maximumAttributes = 64
        public var maximumAttributeBytes = 65_536

        public init(maximumDepth: Int = 16, maximumAttributes: Int = 64, maximumAttributeBytes: Int = 65_536) {
            self.maximumDepth = maximumDepth
            self.maximumAttributes = maximumAttributes
            self.maximumAttributeBytes = maximumAttributeBytes
        }
    }

    public enum Event: Equatable, Sendable {
        case start(String, depth: Int)
        case end(String, depth: Int)
    }

    /// What the read callback gets: where to put the bytes; it returns how many it put there (0 at the end).
    public typealias Read = (UnsafeMutableRawBufferPointer) throws -> Int

    /// One queued event: an element's start (with where its attributes are in its ``Piece/attributes``) or end,
    /// or the error that stops the document there.
    struct Queued: Sendable {
        var event: Event?
        var line: Int
        var attributes: Range<Int> = 0..<0
        /// The limit an element's attributes passed, thrown when they are asked for.
        var attributeError: String?
        var error: XMLReadError?
    }

    /// The events of one piece of the document (what the parser made of up to 64 KiB of it) with their
    /// attributes' bytes, and how many bytes of the input were read by its end.
    struct Piece: Sendable {
        var events: [Queued] = []
        var attributes = AttributeBytes()
        var bytesRead: Int64 = 0
    }

    /// Where the pieces come from.
    private enum Source {
        /// The parser, on this reader's thread.
        case parser(XMLPieceParser)
        /// The parser on another thread (``readAhead(pieces:)``).
        case ahead(HandOver<Piece>)
        /// A recording read back.
        case replay(XMLRecording.Replay)
    }

    private var source: Source
    private var piece = Piece()
    private var head = 0
    /// The event ``next()`` returned last.
    private var current: Queued?
    private var lastLine = 0
    /// How many bytes of the input the pieces handed out so far were made of (for progress).
    public private(set) var bytesRead: Int64 = 0

    /// A reader of the document `read` yields; `name` is what errors call it. With `keepsText`, ``text()`` reads
    /// the text of elements that hold no others (GPX's `<time>`), and the parse keeps it for every element.
    public init(name: String, limits: Limits = Limits(), keepsText: Bool = false, read: @escaping Read)
        throws(XMLReadError)
    {
        source = .parser(try XMLPieceParser(name: name, limits: limits, keepsText: keepsText, read: read))
    }

    /// A reader of what `recording` holds.
    init(replaying replay: XMLRecording.Replay) {
        source = .replay(replay)
    }

    /// The line of the element ``next()`` returned last (where the reader is, before the first and after the
    /// last).
    public var line: Int { current?.line ?? lastLine }

    /// The event ``next()`` returned last.
    var currentEvent: Event? { current?.event }

    /// The next element start or end, or `nil` at the end of the document.
    public func next() throws(XMLReadError) -> Event? {
        while head == piece.events.count {
            guard let more = try nextPiece() else {
                current = nil
                piece = Piece()
                head = 0
                return nil
            }
            piece = more
            head = 0
            bytesRead = more.bytesRead
        }
        let queued = piece.events[head]
        head += 1
        current = queued
        lastLine = queued.line
        if let error = queued.error { throw error }
        return queued.event
    }

    private func nextPiece() throws(XMLReadError) -> Piece? {
        switch source {
        case .parser(let parser):
            if let piece = parser.next() { return piece }
            lastLine = parser.line
            return nil
        case .ahead(let pieces):
            // The parser's errors come as events: the queue itself fails with none.
            return (try? pieces.take()) ?? nil
        case .replay(let replay):
            return try replay.next()
        }
    }

    /// From now on the document is parsed by the returned ``XMLReadAhead``'s ``XMLReadAhead/run()``, on another
    /// thread, at most `pieces` pieces ahead of ``next()`` (which waits for them); `nil` when this reader does
    /// not parse (a recording) or already reads ahead.
    func readAhead(pieces: Int) -> XMLReadAhead? {
        guard case .parser(let parser) = source else { return nil }
        let handOver = HandOver<Piece>(capacity: pieces)
        source = .ahead(handOver)
        return XMLReadAhead(parser: parser, pieces: handOver)
    }

    /// The attributes of the element ``next()`` just started, by name.
    public func attributes() throws(XMLReadError) -> [String: String] {
        try elementAttributes().dictionary()
    }

    /// The attributes of the element ``next()`` just started, as bytes: each name and value copied into `list`
    /// (emptied first), in document order (namespace declarations first, as `xmlns` and `xmlns:prefix`), under the
    /// same limits as ``attributes()`` (which is this, as strings).
    public func attributes(into list: inout AttributeBytes) throws(XMLReadError) {
        list.removeAll()
        let element = try elementAttributes()
        element.bytes.storage.withUnsafeBufferPointer { bytes in
            for entry in element.bytes.entries[element.entries] {
                list.append(
                    name: UnsafeBufferPointer(rebasing: bytes[entry.name]),
                    value: UnsafeBufferPointer(rebasing: bytes[entry.value]))
            }
        }
    }

    /// The attributes of the element ``next()`` just started, in place: the bytes of its piece, not copied (none
    /// for an end).
    public func elementAttributes() throws(XMLReadError) -> ElementAttributes {
        guard let current, case .start = current.event else {
            return ElementAttributes(bytes: AttributeBytes(), entries: 0..<0)
        }
        if let message = current.attributeError { throw XMLReadError(line: current.line, message: message) }
        return ElementAttributes(bytes: piece.attributes, entries: current.attributes)
    }

    /// At the end ``next()`` just returned, the text since the last start or end (an element's whole text when it
    /// holds no other element), entities and character references resolved; empty when the reader does not keep
    /// text, or elsewhere. Text longer than the limit on an attribute's value throws.
    public func text() throws(XMLReadError) -> String {
        guard let current, case .end = current.event, !current.attributes.isEmpty else { return "" }
        if let message = current.attributeError { throw XMLReadError(line: current.line, message: message) }
        let entry = piece.attributes.entries[current.attributes.lowerBound]
        return piece.attributes.string(entry.value)
    }

    /// Skips what is inside the element ``next()`` just started at `depth` (its end included).
    public func skip(depth: Int) throws(XMLReadError) {
        while let event = try next() {
            if case .end(_, let end) = event, end == depth { return }
        }
    }

    fileprivate static func text(_ characters: UnsafePointer<xmlChar>) -> String {
        String(cString: UnsafeRawPointer(characters).assumingMemoryBound(to: CChar.self))
    }
}

@available(*, unavailable)
extension XMLPullReader: Sendable {}

/// libxml2's push parser over a document's bytes, making ``XMLPullReader/Piece``s of it, 64 KiB of the input at a
/// time; on the reader's thread or on one of its own (``XMLReadAhead``), one thread at a time.
final class XMLPieceParser {
    private let input: XMLPullReader.Read
    private let parse: Parse
    private let context: xmlParserCtxtPtr
    private var buffer = [UInt8](repeating: 0, count: 65_536)
    private var finished = false
    private var bytesRead: Int64 = 0

    /// The parser's state, passed to libxml2's callbacks as their context.
    final class Parse {
        let limits: XMLPullReader.Limits
        var context: xmlParserCtxtPtr?
        var queue: [XMLPullReader.Queued] = []
        /// The attributes of the queued starts: names and values in ``AttributeBytes/storage``.
        var attributes = AttributeBytes()
        var depth = -1
        var sawRoot = false
        var stopped = false
        var firstError: String?
        var firstErrorLine = 0
        /// Element names by the pointer libxml2 interns them at (the same name, the same pointer, in one parse).
        var names: [UnsafeRawPointer: String] = [:]
        /// Whether the text between tags is kept (and handed out with the next end), and that text so far; the
        /// limit it passed, if it did.
        let keepsText: Bool
        var text: [UInt8] = []
        var textError: String?

        init(limits: XMLPullReader.Limits, keepsText: Bool) {
            self.limits = limits
            self.keepsText = keepsText
        }

        /// Text between tags, kept up to the limit on an attribute's value.
        func characters(_ bytes: UnsafeBufferPointer<UInt8>) {
            guard keepsText, !stopped, textError == nil else { return }
            guard text.count + bytes.count <= limits.maximumAttributeBytes else {
                textError = "an element's text is longer than \(limits.maximumAttributeBytes) bytes"
                return
            }
            text.append(contentsOf: bytes)
        }

        /// An element's end: queued with the text since the last start or end, when text is kept.
        func end(_ local: UnsafePointer<xmlChar>?, _ prefix: UnsafePointer<xmlChar>?) {
            guard !stopped else { return }
            var queued = XMLPullReader.Queued(event: .end(name(local, prefix), depth: depth), line: line)
            if keepsText {
                let first = attributes.count
                text.withUnsafeBufferPointer {
                    attributes.append(name: UnsafeBufferPointer(start: nil, count: 0), value: $0)
                }
                queued.attributes = first..<attributes.count
                queued.attributeError = textError
                text.removeAll(keepingCapacity: true)
                textError = nil
            }
            queue.append(queued)
            depth -= 1
        }

        var line: Int { Int(context?.pointee.input?.pointee.line ?? 0) }

        func name(_ local: UnsafePointer<xmlChar>?, _ prefix: UnsafePointer<xmlChar>?) -> String {
            guard let local else { return "" }
            if let prefix { return XMLPullReader.text(prefix) + ":" + XMLPullReader.text(local) }
            if let known = names[UnsafeRawPointer(local)] { return known }
            let name = XMLPullReader.text(local)
            if names.count < 4_096 { names[UnsafeRawPointer(local)] = name }
            return name
        }

        /// Queues an error that ends the document here, and stops the parser.
        func stop(_ message: String) {
            guard !stopped else { return }
            stopped = true
            queue.append(
                XMLPullReader.Queued(event: nil, line: line, error: XMLReadError(line: line, message: message)))
            if let context { xmlStopParser(context) }
        }
    }

    /// Refuses every external entity, DTD and XInclude libxml2 might fetch, for the whole process.
    private static let installLoader: Void = {
        xmlInitParser()
        xmlSetExternalEntityLoader { _, _, _ in nil }
    }()

    init(name: String, limits: XMLPullReader.Limits, keepsText: Bool, read: @escaping XMLPullReader.Read)
        throws(XMLReadError)
    {
        _ = Self.installLoader
        let parse = Parse(limits: limits, keepsText: keepsText)
        var handler = xmlSAXHandler()
        handler.initialized = UInt32(XML_SAX2_MAGIC)
        handler.startElementNs = { context, local, prefix, _, namespaceCount, namespaces, count, _, attributes in
            guard let context else { return }
            Unmanaged<Parse>.fromOpaque(context).takeUnretainedValue().start(
                local, prefix, Int(namespaceCount), namespaces, Int(count), attributes)
        }
        handler.endElementNs = { context, local, prefix, _ in
            guard let context else { return }
            Unmanaged<Parse>.fromOpaque(context).takeUnretainedValue().end(local, prefix)
        }
        if keepsText {
            handler.characters = { context, characters, count in
                guard let context, let characters, count > 0 else { return }
                Unmanaged<Parse>.fromOpaque(context).takeUnretainedValue().characters(
                    UnsafeBufferPointer(start: characters, count: Int(count)))
            }
        }
        handler.entityDecl = { context, _, _, _, _, _ in
            guard let context else { return }
            Unmanaged<Parse>.fromOpaque(context).takeUnretainedValue().stop(
                "the document declares entities, which are not accepted")
        }
        handler.reference = { context, _ in
            guard let context else { return }
            Unmanaged<Parse>.fromOpaque(context).takeUnretainedValue().stop(
                "the document refers to an entity, which is not accepted")
        }
        handler.serror = { context, error in
            guard let context, let error else { return }
            let parse = Unmanaged<Parse>.fromOpaque(context).takeUnretainedValue()
            guard parse.firstError == nil, error.pointee.level.rawValue >= XML_ERR_ERROR.rawValue else { return }
            let message = error.pointee.message.map { String(cString: $0) } ?? "malformed XML"
            parse.firstError = message.trimmingCharacters(in: .whitespacesAndNewlines)
            parse.firstErrorLine = Int(error.pointee.line)
        }
        let opaque = Unmanaged.passUnretained(parse).toOpaque()
        guard let context = xmlCreatePushParserCtxt(&handler, opaque, nil, 0, name) else {
            throw XMLReadError(line: 0, message: "cannot start the XML parser")
        }
        _ = xmlCtxtUseOptions(context, Int32(XML_PARSE_NONET.rawValue) | Int32(XML_PARSE_NOCDATA.rawValue))
        parse.context = context
        self.context = context
        self.parse = parse
        self.input = read
    }

    deinit { xmlFreeParserCtxt(context) }

    /// Where the parser is.
    var line: Int { parse.line }

    /// The events of the next 64 KiB of the input (perhaps none), ending with the error that stops the document
    /// if there is one; `nil` once the end (or an error) was handed out.
    func next() -> XMLPullReader.Piece? {
        guard !finished else { return nil }
        feed()
        let piece = XMLPullReader.Piece(events: parse.queue, attributes: parse.attributes, bytesRead: bytesRead)
        parse.queue = []
        parse.queue.reserveCapacity(256)
        parse.attributes = AttributeBytes()
        return piece
    }

    /// Gives libxml2 the next piece of the document (the end, when the input has no more).
    private func feed() {
        func fail(_ error: XMLReadError) {
            finished = true
            parse.queue.append(XMLPullReader.Queued(event: nil, line: error.line, error: error))
        }
        let count: Int
        do {
            count = try buffer.withUnsafeMutableBytes { bytes in try input(bytes) }
        } catch {
            fail(XMLReadError(line: parse.line, message: "cannot read: \(error)", isRead: true))
            return
        }
        guard count >= 0, count <= buffer.count else {
            fail(XMLReadError(line: parse.line, message: "cannot read: the input gave \(count) bytes", isRead: true))
            return
        }
        bytesRead += Int64(count)
        let status = buffer.withUnsafeBytes { raw -> Int32 in
            let start = raw.baseAddress?.assumingMemoryBound(to: CChar.self)
            return xmlParseChunk(context, count > 0 ? start : nil, Int32(count), count > 0 ? 0 : 1)
        }
        if parse.stopped {
            finished = true
            return
        }
        if status != 0 || context.pointee.wellFormed == 0 {
            let line = parse.firstErrorLine > 0 ? parse.firstErrorLine : parse.line
            fail(XMLReadError(line: line, message: parse.firstError ?? "malformed XML"))
            return
        }
        if count == 0 {
            finished = true
            if !parse.sawRoot {
                parse.queue.append(
                    XMLPullReader.Queued(
                        event: nil, line: parse.line,
                        error: XMLReadError(line: parse.line, message: "the document has no element")))
            }
        }
    }
}

@available(*, unavailable)
extension XMLPieceParser: Sendable {}

/// A document parsed on a thread of its own, ahead of its ``XMLPullReader`` (``XMLPullReader/readAhead(pieces:)``).
final class XMLReadAhead: @unchecked Sendable {
    // Used by ``run()`` alone, on one thread, once the reader has handed it over.
    private let parser: XMLPieceParser
    private let pieces: HandOver<XMLPullReader.Piece>

    init(parser: XMLPieceParser, pieces: HandOver<XMLPullReader.Piece>) {
        self.parser = parser
        self.pieces = pieces
    }

    /// Parses the document to its end (or its first error, which the reader then throws), handing the pieces to
    /// the reader; returns early when ``stop()`` is called.
    func run() {
        while let piece = parser.next() {
            guard pieces.put(piece) else { return }
        }
        pieces.finish()
    }

    /// The reader reads no more: ``run()`` returns.
    func stop() { pieces.stop() }
}

extension XMLPieceParser.Parse {
    /// An element's start: queued with its attributes (namespace declarations first, as libxml2's reader gives
    /// them), or the error of a limit passed.
    func start(
        _ local: UnsafePointer<xmlChar>?, _ prefix: UnsafePointer<xmlChar>?, _ namespaceCount: Int,
        _ namespaces: UnsafeMutablePointer<UnsafePointer<xmlChar>?>?, _ count: Int,
        _ values: UnsafeMutablePointer<UnsafePointer<xmlChar>?>?
    ) {
        guard !stopped else { return }
        depth += 1
        if keepsText {
            text.removeAll(keepingCapacity: true)
            textError = nil
        }
        let name = name(local, prefix)
        guard depth <= limits.maximumDepth else {
            stop("elements nest deeper than \(limits.maximumDepth)")
            return
        }
        sawRoot = true
        let first = attributes.count
        var error: String?
        func add(_ name: UnsafeBufferPointer<UInt8>, _ value: UnsafeBufferPointer<UInt8>, _ shown: () -> String) {
            guard error == nil else { return }
            guard attributes.count - first < limits.maximumAttributes else {
                error = "an element has more than \(limits.maximumAttributes) attributes"
                return
            }
            guard value.count <= limits.maximumAttributeBytes else {
                error = "attribute \(shown().prefix(64)) is longer than \(limits.maximumAttributeBytes) bytes"
                return
            }
            attributes.append(name: name, value: value)
        }
        func bytes(_ text: UnsafePointer<xmlChar>?) -> UnsafeBufferPointer<UInt8> {
            guard let text else { return UnsafeBufferPointer(start: nil, count: 0) }
            return UnsafeBufferPointer(
                start: text, count: strlen(UnsafeRawPointer(text).assumingMemoryBound(to: CChar.self)))
        }
        if let namespaces {
            for index in 0..<namespaceCount {
                let prefix = namespaces[2 * index]
                let uri = bytes(namespaces[2 * index + 1])
                if let prefix {
                    let qualified = Array("xmlns:".utf8) + Array(bytes(prefix))
                    qualified.withUnsafeBufferPointer { add($0, uri) { String(decoding: qualified, as: UTF8.self) } }
                } else {
                    let plain: StaticString = "xmlns"
                    add(UnsafeBufferPointer(start: plain.utf8Start, count: plain.utf8CodeUnitCount), uri) { "xmlns" }
                }
            }
        }
        if let values {
            for index in 0..<count {
                let base = 5 * index
                guard let attributeName = values[base] else { continue }
                let start = values[base + 3]
                let end = values[base + 4]
                let value =
                    if let start, let end, end > start {
                        UnsafeBufferPointer(start: start, count: end - start)
                    } else {
                        UnsafeBufferPointer<UInt8>(start: nil, count: 0)
                    }
                if let attributePrefix = values[base + 1] {
                    let qualified = Array(bytes(attributePrefix)) + [UInt8(ascii: ":")] + Array(bytes(attributeName))
                    qualified.withUnsafeBufferPointer { add($0, value) { String(decoding: qualified, as: UTF8.self) } }
                } else {
                    add(bytes(attributeName), value) { XMLPullReader.text(attributeName) }
                }
            }
        }
        queue.append(
            XMLPullReader.Queued(
                event: .start(name, depth: depth), line: line, attributes: first..<attributes.count,
                attributeError: error))
    }
}

/// An element's attributes as UTF-8 bytes (``XMLPullReader/attributes(into:)``): names and values one after the
/// other in one buffer, each value followed by a NUL byte (so that C's number parsers can read it in place), and
/// a list of where each is. Kept by its owner from element to element, so that reading one allocates nothing.
public struct AttributeBytes: Sendable {
    /// Where one attribute's name and value are in ``storage``.
    public struct Entry: Sendable {
        public var name: Range<Int>
        public var value: Range<Int>
    }

    public private(set) var storage: [UInt8] = []
    public private(set) var entries: [Entry] = []

    public init() {
        storage.reserveCapacity(1_024)
        entries.reserveCapacity(16)
    }

    public var count: Int { entries.count }

    public mutating func removeAll() {
        storage.removeAll(keepingCapacity: true)
        entries.removeAll(keepingCapacity: true)
    }

    public mutating func append(name: UnsafeBufferPointer<UInt8>, value: UnsafeBufferPointer<UInt8>) {
        let nameStart = storage.count
        storage.append(contentsOf: name)
        let valueStart = storage.count
        storage.append(contentsOf: value)
        entries.append(Entry(name: nameStart..<valueStart, value: valueStart..<storage.count))
        storage.append(0)
    }

    /// Where the value of the attribute `name` is (the last of that name), or `nil`.
    public func value(_ name: StaticString) -> Range<Int>? {
        ElementAttributes(bytes: self, entries: entries.indices).value(name)
    }

    /// The bytes at `range` as a string (invalid UTF-8 repaired, as `String(cString:)` repairs it).
    public func string(_ range: Range<Int>) -> String {
        String(decoding: storage[range], as: UTF8.self)
    }

    /// Every attribute by name, as strings (a later one of the same name wins).
    public func dictionary() -> [String: String] {
        ElementAttributes(bytes: self, entries: entries.indices).dictionary()
    }
}

/// One element's attributes where the reader queued them (``XMLPullReader/elementAttributes()``): the bytes of
/// the element's piece, kept alive by this value rather than copied, and which of their entries are the
/// element's.
public struct ElementAttributes: Sendable {
    public let bytes: AttributeBytes
    public let entries: Range<Int>

    public var count: Int { entries.count }

    /// Where the value of the attribute `name` is in ``bytes`` (the last of that name), or `nil`.
    public func value(_ name: StaticString) -> Range<Int>? {
        let wanted = UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount)
        var found: Range<Int>?
        bytes.storage.withUnsafeBufferPointer { storage in
            guard let base = storage.baseAddress, let other = wanted.baseAddress else { return }
            for entry in bytes.entries[entries] where entry.name.count == wanted.count {
                if memcmp(base + entry.name.lowerBound, other, wanted.count) == 0 { found = entry.value }
            }
        }
        return found
    }

    /// Every attribute by name, as strings (a later one of the same name wins).
    public func dictionary() -> [String: String] {
        var found: [String: String] = [:]
        for entry in bytes.entries[entries] { found[bytes.string(entry.name)] = bytes.string(entry.value) }
        return found
    }
}
