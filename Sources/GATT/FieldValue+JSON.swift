internal import Support

extension FieldValue {
    /// Compact JSON text for this value, written by Support's ``JSONWriter``: doubles in their shortest round-trip
    /// form (`5.0` prints as `5.0`, `0.1` as `0.1`), non-finite doubles (which no decoder produces) as `null`, and
    /// strings escaped as everywhere else in wearhouse.
    public var json: String {
        var writer = JSONWriter()
        write(to: &writer)
        return writer.text
    }

    func write(to json: inout JSONWriter) {
        switch self {
        case .null: json.null()
        case .bool(let value): json.bool(value)
        case .integer(let value): json.integer(value)
        case .double(let value): json.double(value)
        case .string(let value): json.string(value)
        case .list(let values):
            json.beginArray()
            for value in values { value.write(to: &json) }
            json.endArray()
        case .object(let fields):
            json.beginObject()
            for field in fields {
                json.key(field.name)
                field.value.write(to: &json)
            }
            json.endObject()
        }
    }
}
