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

/// A streaming XML pull reader: libxml2's `xmlTextReader`, wrapped once (the only user of `CLibXML2`).
///
/// It reads from a callback (so a zip entry is parsed in place), holds one element at a time, and keeps to
/// ``Limits``. It never touches the network or the file system on the document's behalf: `XML_PARSE_NONET`, no
/// DTD loading, no entity substitution, an external entity loader that refuses everything, and a document that
/// declares entities at all (an Apple Health export declares none) or refers to one is refused. libxml2's own
/// limits stay on (no `XML_PARSE_HUGE`: text nodes and names of at most 10 MB, nesting of at most 256).
///
/// Events come as ``Event/start(_:depth:)`` and ``Event/end(_:depth:)``, an empty element's end right after its
/// start; text, comments and processing instructions are skipped. Not thread-safe: one owner reads it.
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

    /// The callback's state, passed to libxml2 as its context.
    private final class Input {
        let read: Read
        var failure: (any Error)?
        var firstError: String?
        var firstErrorLine = 0

        init(read: @escaping Read) { self.read = read }
    }

    private let reader: xmlTextReaderPtr
    private let input: Input
    private let limits: Limits
    /// The start of an empty element was returned: its end comes next.
    private var pendingEnd: (String, Int)?
    private var sawRoot = false

    /// Refuses every external entity, DTD and XInclude libxml2 might fetch, for the whole process.
    private static let installLoader: Void = {
        xmlInitParser()
        xmlSetExternalEntityLoader { _, _, _ in nil }
    }()

    /// A reader of the document `read` yields; `name` is what errors call it.
    public init(name: String, limits: Limits = Limits(), read: @escaping Read) throws(XMLReadError) {
        _ = Self.installLoader
        let input = Input(read: read)
        let context = Unmanaged.passUnretained(input).toOpaque()
        // XML_PARSE_BIG_LINES: line numbers past 65,535 (an export's millions of lines) are kept, not capped.
        let options =
            Int32(XML_PARSE_NONET.rawValue) | Int32(XML_PARSE_NOCDATA.rawValue) | Int32(XML_PARSE_BIG_LINES.rawValue)
        guard
            let reader = xmlReaderForIO(
                { context, buffer, length in
                    guard let context, let buffer, length > 0 else { return -1 }
                    let input = Unmanaged<XMLPullReader.Input>.fromOpaque(context).takeUnretainedValue()
                    do {
                        let count = try input.read(UnsafeMutableRawBufferPointer(start: buffer, count: Int(length)))
                        return Int32(clamping: count)
                    } catch {
                        input.failure = error
                        return -1
                    }
                }, { _ in 0 }, context, name, nil, options)
        else { throw XMLReadError(line: 0, message: "cannot start the XML reader") }
        self.reader = reader
        self.input = input
        self.limits = limits
        xmlTextReaderSetStructuredErrorHandler(
            reader,
            { context, error in
                guard let context, let error else { return }
                let input = Unmanaged<XMLPullReader.Input>.fromOpaque(context).takeUnretainedValue()
                guard input.firstError == nil, error.pointee.level.rawValue >= XML_ERR_ERROR.rawValue else { return }
                let message = error.pointee.message.map { String(cString: $0) } ?? "malformed XML"
                input.firstError = message.trimmingCharacters(in: .whitespacesAndNewlines)
                input.firstErrorLine = Int(error.pointee.line)
            }, context)
    }

    deinit { xmlFreeTextReader(reader) }

    /// The line of the node the reader is on (where the parser is, when it is on none).
    public var line: Int {
        if let node = xmlTextReaderCurrentNode(reader) {
            let line = Int(node.pointee.line)
            if line > 0, line < 65_535 { return line }
            if line == 65_535, let big = Self.bigLine(node) { return big }
            let found = Int(xmlGetLineNo(node))
            if found > 0, found != 65_535 { return found }
        }
        return Int(xmlTextReaderGetParserLineNumber(reader))
    }

    /// An element's line past 65,535, which libxml2 keeps (XML_PARSE_BIG_LINES) only in the text nodes around
    /// it, as the line where the text ended: that of its first child text, or of the text after it, less the
    /// newlines the text holds.
    private static func bigLine(_ node: xmlNodePtr) -> Int? {
        for candidate in [node.pointee.children, node.pointee.next] {
            guard let text = candidate, text.pointee.type == XML_TEXT_NODE, let psvi = text.pointee.psvi else {
                continue
            }
            var newlines = 0
            if var byte = text.pointee.content {
                while byte.pointee != 0 {
                    if byte.pointee == 0x0A { newlines += 1 }
                    byte += 1
                }
            }
            let line = Int(bitPattern: psvi) - newlines
            return line > 0 ? line : nil
        }
        return nil
    }

    /// The next element start or end, or `nil` at the end of the document.
    public func next() throws(XMLReadError) -> Event? {
        if let (name, depth) = pendingEnd {
            pendingEnd = nil
            return .end(name, depth: depth)
        }
        while true {
            let status = xmlTextReaderRead(reader)
            if status == 0 {
                guard sawRoot else { throw XMLReadError(line: line, message: "the document has no element") }
                return nil
            }
            guard status == 1 else { throw failure() }
            let type = xmlTextReaderNodeType(reader)
            switch type {
            case Int32(XML_READER_TYPE_ELEMENT.rawValue):
                let depth = Int(xmlTextReaderDepth(reader))
                guard depth <= limits.maximumDepth else {
                    throw XMLReadError(line: line, message: "elements nest deeper than \(limits.maximumDepth)")
                }
                if depth == 0 {
                    sawRoot = true
                    try refuseDeclaredEntities()
                }
                let name = currentName()
                if xmlTextReaderIsEmptyElement(reader) == 1 { pendingEnd = (name, depth) }
                return .start(name, depth: depth)
            case Int32(XML_READER_TYPE_END_ELEMENT.rawValue):
                return .end(currentName(), depth: Int(xmlTextReaderDepth(reader)))
            case Int32(XML_READER_TYPE_ENTITY_REFERENCE.rawValue), Int32(XML_READER_TYPE_ENTITY.rawValue):
                throw XMLReadError(line: line, message: "the document refers to an entity, which is not accepted")
            default:
                continue
            }
        }
    }

    /// The attributes of the element ``next()`` just started, by name.
    public func attributes() throws(XMLReadError) -> [String: String] {
        var bytes = AttributeBytes()
        try attributes(into: &bytes)
        return bytes.dictionary()
    }

    /// The attributes of the element ``next()`` just started, as bytes: each name and value copied into `list`
    /// (emptied first), in document order, under the same limits as ``attributes()`` (which is this, as strings).
    public func attributes(into list: inout AttributeBytes) throws(XMLReadError) {
        list.removeAll()
        guard xmlTextReaderMoveToFirstAttribute(reader) == 1 else { return }
        defer { xmlTextReaderMoveToElement(reader) }
        repeat {
            guard list.count < limits.maximumAttributes else {
                throw XMLReadError(
                    line: line, message: "an element has more than \(limits.maximumAttributes) attributes")
            }
            guard let name = xmlTextReaderConstName(reader) else { continue }
            let value = xmlTextReaderConstValue(reader)
            let length = value.map { strlen(UnsafeRawPointer($0).assumingMemoryBound(to: CChar.self)) } ?? 0
            guard length <= limits.maximumAttributeBytes else {
                throw XMLReadError(
                    line: line,
                    message:
                        "attribute \(Self.text(name).prefix(64)) is longer than \(limits.maximumAttributeBytes) bytes"
                )
            }
            let nameBytes = UnsafeBufferPointer(
                start: name, count: strlen(UnsafeRawPointer(name).assumingMemoryBound(to: CChar.self)))
            list.append(name: nameBytes, value: UnsafeBufferPointer(start: value, count: length))
        } while xmlTextReaderMoveToNextAttribute(reader) == 1
    }

    /// Skips what is inside the element ``next()`` just started at `depth` (its end included).
    public func skip(depth: Int) throws(XMLReadError) {
        while let event = try next() {
            if case .end(_, let end) = event, end == depth { return }
        }
    }

    private func currentName() -> String {
        xmlTextReaderConstName(reader).map(Self.text) ?? ""
    }

    private static func text(_ characters: UnsafePointer<xmlChar>) -> String {
        String(cString: UnsafeRawPointer(characters).assumingMemoryBound(to: CChar.self))
    }

    /// An error for a failed read: the input's own, else libxml2's first error, else a generic one.
    private func failure() -> XMLReadError {
        if let failure = input.failure {
            return XMLReadError(line: line, message: "cannot read: \(failure)", isRead: true)
        }
        return XMLReadError(
            line: input.firstErrorLine > 0 ? input.firstErrorLine : line, message: input.firstError ?? "malformed XML")
    }

    /// Refuses a document whose DTD declares entities (the root element's document is looked at once).
    private func refuseDeclaredEntities() throws(XMLReadError) {
        guard let node = xmlTextReaderCurrentNode(reader), let document = node.pointee.doc else { return }
        for subset in [document.pointee.intSubset, document.pointee.extSubset] {
            guard let dtd = subset else { continue }
            for table in [dtd.pointee.entities, dtd.pointee.pentities] {
                guard let table else { continue }
                if xmlHashSize(OpaquePointer(table)) > 0 {
                    throw XMLReadError(
                        line: line, message: "the document declares entities, which are not accepted")
                }
            }
        }
    }
}

@available(*, unavailable)
extension XMLPullReader: Sendable {}

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
        let wanted = UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount)
        var found: Range<Int>?
        storage.withUnsafeBufferPointer { bytes in
            guard let base = bytes.baseAddress, let other = wanted.baseAddress else { return }
            for entry in entries where entry.name.count == wanted.count {
                if memcmp(base + entry.name.lowerBound, other, wanted.count) == 0 { found = entry.value }
            }
        }
        return found
    }

    /// The bytes at `range` as a string (invalid UTF-8 repaired, as `String(cString:)` repairs it).
    public func string(_ range: Range<Int>) -> String {
        String(decoding: storage[range], as: UTF8.self)
    }

    /// Every attribute by name, as strings (a later one of the same name wins).
    public func dictionary() -> [String: String] {
        var found: [String: String] = [:]
        for entry in entries { found[string(entry.name)] = string(entry.value) }
        return found
    }
}
