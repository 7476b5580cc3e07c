import GATT

/// `wearhouse decode <characteristic> <hex>`: decodes one characteristic value and prints its fields.
struct DecodeCommand: Command {
    let name = "decode"
    let abstract = "Decode a characteristic value given as hex."
    var discussion: String {
        """
        Bad input exits 65 with an error naming the field and byte offset; with --json the same error is also
        printed as a JSON object: {"error": kind, "field": ..., "offset": ..., "message": ...}.
        Field names and units are listed in README.md ("wearhouse decode").

        EXAMPLES:
          wearhouse decode heart-rate-measurement 163c1104
          wearhouse decode 2a53 --json 0600055003e8030000
          wearhouse decode csc-measurement 0302000000300101001000 --previous 0301000000100000000800
        """
    }

    struct Options: CommandOptions {
        var characteristic = ""
        /// The value's words, joined with spaces (`16 3c 11 04` may come as one argument or four).
        var hex: [String] = []
        var previous: String?
        var json = false
    }

    let syntax = CommandSyntax<Options>(
        positionals: [
            .required(
                "characteristic", \.characteristic,
                help: "A 16-bit or 128-bit UUID (2a37, 0x2A37, 00002a37-0000-1000-8000-00805f9b34fb) or a name: "
                    + "\(CharacteristicCatalog.all.map { $0.name }.joined(separator: ", "))."),
            .repeating(
                "hex", \.hex, required: true,
                help: "The value as sent, e.g. 163c1104 or \"16 3c 11 04\". Give - to read one value per line from "
                    + "standard input (one output line or JSON object per input line)."),
        ],
        options: [
            .flag("json", \.json, help: "Print one JSON object per value."),
            .text(
                "previous", value: "hex", \.previous,
                help: "An earlier CSC Measurement: also print the rollover-safe delta."),
        ])

    func run(_ options: Options, console: Console) async -> ExitCode {
        let characteristicName = options.characteristic
        guard let type = CharacteristicCatalog.type(named: characteristicName) else {
            console.error(
                "unknown characteristic \(echo(characteristicName))",
                hint:
                    "Known: \(CharacteristicCatalog.all.map { "\($0.name) (\($0.uuid.shortDescription))" }.joined(separator: ", "))."
            )
            return .usage
        }
        let hexArguments = options.hex
        var previous: CSCMeasurement?
        if let previousHex = options.previous {
            guard type == CSCMeasurement.self else {
                console.error("--previous applies to csc-measurement only")
                return .usage
            }
            do {
                previous = try CSCMeasurement(decoding: try Hex.bytes(previousHex))
            } catch {
                console.error("--previous: \(error)")
                return .dataError
            }
        }
        let json = options.json
        if hexArguments == ["-"] {
            var status = ExitCode.success
            var lineNumber = 0
            while let line = readLine() {
                lineNumber += 1
                let text = line.trimmingSpaces
                if text.isEmpty || text.hasPrefix("#") { continue }
                let result = decodeOne(
                    text, as: type, previous: previous, json: json, console: console, line: lineNumber)
                if result != .success { status = result }
            }
            return status
        }
        return decodeOne(
            hexArguments.joined(separator: " "), as: type, previous: previous, json: json, console: console, line: nil)
    }

    private func decodeOne(
        _ hex: String, as type: any CharacteristicValue.Type, previous: CSCMeasurement?, json: Bool,
        console: Console, line: Int?
    ) -> ExitCode {
        let header: [Field] = [
            Field("characteristic", .string(type.name)), Field("uuid", .string(type.uuid.description)),
        ]
        let location = line.map { "line \($0): " } ?? ""
        let bytes: [UInt8]
        do throws(Hex.ParseError) {
            bytes = try Hex.bytes(hex)
        } catch {
            console.error("\(location)\(error)")
            if json {
                console.out(
                    FieldValue.object(
                        header + [
                            Field("error", .string("invalid_hex")), Field("offset", .int(error.offset)),
                            Field("message", .string(error.description)),
                        ]
                    ).json + "\n")
            }
            return .dataError
        }
        switch CharacteristicCatalog.decode(bytes, as: type) {
        case .success(let value):
            var fields = value.fields
            if let previous, let measurement = value as? CSCMeasurement {
                fields.append(Field("delta", .object(measurement.delta(since: previous).fields)))
            }
            if json {
                console.out(FieldValue.object(header + fields).json + "\n")
            } else {
                console.out(Self.text(type: type, fields: fields))
            }
            return .success
        case .failure(let error):
            console.error("\(location)\(type.name) (\(type.uuid.shortDescription)): \(error)")
            if json {
                console.out(
                    FieldValue.object(
                        header + [
                            Field("error", .string(error.kind)),
                            Field("field", error.field.map { .string($0) } ?? .null),
                            Field("offset", .int(error.offset)),
                            Field("message", .string(error.description)),
                        ]
                    ).json + "\n")
            }
            return .dataError
        }
    }

    /// Aligned `name  value unit` lines under a title.
    static func text(type: any CharacteristicValue.Type, fields: [Field], indent: String = "  ") -> String {
        var out = indent.isEmpty || indent == "  " ? "\(type.name) (\(type.uuid.shortDescription))\n" : ""
        let width = (fields.map(\.name.count).max() ?? 0) + 2
        for field in fields {
            if case .object(let inner) = field.value {
                out += indent + field.name + ":\n" + text(type: type, fields: inner, indent: indent + "  ")
                continue
            }
            out += indent + field.name.padding(to: width) + textValue(field.value)
            if let unit = field.unit, field.value != .null { out += " " + unit }
            out += "\n"
        }
        return out
    }

    static func textValue(_ value: FieldValue) -> String {
        switch value {
        case .null: "-"
        case .string(let text): text
        case .list(let values): "[" + values.map(textValue).joined(separator: ", ") + "]"
        case .object(let fields):
            "{" + fields.map { "\($0.name): \(textValue($0.value))" }.joined(separator: ", ") + "}"
        default: value.json
        }
    }
}

extension String {
    var trimmingSpaces: String {
        let scalars = unicodeScalars.drop { $0 == " " || $0 == "\t" || $0 == "\r" }
        let trimmed = scalars.reversed().drop { $0 == " " || $0 == "\t" || $0 == "\r" }
        return String(String.UnicodeScalarView(trimmed.reversed()))
    }
}
