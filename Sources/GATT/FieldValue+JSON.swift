extension FieldValue {
    /// Compact JSON text for this value. Doubles print in their shortest round-trip form; non-finite doubles
    /// (which no decoder produces) print as `null`.
    public var json: String {
        var out = ""
        write(to: &out)
        return out
    }

    func write(to out: inout String) {
        switch self {
        case .null: out += "null"
        case .bool(let value): out += value ? "true" : "false"
        case .integer(let value): out += String(value)
        case .double(let value): out += value.isFinite ? Self.format(value) : "null"
        case .string(let value): Self.writeString(value, to: &out)
        case .list(let values):
            out += "["
            for (index, value) in values.enumerated() {
                if index > 0 { out += "," }
                value.write(to: &out)
            }
            out += "]"
        case .object(let fields):
            out += "{"
            for (index, field) in fields.enumerated() {
                if index > 0 { out += "," }
                Self.writeString(field.name, to: &out)
                out += ":"
                field.value.write(to: &out)
            }
            out += "}"
        }
    }

    /// `5.0` prints as `5.0`, `0.1` as `0.1`; integers stay recognisable as numbers with a fraction.
    static func format(_ value: Double) -> String {
        value.description
    }

    static func writeString(_ value: String, to out: inout String) {
        out += "\""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20:
                out += "\\u" + BluetoothUUID.hex(UInt64(scalar.value), digits: 4)
            default: out.unicodeScalars.append(scalar)
            }
        }
        out += "\""
    }
}
