import Foundation
import GATT
import Health
import Support
import Testing

@testable import WearhouseCLI

/// The fast path of `export` and `samples` (``SampleLineWriter``, ``SampleTemplate``, ``ByteFormat``) writes the
/// general writers' lines byte for byte: its formatters against the general ones, its templates on the common
/// streams (and none where a line depends on the value otherwise), and random pages of random streams in every
/// format against the general writer, sample by sample.
@Suite struct SampleLineWriterTests {
    /// Every format the fast path writes: its writer and its general writer.
    enum Format: String, CaseIterable, CustomTestStringConvertible {
        case exportCSV, exportNDJSON, exportFHIR, samplesJSON, samplesCSV

        var testDescription: String { rawValue }

        var writer: SampleLineWriter {
            switch self {
            case .exportCSV: .export(.csv)
            case .exportNDJSON: .export(.ndjson)
            case .exportFHIR: .export(.fhir)
            case .samplesJSON: .samples(.json)
            case .samplesCSV: .samples(.csv)
            }
        }

        func general(_ sample: QuantitySample) -> String {
            switch self {
            case .exportCSV: ExportCommand.lines(sample, format: .csv)
            case .exportNDJSON: ExportCommand.lines(sample, format: .ndjson)
            case .exportFHIR: ExportCommand.lines(sample, format: .fhir)
            case .samplesJSON: SamplesCommand.render([sample], format: .json, header: false)
            case .samplesCSV: SamplesCommand.render([sample], format: .csv, header: false)
            }
        }
    }

    /// What `writer` writes of `page` (without the samples in `skipping`).
    static func written(_ page: SampleColumns, _ writer: inout SampleLineWriter, skipping: Set<UUID> = []) throws
        -> String
    {
        let collected = Collected()
        let output = OutputBuffer { bytes throws(PrivateFile.Failure) in collected.bytes += bytes }
        _ = try writer.write(page, skipping: skipping, to: output)
        try output.flush()
        return String(decoding: collected.bytes, as: UTF8.self)
    }

    final class Collected {
        var bytes: [UInt8] = []
    }

    // MARK: Formatters

    static func generalDouble(_ value: Double) -> String {
        var writer = JSONWriter()
        writer.double(value)
        return writer.text
    }

    static func fastDouble(_ value: Double) -> String {
        var bytes = [UInt8](repeating: 0, count: ByteFormat.maximumField)
        let count = bytes.withUnsafeMutableBufferPointer { ByteFormat.double(value, to: $0.baseAddress!) }
        return String(decoding: bytes.prefix(count), as: UTF8.self)
    }

    @Test func doublesAreWrittenAsTheJSONWriterWritesThem() {
        let vectors: [Double] = [
            0, -0.0, 1, -1, 72, 55.5, 0.1, 0.97, 36.6, 99.99, 1e-4, 1.5e-4, 9.9e-5, 0.000123, 123_456.789_012,
            999_999_999.999_999, 1e9, 1e9 + 0.5, 1e15 - 1, 1e15, 1e16, 9_007_199_254_740_992, 4_503_599_627_370_497,
            .nan, .infinity, -.infinity, .ulpOfOne, .leastNonzeroMagnitude, .greatestFiniteMagnitude, 1.0 / 3, 2.0 / 3,
            -12.5, 0.125, 1234.567_890_123_456_7,
        ]
        for value in vectors { #expect(Self.fastDouble(value) == Self.generalDouble(value), "\(value)") }
        var random = SplitMix64(seed: 20)
        for _ in 0..<200_000 {
            let value: Double
            switch random.next() % 4 {
            case 0:  // a decimal of up to 8 places, as sensors and people write them
                let places = Int(random.next() % 9)
                let digits = Int64(bitPattern: random.next() % 10_000_000_000_000) - 5_000_000_000_000
                value = Double(digits) / pow(10, Double(places))
            case 1: value = Double(Int64(bitPattern: random.next()) >> Int(random.next() % 63))
            case 2: value = Double(bitPattern: random.next())
            default: value = (random.unit() - 0.5) * pow(10, Double(Int(random.next() % 40) - 20))
            }
            #expect(Self.fastDouble(value) == Self.generalDouble(value), "\(value) \(value.bitPattern)")
        }
    }

    @Test func instantsAreWrittenAsTheGeneralFormatterWritesThem() throws {
        var random = SplitMix64(seed: 3339)
        let offsets: [Int32] = [0, 3_600, -18_000, 19_800, 45 * 60 + 5, -1, 50_400, -43_200, 1, 359_999, -359_999]
        let first = Instant.supportedMilliseconds.lowerBound
        let last = Instant.supportedMilliseconds.upperBound
        var written = 0
        for offset in offsets {
            var clock = try #require(ByteFormat.Clock(offsetSeconds: offset), "\(offset)")
            var previous: Int64 = 1_743_292_800_000
            for round in 0..<20_000 {
                let milliseconds: Int64
                switch round % 4 {
                case 0: milliseconds = Int64.random(in: first...last, using: &random)
                case 1: milliseconds = previous + Int64.random(in: 0...90_000, using: &random)  // the same day, often
                case 2: milliseconds = [first, last, 0, -1, 86_400_000 - 1, 951_782_400_000][round / 4 % 6]
                default: milliseconds = Int64.random(in: -62_167_219_300_000...253_402_400_000_000, using: &random)
                }
                previous = milliseconds
                var bytes = [UInt8](repeating: 0, count: ByteFormat.maximumField)
                let count = bytes.withUnsafeMutableBufferPointer { clock.instant(milliseconds, to: $0.baseAddress!) }
                let general = StoreArguments.format(Instant(milliseconds: milliseconds), offsetSeconds: offset)
                if let count {
                    #expect(
                        String(decoding: bytes.prefix(count), as: UTF8.self) == general, "\(milliseconds) \(offset)")
                    written += 1
                } else {
                    // Declined only outside the years 0-9999 (local time).
                    let local = milliseconds + Int64(offset) * 1_000
                    let year = CivilCalendar.date(days: (local - (local < 0 ? 86_399_999 : 0)) / 86_400_000).year
                    #expect(year < 0 || year > 9_999, "\(general)")
                }
            }
        }
        #expect(written > 200_000)
        // Offsets of 100,000 hours or more have no clock (their suffix is longer): the general writer takes them.
        #expect(ByteFormat.Clock(offsetSeconds: .max) == nil)
        #expect(ByteFormat.Clock(offsetSeconds: .min) == nil)
    }

    @Test func uuidsAreWrittenInLowerCase() {
        for _ in 0..<1_000 {
            let id = UUID()
            var bytes = [UInt8](repeating: 0, count: 36)
            _ = bytes.withUnsafeMutableBufferPointer { ByteFormat.uuid(id, to: $0.baseAddress!) }
            #expect(String(decoding: bytes, as: UTF8.self) == id.uuidString.lowercased())
        }
    }

    // MARK: Templates

    static let strap = Device(
        name: "Polar H10 \"chest\"", manufacturer: "Polar", model: "H10", hardwareVersion: "1",
        firmwareVersion: "5.0,1", softwareVersion: nil, serialNumber: "C1234", localIdentifier: "A0:9E:1A:00:00:01")

    /// Streams and whether each format takes them through a template (`true`) or leaves them to the general writer.
    static let streams: [(QuantitySeries, instant: Bool, taken: Set<Format>)] = [
        (QuantitySeries(type: .heartRate, source: Source(identifier: "org.example.app")), true, Set(Format.allCases)),
        (
            QuantitySeries(
                type: .heartRate, startOffsetSeconds: 7_200,
                source: Source(identifier: "org.wearhouse.gateway", version: "1.2"), device: strap, subject: "alice",
                metadata: ["note": .string("a, \"quoted\"\nline\u{1}"), "laps": .number(42), "flag": .bool(true)]),
            false, Set(Format.allCases)
        ),
        (QuantitySeries(type: .stepCount, source: Source(identifier: "watch")), false, Set(Format.allCases)),
        (QuantitySeries(type: .stepCount, source: Source(identifier: "watch")), true, Set(Format.allCases)),
        (
            QuantitySeries(
                type: .bodyTemperature, startOffsetSeconds: -18_000, source: Source(identifier: "thermo"),
                metadata: [MetadataKey.bodyTemperatureSensorLocation: .integer(6)]),
            true, Set(Format.allCases)
        ),
        // omh writes a percentage (value times 100); FHIR rounds it to 12 digits: the general writer's.
        (
            QuantitySeries(type: .oxygenSaturation, source: Source(identifier: "oximeter")), true,
            Set(Format.allCases).subtracting([.exportFHIR])
        ),
        // A category's name changes with its value: only CSV (its integer) has a template.
        (
            QuantitySeries(type: .sleepAnalysis, source: Source(identifier: "sleep")), false,
            [.exportCSV, .samplesCSV]
        ),
    ]

    @Test(arguments: Format.allCases) func commonStreamsHaveTemplatesAndCategoriesInJSONDoNot(_ format: Format) {
        for (stream, instant, taken) in Self.streams {
            let template = SampleTemplate(
                stream, instant: instant, shape: format.writer.shape, general: { format.general($0) })
            #expect((template != nil) == taken.contains(format), "\(stream.type.identifier) instant \(instant)")
        }
    }

    // MARK: Random pages

    static let texts = [
        "", "a", "org.example.app", "a,b", "quote\"d", "new\nline", "tab\tand\r", "ctrl\u{1}\u{1F}", "üñï", "🫀 heart",
        "back\\slash", "urn:uuid:x", "null", "2025-03-30T10:00:00.000Z",
    ]

    static func text(_ random: inout SplitMix64) -> String { random.pick(texts) }

    static func maybeText(_ random: inout SplitMix64) -> String? {
        random.next() % 3 == 0 ? nil : text(&random)
    }

    static func metadata(_ random: inout SplitMix64) -> [String: MetadataValue] {
        var metadata: [String: MetadataValue] = [:]
        let keys = [
            "note", MetadataKey.wasUserEntered, MetadataKey.bodyTemperatureSensorLocation, "k,\"", "depth", "when",
        ]
        for _ in 0..<Int(random.next() % 4) {
            let key = random.pick(keys)
            switch random.next() % 6 {
            case 0: metadata[key] = .string(text(&random))
            case 1: metadata[key] = .number((random.unit() - 0.5) * 1_000)
            case 2: metadata[key] = .integer(Int64(random.next() % 12))
            case 3: metadata[key] = .bool(random.next() % 2 == 0)
            case 4: metadata[key] = .date(Instant(milliseconds: Int64(random.next() % 2_000_000_000_000)))
            default: metadata[key] = .quantity(random.unit() * 10, unit: text(&random))
            }
        }
        return metadata
    }

    static func stream(_ random: inout SplitMix64) -> QuantitySeries {
        let types = HealthTypeCatalog.all.filter(\.isSampleType)
        let offsets: [Int32] = [0, 3_600, -18_000, 19_800, 45 * 60 + 5, -1, 360_000, .max]
        let device =
            random.next() % 2 == 0
            ? nil
            : Device(
                name: maybeText(&random), manufacturer: maybeText(&random), model: maybeText(&random),
                hardwareVersion: maybeText(&random), firmwareVersion: maybeText(&random),
                softwareVersion: maybeText(&random), serialNumber: maybeText(&random),
                localIdentifier: maybeText(&random))
        return QuantitySeries(
            type: random.pick(types),
            startOffsetSeconds: random.pick(offsets),
            source: Source(identifier: text(&random), version: maybeText(&random)), device: device,
            subject: maybeText(&random), metadata: metadata(&random))
    }

    static func value(_ random: inout SplitMix64, category: Bool) -> Double {
        switch random.next() % (category ? 3 : 6) {
        case 0: Double(random.next() % 300)
        case 1: Double(Int64(random.next() % 2_000_000) - 1_000_000) / 1_000
        case 2: Double(Int64(random.next() % 20) - 5)
        case 3: Double(bitPattern: random.next())
        case 4: [-0.0, 1e-7, 1e300, 0.97, .pi, 1e15 + 1][Int(random.next() % 6)]
        default: [Double.nan, .infinity, 123_456_789.123_456_7][Int(random.next() % 3)]
        }
    }

    /// A page of samples of a few random streams, interleaved, with times mostly near 2025, some at the edges of
    /// the supported years and a few beyond them.
    static func page(_ random: inout SplitMix64) -> [QuantitySample] {
        let streams = (0..<Int(1 + random.next() % 4)).map { _ in stream(&random) }
        var samples: [QuantitySample] = []
        var time: Int64 = 1_743_292_800_000 + Int64(random.next() % 1_000_000)
        for _ in 0..<Int(random.next() % 300) {
            let stream = random.pick(streams)
            switch random.next() % 20 {
            case 0: time = Int64(random.next() % 253_402_300_799_999)
            case 1: time = [-62_135_596_800_000, 253_402_300_799_999, -62_167_219_200_001][Int(random.next() % 3)]
            default: time += Int64(random.next() % 3_600_000)
            }
            let span = random.next() % 2 == 0 ? 0 : Int64(random.next() % 86_400_000)
            let id = random.next() % 2 == 0 ? nil : UUID()
            samples.append(
                QuantitySample(
                    id: id, type: stream.type, start: Instant(milliseconds: time),
                    end: Instant(milliseconds: time + span), startOffsetSeconds: stream.startOffsetSeconds,
                    value: value(&random, category: stream.type.kind == .category), source: stream.source,
                    device: stream.device, subject: stream.subject, metadata: stream.metadata))
        }
        return samples
    }

    /// Seeded: random pages of random streams (every sample type; devices, sources, subjects and metadata with
    /// commas, quotes, newlines, control characters and non-ASCII; offsets of odd seconds, of 100 hours and of 68 years; values
    /// of every kind; times to the ends of the years 0-9999 and beyond), some samples left out as correlation
    /// members are: the writer's text is the general writer's, sample by sample, in every format.
    @Test(arguments: Format.allCases) func randomPagesAreWrittenAsTheGeneralWriterWritesThem(_ format: Format) throws {
        var random = SplitMix64(seed: 2026 &+ UInt64(format.rawValue.utf8.count))
        var writer = format.writer
        var samples = 0
        for _ in 0..<150 {
            let page = Self.page(&random)
            let skipping = Set(page.filter { _ in random.next() % 10 == 0 }.map(\.id))
            let expected = page.filter { !skipping.contains($0.id) }.map { format.general($0) }.joined()
            let columns = SampleColumns(SamplePage(samples: page, next: nil))
            #expect(try Self.written(columns, &writer, skipping: skipping) == expected)
            samples += page.count
        }
        #expect(writer.fast > samples / 4, "\(writer.fast) fast, \(writer.slow) general")
        #expect(writer.slow > 0)
    }
}
