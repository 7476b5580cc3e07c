// The fuzz target over the two trace parsers (`make fuzz-traces`; Fuzz/FuzzerEntry.swift calls it). Built together
// with the GATT and Traces sources into one module (swiftc -sanitize=fuzzer,address), so it sees the module's
// internals.
//
// Input layout: byte 0 picks the parser.
//   - even: the rest is one trace line. Besides "never traps": a line that decodes re-encodes to a line that
//     decodes to the same record, a refusal names an offset inside the line, and whatever the reader's fast
//     decoder of value lines accepts, the general decoder decodes to the same record.
//   - odd: the rest is the body of a btsnoop capture (records), behind a header whose datalink byte 0 picks
//     (1001, 1002, 2001, or an unknown one). Besides "never traps": every record is accounted for, and an import
//     that succeeds yields records that survive the trace line format.

func fuzzTraces(_ input: [UInt8]) {
    guard let selector = input.first else { return }
    let payload = Array(input.dropFirst())
    if selector & 1 == 0 {
        fuzzLine(payload)
    } else {
        fuzzCapture(payload, datalink: [1001, 1002, 2001, 9999][Int(selector >> 1) % 4])
    }
}

nonisolated(unsafe) private var fastDecoder = ValueLineDecoder()

private func fuzzLine(_ line: [UInt8]) {
    if let fast = line.withUnsafeBufferPointer({ fastDecoder.decode($0) }) {
        precondition(
            (try? TraceLineCodec.decode(line)) == .record(.value(fast)),
            "the fast path differs on \(String(decoding: line, as: UTF8.self))")
    }
    do throws(TraceSyntaxError) {
        let decoded = try TraceLineCodec.decode(line)
        guard case .record(let record) = decoded else { return }
        let encoded = TraceLineCodec.encode(record)
        precondition(encoded.last == UInt8(ascii: "\n"), "an encoded line ends with a newline")
        let again = try? TraceLineCodec.decode(Array(encoded.dropLast()))
        precondition(again == .record(record), "re-encoding \(String(decoding: line, as: UTF8.self)) changed it")
    } catch {
        precondition(error.offset >= 0 && error.offset <= line.count, "offset out of bounds")
    }
}

private func fuzzCapture(_ body: [UInt8], datalink: UInt32) {
    let capture = BtsnoopWriter(rawDatalink: datalink).bytes + body
    do throws(BtsnoopImportError) {
        let result = try BtsnoopImporter.importCapture(capture)
        precondition(result.report.isComplete, "records unaccounted for: \(result.report)")
        _ = result.report.description
        for record in result.records {
            let line = TraceLineCodec.encode(record)
            precondition(
                (try? TraceLineCodec.decode(Array(line.dropLast()))) == .record(record), "an imported record changed")
        }
    } catch {
        if let report = error.report { precondition(report.isComplete, "records unaccounted for") }
    }
}
