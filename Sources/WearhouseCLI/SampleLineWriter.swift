import Foundation
import GATT
import Health

/// The lines of quantity and category samples, written from pages of columns (``SampleColumns``) in one format:
/// each sample through its stream's ``SampleTemplate`` straight into the output's bytes, and every sample a template
/// does not take (a stream without one, a time outside the years 0-9999) through the general writer, as one sample
/// value and one line of text, which is the line the template would have written. The mirror image of
/// `import-samples`' ``FlatLineParser``.
struct SampleLineWriter {
    let shape: SampleTemplate.Shape
    /// The general writer: a sample's line, newline included.
    let general: (QuantitySample) -> String

    /// The templates made so far; ``slots`` number them.
    private var templates: [SampleTemplate] = []
    /// Per stream met: the template of its instants and of its intervals (an index in ``templates``), ``notMade``
    /// before its first sample of that kind, ``generalOnly`` when it has none.
    private var slots: [QuantitySeries: (instant: Int, interval: Int)] = [:]
    private static let notMade = -1
    private static let generalOnly = -2

    /// How many samples went through a template and how many through the general writer.
    private(set) var fast = 0
    private(set) var slow = 0

    init(shape: SampleTemplate.Shape, general: @escaping (QuantitySample) -> String) {
        self.shape = shape
        self.general = general
    }

    /// Appends the lines of `page`'s samples, leaving out those in `skipping`, to `output` (written out whenever it
    /// is full); returns how many samples were written.
    mutating func write(_ page: SampleColumns, skipping: Set<UUID> = [], to output: OutputBuffer)
        throws(PrivateFile.Failure) -> Int
    {
        // The page's streams, looked up once each.
        var pageSlots = page.streams.map { slots[$0] ?? (Self.notMade, Self.notMade) }
        var written = 0
        for index in 0..<page.count {
            let id = page.ids[index]
            if !skipping.isEmpty, skipping.contains(id) { continue }
            written += 1
            let stream = Int(page.streamIndices[index])
            let start = page.starts[index]
            let end = page.ends[index]
            let instant = start == end
            var slot = instant ? pageSlots[stream].instant : pageSlots[stream].interval
            if slot == Self.notMade {
                slot = make(page.streams[stream], instant: instant)
                if instant { pageSlots[stream].instant = slot } else { pageSlots[stream].interval = slot }
                slots[page.streams[stream]] = pageSlots[stream]
            }
            if slot >= 0, templates[slot].write(id, start, end, page.values[index], output) {
                fast += 1
            } else {
                output.append(general(page.sample(at: index)))
                slow += 1
            }
            try output.flushWhenFull()
        }
        return written
    }

    /// The template of `stream`'s instants or intervals, as a slot.
    private mutating func make(_ stream: QuantitySeries, instant: Bool) -> Int {
        guard let template = SampleTemplate(stream, instant: instant, shape: shape, general: general) else {
            return Self.generalOnly
        }
        templates.append(template)
        return templates.count - 1
    }
}

extension SampleLineWriter {
    /// `export`'s writer of `format` (csv, ndjson or fhir), whose general writer is ``ExportCommand/lines(_:format:)``.
    static func export(_ format: ExportCommand.Format) -> SampleLineWriter {
        let shape: SampleTemplate.Shape =
            switch format {
            case .csv: .csv { SamplesCommand.fields($0, valueName: false).map(\.value) }
            case .fhir: .json { .object(ExportCommand.fhirObservation($0)) }
            case .ndjson, .sqlite, .gpx: .json { .object(ExportCommand.openMHealth($0)) }
            }
        return SampleLineWriter(shape: shape) { ExportCommand.lines($0, format: format) }
    }

    /// `samples`' writer of `format` (json or csv), whose general writer is ``SamplesCommand/render(_:format:header:)``
    /// without the header.
    static func samples(_ format: SamplesCommand.Format) -> SampleLineWriter {
        let shape: SampleTemplate.Shape =
            format == .csv
            ? .csv { SamplesCommand.fields($0, valueName: false).map(\.value) }
            : .json { .object(SamplesCommand.fields($0)) }
        return SampleLineWriter(shape: shape) { SamplesCommand.render([$0], format: format, header: false) }
    }
}
