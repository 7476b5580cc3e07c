import Foundation
import GATT
import Health
import Support

/// One stream's line in one output format, as constant bytes with holes for what changes from sample to sample
/// (its id, start, end and value): the fast path of `export` and `samples` (``SampleLineWriter``), which fills the
/// holes with ``ByteFormat``'s formatters straight into an ``OutputBuffer``.
///
/// A template is not written by hand: it is read off the general writer. Three prototype samples of the stream, with
/// different ids, times and values, are put through the writer's shape (the JSON tree or the CSV cells it prints);
/// what is equal in all three is constant, and each part that differs must be one of the holes, found by the
/// prototypes' own values (a string holding its id or time, a number equal to its value, to its value times a
/// constant factor, or to its integer part). Anything else that differs (a category's name, a branch on the value)
/// leaves the stream to the general writer. The template is then checked by writing the three prototypes through
/// it and comparing with the general writer's lines, byte for byte; a template that differs is not used.
///
/// A stream's samples take one template when they are instants (start == end) and another when they span time,
/// since the writers choose their shape by that (Open mHealth's `date_time` or `time_interval`).
struct SampleTemplate {
    enum Hole: Equatable {
        case id
        case start
        case end
        /// The value as a double.
        case value
        /// The value times a constant, as a double (a percentage written from a fraction).
        case scaled(Double)
        /// The value's integer part (a category's value in CSV).
        case integer
    }

    /// What a general writer prints of a sample: a JSON value (a line of NDJSON), or CSV cells.
    enum Shape {
        case json((QuantitySample) -> FieldValue)
        case csv((QuantitySample) -> [FieldValue])
    }

    /// The constant text, holes cut out, and 8 bytes more (``ByteFormat/copy(_:_:to:)`` reads past a piece's end).
    private let bytes: [UInt8]
    private let length: Int
    /// Where each hole goes in ``bytes``, in order.
    private let holes: [(at: Int, hole: Hole)]
    /// Formats the stream's instants.
    private var clock: ByteFormat.Clock
    /// The most bytes a sample's line takes, and the 8 that ``ByteFormat/copy(_:_:to:)`` may write past it.
    let maximumLength: Int

    /// The template of `stream`'s instants (`instant`) or intervals in `shape`, checked against `general`; `nil`
    /// when the stream is one for the general writer.
    init?(
        _ stream: QuantitySeries, instant: Bool, shape: Shape, general: (QuantitySample) -> String
    ) {
        guard let clock = ByteFormat.Clock(offsetSeconds: stream.startOffsetSeconds) else { return nil }
        let prototypes = Self.prototypes(stream, instant: instant)
        var builder = Builder(prototypes: prototypes)
        switch shape {
        case .json(let render):
            guard builder.json(prototypes.map(render)) else { return nil }
            builder.text.endLine()
        case .csv(let render):
            guard builder.csv(prototypes.map(render)) else { return nil }
        }
        // Cut the placeholders out.
        let written = builder.csvLine ?? builder.text.bytes
        var bytes: [UInt8] = []
        var holes: [(at: Int, hole: Hole)] = []
        var from = 0
        for cut in builder.cuts {
            bytes += written[from..<cut.at]
            holes.append((bytes.count, cut.hole))
            from = cut.at + cut.length
        }
        bytes += written[from...]
        self.bytes = bytes + Array(repeating: 0, count: 8)
        length = bytes.count
        self.holes = holes
        self.clock = clock
        maximumLength = bytes.count + holes.count * ByteFormat.maximumField + 8
        // Checked: the prototypes through the template are the general writer's lines.
        let output = OutputBuffer { _ throws(PrivateFile.Failure) in }
        for prototype in prototypes {
            output.count = 0
            guard write(prototype.id, prototype.start.milliseconds, prototype.end.milliseconds, prototype.value, output)
            else { return nil }
            let written = Array(UnsafeBufferPointer(start: output.base, count: output.count))
            guard written == Array(general(prototype).utf8) else { return nil }
        }
    }

    /// Appends the sample's line to `output`; `false` (nothing appended) when one of its values is for the general
    /// writer (an instant outside the years 0-9999, an integer part out of range).
    mutating func write(_ id: UUID, _ start: Int64, _ end: Int64, _ value: Double, _ output: OutputBuffer) -> Bool {
        output.reserve(maximumLength)
        let line = output.base + output.count
        var position = 0
        var from = 0
        return bytes.withUnsafeBufferPointer { constant in
            for (at, hole) in holes {
                ByteFormat.copy(constant.baseAddress! + from, at - from, to: line + position)
                position += at - from
                from = at
                let out = line + position
                switch hole {
                case .id: position += ByteFormat.uuid(id, to: out)
                case .start:
                    guard let written = clock.instant(start, to: out) else { return false }
                    position += written
                case .end:
                    guard let written = clock.instant(end, to: out) else { return false }
                    position += written
                case .value: position += ByteFormat.double(value, to: out)
                case .scaled(let factor): position += ByteFormat.double(value * factor, to: out)
                case .integer:
                    // Int64(value) of the general writer, where it is defined.
                    guard value > -9.2e18, value < 9.2e18 else { return false }
                    position += ByteFormat.integer(Int64(value), to: out)
                }
            }
            ByteFormat.copy(constant.baseAddress! + from, length - from, to: line + position)
            position += length - from
            output.count += position
            return true
        }
    }

    /// Three samples of `stream` with different ids, times (in different years, with milliseconds) and values:
    /// instants, or spanning time. The first value is 1, so that a value written times a factor shows the factor;
    /// the others are chosen to show a writer that rounds or converts: 0.97 times 100 is not 97 in binary, and the
    /// third has 17 significant digits.
    static func prototypes(_ stream: QuantitySeries, instant: Bool) -> [QuantitySample] {
        let samples: [(id: String, start: Int64, span: Int64, value: Double)] = [
            ("a1a2a3a4-b1b2-8c1c-9d1d-e1e2e3e4e5e6", 981_173_106_789, 61_001, 1),
            ("0f1e2d3c-4b5a-8978-a695-b4c3d2e1f000", 1_353_583_342_123, 1_800_250, 0.97),
            ("fedcba98-7654-8321-8fed-cba987654321", 556_984_800_004, 3_599_999, -1_234.567_890_123_456_7),
        ]
        return samples.map { sample in
            QuantitySample(
                id: UUID(uuidString: sample.id), type: stream.type, start: Instant(milliseconds: sample.start),
                end: Instant(milliseconds: sample.start + (instant ? 0 : sample.span)),
                startOffsetSeconds: stream.startOffsetSeconds, value: sample.value, source: stream.source,
                device: stream.device, subject: stream.subject, metadata: stream.metadata)
        }
    }

    /// Writes the constant parts of the prototypes' shapes and marks where the holes go.
    private struct Builder {
        let prototypes: [QuantitySample]
        var text = JSONWriter(capacity: 1_024)
        /// A CSV line, with its newline (instead of ``text``).
        var csvLine: [UInt8]?
        /// Placeholders written for holes: where, how long, which hole.
        var cuts: [(at: Int, length: Int, hole: Hole)] = []

        init(prototypes: [QuantitySample]) {
            self.prototypes = prototypes
        }

        /// The texts a string hole holds in each prototype.
        private func texts(_ hole: Hole) -> [String] {
            prototypes.map { prototype in
                switch hole {
                case .id: prototype.id.uuidString.lowercased()
                case .start: StoreArguments.format(prototype.start, offsetSeconds: prototype.startOffsetSeconds)
                default: StoreArguments.format(prototype.end, offsetSeconds: prototype.startOffsetSeconds)
                }
            }
        }

        /// The string hole of `values` (one per prototype), with the constant text before and after it.
        private func stringHole(_ values: [FieldValue]) -> (before: String, hole: Hole, after: String)? {
            let strings = values.compactMap { value -> String? in
                if case .string(let text) = value { return text }
                return nil
            }
            guard strings.count == prototypes.count else { return nil }
            for hole in [Hole.id, .start, .end] {
                let texts = texts(hole)
                guard let range = strings[0].range(of: texts[0]) else { continue }
                let before = String(strings[0][..<range.lowerBound])
                let after = String(strings[0][range.upperBound...])
                if zip(strings, texts).allSatisfy({ $0 == before + $1 + after }) { return (before, hole, after) }
            }
            return nil
        }

        /// The number hole of `values` (one per prototype).
        private func numberHole(_ values: [FieldValue]) -> Hole? {
            let numbers = prototypes.map(\.value)
            let doubles = values.compactMap { value -> Double? in
                if case .double(let number) = value { return number }
                return nil
            }
            if doubles.count == values.count {
                if zip(doubles, numbers).allSatisfy({ $0.bitPattern == $1.bitPattern }) { return .value }
                // The first prototype's value is 1: its number is the factor.
                let factor = doubles[0]
                if numbers[0] == 1, zip(doubles, numbers).allSatisfy({ $0.bitPattern == ($1 * factor).bitPattern }) {
                    return .scaled(factor)
                }
            }
            if values == numbers.map({ FieldValue.integer(Int64($0)) }) { return .integer }
            return nil
        }

        /// The JSON of `values` (one per prototype) with holes; `false` when they differ otherwise.
        mutating func json(_ values: [FieldValue]) -> Bool {
            let first = values[0]
            if values.allSatisfy({ $0 == first }) {
                write(first)
                return true
            }
            switch first {
            case .object(let fields):
                var members: [[Field]] = []
                for value in values {
                    guard case .object(let other) = value, other.map(\.name) == fields.map(\.name) else { return false }
                    members.append(other)
                }
                text.beginObject()
                for (index, field) in fields.enumerated() {
                    text.key(field.name)
                    guard json(members.map { $0[index].value }) else { return false }
                }
                text.endObject()
                return true
            case .list(let elements):
                var lists: [[FieldValue]] = []
                for value in values {
                    guard case .list(let other) = value, other.count == elements.count else { return false }
                    lists.append(other)
                }
                text.beginArray()
                for index in elements.indices {
                    guard json(lists.map { $0[index] }) else { return false }
                }
                text.endArray()
                return true
            case .string:
                guard let found = stringHole(values), Self.plain(found.before), Self.plain(found.after) else {
                    return false
                }
                text.string(found.before + found.after)
                cuts.append((text.bytes.count - 1 - found.after.utf8.count, 0, found.hole))
                return true
            default:
                guard let hole = numberHole(values) else { return false }
                text.null()
                cuts.append((text.bytes.count - 4, 4, hole))
                return true
            }
        }

        /// The CSV line of `rows` (one per prototype, each its cells) with holes, into ``csvLine``.
        mutating func csv(_ rows: [[FieldValue]]) -> Bool {
            guard rows.allSatisfy({ $0.count == rows[0].count }) else { return false }
            var line: [UInt8] = []
            var holes: [(at: Int, length: Int, hole: Hole)] = []
            for index in rows[0].indices {
                if index > 0 { line.append(UInt8(ascii: ",")) }
                let cells = rows.map { $0[index] }
                if cells.allSatisfy({ $0 == cells[0] }) {
                    line += SamplesCommand.csvCell(cells[0]).utf8
                } else if let found = stringHole(cells) {
                    // Ids and times need no quotes: neither may the text around them.
                    let around = SamplesCommand.csvCell(.string(found.before + found.after))
                    guard around == found.before + found.after else { return false }
                    line += found.before.utf8
                    holes.append((line.count, 0, found.hole))
                    line += found.after.utf8
                } else if let hole = numberHole(cells) {
                    holes.append((line.count, 0, hole))
                } else {
                    return false
                }
            }
            csvLine = line + [UInt8(ascii: "\n")]
            cuts = holes
            return true
        }

        /// A string whose JSON is its bytes between quotes.
        private static func plain(_ text: String) -> Bool {
            !text.utf8.contains { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }
        }

        /// A constant value, as ``FieldValue/json`` writes it.
        private mutating func write(_ value: FieldValue) {
            switch value {
            case .null: text.null()
            case .bool(let flag): text.bool(flag)
            case .integer(let number): text.integer(number)
            case .double(let number): text.double(number)
            case .string(let string): text.string(string)
            case .list(let elements):
                text.beginArray()
                for element in elements { write(element) }
                text.endArray()
            case .object(let fields):
                text.beginObject()
                for field in fields {
                    text.key(field.name)
                    write(field.value)
                }
                text.endObject()
            }
        }
    }
}
