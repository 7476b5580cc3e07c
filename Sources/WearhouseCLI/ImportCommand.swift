import Foundation
import GATT
import Gateway
import Traces

/// `wearhouse import FILE`: a btsnoop capture (or a bleak text log) through the replay path, or into a trace.
struct ImportCommand: Command {
    let name = "import"
    let abstract = "Import a btsnoop capture (Android HCI snoop log, btmon -w) into the store or a trace."
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

    /// What `--format` names.
    enum Format: String, CaseIterable, Sendable {
        case btsnoop
        case bleakLog = "bleak-log"
    }

    struct Options: CommandOptions {
        var file = ""
        var toTrace: String?
        var map: [UInt16: BluetoothUUID]?
        var address: String?
        var format: Format?
        var store: String?
        var subject: String?
        var speed = ReplaySpeed.max
        var json = false
    }

    let syntax = CommandSyntax<Options>(
        positionals: [.required("file", \.file, kind: .path, help: "The capture (or bleak log) to read.")],
        options: [
            .text("to-trace", value: "out", \.toTrace, kind: .path, help: "Write a trace file instead of storing."),
            .value(
                "map", value: "handle=uuid,...", \.map,
                help: "Characteristic UUIDs of handles the capture does not discover."
            ) { text throws(UsageError) in
                do throws(BtsnoopImportError) {
                    return try BtsnoopImportOptions.parseMap(text)
                } catch {
                    throw UsageError(error.reason)
                }
            },
            .value(
                "address", value: "address", \.address,
                help: "The device address when the capture has no connection event."
            ) { text throws(UsageError) in
                guard TraceLineCodec.isAddress(text) else {
                    throw UsageError("--address must look like AA:BB:CC:DD:EE:FF, not \(echo(text))")
                }
                return text
            },
            .choice("format", \.format, help: "What the file is (default: detected from its first bytes)."),
            StoreOptions.store(\.store),
            .text("subject", value: "name", \.subject, help: "Tag every sample with this subject."),
            ReplayCommand.speed(\.speed, help: "Replay speed."),
            .flag("json", \.json, help: "Print the replay summary as JSON."),
        ])

    func run(_ options: Options, console: Console) async -> ExitCode {
        let path = options.file
        let handleMap = options.map ?? [:]
        guard let data = FileManager.default.contents(atPath: path) else {
            console.error("cannot read \(path)")
            return FileManager.default.fileExists(atPath: path) ? .ioError : .noInput
        }
        let bytes = [UInt8](data)
        let base = URL(fileURLWithPath: path).lastPathComponent
        let recorder = "wearhouse \(WearhouseCLI.version)"
        let format: Format
        if let chosen = options.format {
            format = chosen
        } else {
            do throws(BtsnoopImportError) {
                format = try CaptureFormat.detect(bytes) == .btsnoop ? .btsnoop : .bleakLog
            } catch {
                console.error("\(path): \(error.reason)")
                return .dataError
            }
        }
        let records: [TraceRecord]
        switch format {
        case .btsnoop:
            do throws(BtsnoopImportError) {
                let result = try BtsnoopImporter.importCapture(
                    bytes,
                    options: BtsnoopImportOptions(
                        handleMap: handleMap, address: options.address, origin: "btsnoop:\(base)",
                        recorder: recorder))
                console.err("\(path): \(result.report)\n")
                records = result.records
            } catch {
                if let report = error.report { console.err("\(path): \(report)\n") }
                console.error("\(path): \(error.reason)")
                return .dataError
            }
        case .bleakLog:
            do throws(BtsnoopImportError) {
                let result = try BleakLogImporter.importLog(
                    String(decoding: bytes, as: UTF8.self), address: options.address ?? "00:00:00:00:00:00",
                    origin: "bleak-log:\(base)", recorder: recorder)
                console.err("\(path): \(result.report)\n")
                records = result.records
            } catch {
                let guessed = options.format == nil ? " (read as a bleak log: it does not start with 'btsnoop\\0')" : ""
                console.error("\(path): \(error.reason)\(guessed)")
                return .dataError
            }
        }
        if let out = options.toTrace {
            return Self.write(records, to: out, console: console)
        }
        var source = TraceRecordArray(records)
        return await TraceReplayRunner.run(
            &source, name: path, speed: options.speed, store: options.store, subject: options.subject,
            json: options.json, console: console, issues: { [] })
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
