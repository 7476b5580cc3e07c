import Foundation
import GATT
import Gateway
import Traces

/// `wearhouse import FILE`: a btsnoop capture (or a bleak text log) through the replay path, or into a trace.
struct ImportCommand: Command {
    let name = "import"
    let abstract = "Import a btsnoop capture (Android HCI snoop log, btmon -w) into the store or a trace."
    let usage =
        "<file> [--to-trace <out>] [--map <handle=uuid,...>] [--address <addr>] [--format btsnoop|bleak-log] "
        + "[--store <url>] [--subject <name>] [--speed 1|10|max] [--json]"
    var discussion: String {
        """
        Reads btsnoop captures of datalink 1002 (H4: Android's HCI snoop log), 2001 (the Linux monitor: btmon -w)
        and 1001 (HCI): L2CAP is reassembled, ATT notifications, indications and read responses are taken, handles
        are resolved from the capture's own discovery (characteristic declarations, Find Information), the device
        address from its connection events and Device Information from its reads. When the capture starts after
        discovery, name the handles: --map 0x0010=2a37,0x0013=2a53. --address names a device whose connection is
        not in the capture. Unknown or damaged records are counted and listed by number on stderr; only a capture
        with nothing usable fails. Without --to-trace the values go through the same path as 'wearhouse replay'
        (same options); with it, they are written as a trace (docs/trace-format.md) and nothing is stored.
        --format bleak-log reads the text logs of a bleak script ('[date time] ... Notify <uuid>: <hex>').
        """
    }
    let options = OptionTable(
        valued: [
            ("to-trace", "out", "Write a trace file instead of storing."),
            ("map", "handle=uuid,...", "Characteristic UUIDs of handles the capture does not discover."),
            ("address", "address", "The device address when the capture has no connection event."),
            ("format", "format", "btsnoop (default, detected) or bleak-log."),
            StoreLocation.option,
            ("subject", "name", "Tag every sample with this subject."),
            ("speed", "1|10|max", "Replay speed (default max)."),
        ],
        flags: [("json", "Print the replay summary as JSON.")])

    func run(_ arguments: Arguments, console: Console) async -> ExitCode {
        guard arguments.positionals.count == 1, let path = arguments.positionals.first else {
            console.error("give one capture file", hint: "Usage: wearhouse import \(usage)")
            return .usage
        }
        guard let speed = ReplaySpeed(arguments.option("speed") ?? "max") else {
            console.error("--speed must be a positive factor (1, 10) or max")
            return .usage
        }
        if let address = arguments.option("address"), !TraceLineCodec.isAddress(address) {
            console.error("--address must look like AA:BB:CC:DD:EE:FF, not '\(address)'")
            return .usage
        }
        var handleMap: [UInt16: BluetoothUUID] = [:]
        if let text = arguments.option("map") {
            do throws(BtsnoopImportError) {
                handleMap = try BtsnoopImportOptions.parseMap(text)
            } catch {
                console.error(error.reason)
                return .usage
            }
        }
        guard let data = FileManager.default.contents(atPath: path) else {
            console.error("cannot read \(path)")
            return FileManager.default.fileExists(atPath: path) ? .ioError : .noInput
        }
        let bytes = [UInt8](data)
        let base = URL(fileURLWithPath: path).lastPathComponent
        let recorder = "wearhouse \(WearhouseCLI.version)"
        let format = arguments.option("format") ?? (bytes.starts(with: Array("btsnoop".utf8)) ? "btsnoop" : "bleak-log")
        let records: [TraceRecord]
        switch format {
        case "btsnoop":
            do throws(BtsnoopImportError) {
                let result = try BtsnoopImporter.importCapture(
                    bytes,
                    options: BtsnoopImportOptions(
                        handleMap: handleMap, address: arguments.option("address"), origin: "btsnoop:\(base)",
                        recorder: recorder))
                console.err("\(path): \(result.report)\n")
                records = result.records
            } catch {
                if let report = error.report { console.err("\(path): \(report)\n") }
                console.error("\(path): \(error.reason)")
                return .dataError
            }
        case "bleak-log":
            do throws(BtsnoopImportError) {
                let result = try BleakLogImporter.importLog(
                    String(decoding: bytes, as: UTF8.self), address: arguments.option("address") ?? "00:00:00:00:00:00",
                    origin: "bleak-log:\(base)", recorder: recorder)
                console.err("\(path): \(result.report)\n")
                records = result.records
            } catch {
                console.error("\(path): \(error.reason)")
                return .dataError
            }
        default:
            console.error("--format must be btsnoop or bleak-log, not '\(format)'")
            return .usage
        }
        if let out = arguments.option("to-trace") {
            return Self.write(records, to: out, console: console)
        }
        var source = TraceRecordArray(records)
        return await TraceReplayRunner.run(
            &source, name: path, speed: speed, arguments: arguments, console: console, issues: { [] })
    }

    /// Writes `records` as a new trace (refusing to overwrite or append to an existing file).
    static func write(_ records: [TraceRecord], to out: String, console: Console) -> ExitCode {
        guard !FileManager.default.fileExists(atPath: out) else {
            console.error("\(out) exists; not overwriting it")
            return .ioError
        }
        guard case .header(let header)? = records.first else {
            console.error("internal: the import has no header")
            return .software
        }
        do throws(TraceError) {
            let writer = try TraceWriter(path: out, header: header)
            for record in records.dropFirst() { try writer.append(record) }
            try writer.close()
        } catch {
            console.error("\(error)")
            return .ioError
        }
        let values = records.filter { if case .value = $0 { true } else { false } }.count
        console.out("Wrote \(records.count) lines (\(values) values) to \(out)\n")
        return .success
    }
}
