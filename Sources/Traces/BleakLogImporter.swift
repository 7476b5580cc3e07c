internal import GATT
internal import Support

/// Reads the text logs of a bleak script (the Mi Band 4 logs in the team's real traces): one event a line,
/// `[YYYY-MM-DD HH:MM:SS] <emoji> Notify <uuid>: <hex>` and `... Read <uuid>: <hex>`. Other lines (discovery,
/// failures, progress) are counted and skipped. Times have whole seconds and no zone: they are taken as UTC.
public enum BleakLogImporter {
    public struct Report: Hashable, Sendable, CustomStringConvertible {
        public var lines = 0
        public var notifications = 0
        public var reads = 0
        /// Lines that are not values (discovery, failures, progress).
        public var other = 0
        /// Value lines that could not be read: line number and why.
        public var damaged: [BtsnoopReport.Problem] = []

        public var description: String {
            "\(lines) lines: \(notifications) notifications, \(reads) reads, \(other) other, \(damaged.count) damaged"
                + damaged.prefix(10).map { "\nline \($0.record): \($0.reason)" }.joined()
        }
    }

    /// Imports a log; `address` names the device (the logs do not).
    ///
    /// - Throws: ``BtsnoopImportError`` when no value line is found.
    public static func importLog(
        _ text: String, address: String = "00:00:00:00:00:00", origin: String? = nil, recorder: String? = nil
    ) throws(BtsnoopImportError) -> (records: [TraceRecord], report: Report) {
        var report = Report()
        var sensor = TraceSensor(address: address)
        var values: [TraceRecord] = []
        var first: Int64?
        for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            guard !line.allSatisfy({ $0 == " " || $0 == "\r" }) else { continue }
            report.lines += 1
            let words = line.split(separator: " ", omittingEmptySubsequences: true)
            guard words.count >= 5, words[0].hasPrefix("["), words[1].hasSuffix("]"),
                words[3] == "Notify" || words[3] == "Read", words[4].hasSuffix(":"),
                let uuid = BluetoothUUID(words[4].dropLast())
            else {
                report.other += 1
                continue
            }
            let number = index + 1
            guard let seconds = epochSeconds(date: words[0].dropFirst(), time: words[1].dropLast()),
                TraceLineCodec.wallMicroseconds.contains(seconds * 1_000_000)
            else {
                report.damaged.append(.init(record: number, reason: "unreadable time"))
                continue
            }
            let hex = words.count > 5 ? words[5...].joined() : ""
            guard let bytes = try? Hex.bytes(hex) else {
                report.damaged.append(.init(record: number, reason: "value is not hex"))
                continue
            }
            let start = first ?? seconds
            first = start
            let at = Timestamp(monotonic: .seconds(seconds - start), wallMicroseconds: seconds * 1_000_000)
            let kind: TraceValue.Kind = words[3] == "Notify" ? .notification : .read
            if kind == .read {
                report.reads += 1
                sensor.apply(read: bytes, of: uuid)
            } else {
                report.notifications += 1
                if !sensor.characteristics.contains(uuid) { sensor.characteristics.append(uuid) }
            }
            values.append(.value(TraceValue(kind: kind, address: address, characteristic: uuid, bytes: bytes, at: at)))
        }
        guard !values.isEmpty else { throw BtsnoopImportError("no Notify or Read lines in the log") }
        let header = TraceHeader(
            createdWallMicroseconds: first.map { $0 * 1_000_000 }, recorder: recorder, origin: origin)
        return ([.header(header), .sensor(sensor)] + values, report)
    }

    /// Seconds since the Unix epoch of `2026-02-01` `02:53:24` (UTC).
    static func epochSeconds(date: Substring, time: Substring) -> Int64? {
        let day = date.split(separator: "-").compactMap { Int64($0) }
        let clock = time.split(separator: ":").compactMap { Int64($0) }
        guard day.count == 3, clock.count == 3, (1...9999).contains(day[0]), (1...12).contains(day[1]),
            (1...31).contains(day[2]),
            (0...23).contains(clock[0]), (0...59).contains(clock[1]), (0...60).contains(clock[2])
        else { return nil }
        let days = CivilCalendar.days(year: day[0], month: day[1], day: day[2])
        return days * 86_400 + clock[0] * 3_600 + clock[1] * 60 + clock[2]
    }
}
