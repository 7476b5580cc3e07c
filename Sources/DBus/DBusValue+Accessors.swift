/// Typed views of a ``DBusValue``. Each looks through variants (so property values read with `Get` or out of
/// `a{sv}` need no unwrapping) and returns `nil` when the value has another type.
extension DBusValue {
    /// The value inside any number of variants (`self` when this is not a variant).
    public var unwrapped: DBusValue {
        var value = self
        while case .variant(let inner) = value { value = inner }
        return value
    }

    /// The UInt8 (`y`), or `nil`.
    public var byteValue: UInt8? {
        if case .byte(let value) = unwrapped { value } else { nil }
    }

    /// The Bool (`b`), or `nil`.
    public var boolValue: Bool? {
        if case .boolean(let value) = unwrapped { value } else { nil }
    }

    /// The Int16 (`n`), or `nil`.
    public var int16Value: Int16? {
        if case .int16(let value) = unwrapped { value } else { nil }
    }

    /// The UInt16 (`q`), or `nil`.
    public var uint16Value: UInt16? {
        if case .uint16(let value) = unwrapped { value } else { nil }
    }

    /// The Int32 (`i`), or `nil`.
    public var int32Value: Int32? {
        if case .int32(let value) = unwrapped { value } else { nil }
    }

    /// The UInt32 (`u`), or `nil`.
    public var uint32Value: UInt32? {
        if case .uint32(let value) = unwrapped { value } else { nil }
    }

    /// The Int64 (`x`), or `nil`.
    public var int64Value: Int64? {
        if case .int64(let value) = unwrapped { value } else { nil }
    }

    /// The UInt64 (`t`), or `nil`.
    public var uint64Value: UInt64? {
        if case .uint64(let value) = unwrapped { value } else { nil }
    }

    /// The Double (`d`), or `nil`.
    public var doubleValue: Double? {
        if case .double(let value) = unwrapped { value } else { nil }
    }

    /// The text of a string, object path or signature.
    public var stringValue: String? {
        switch unwrapped {
        case .string(let text), .objectPath(let text), .signature(let text): text
        default: nil
        }
    }

    /// The path of an object path (`nil` for plain strings).
    public var objectPathValue: String? {
        if case .objectPath(let path) = unwrapped { path } else { nil }
    }

    /// The file descriptor (`h`), or `nil`.
    public var fileDescriptorValue: DBusFileDescriptor? {
        if case .unixFD(let descriptor) = unwrapped { descriptor } else { nil }
    }

    /// The elements of an array (any element type).
    public var arrayElements: [DBusValue]? {
        if case .array(_, let elements) = unwrapped { elements } else { nil }
    }

    /// The bytes of an `ay`.
    public var bytesValue: [UInt8]? {
        guard case .array(.byte, let elements) = unwrapped else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(elements.count)
        for element in elements {
            guard case .byte(let byte) = element else { return nil }
            bytes.append(byte)
        }
        return bytes
    }

    /// The strings of an `as` or `ao` (or `ag`).
    public var stringArrayValue: [String]? {
        guard let elements = arrayElements else { return nil }
        var strings: [String] = []
        strings.reserveCapacity(elements.count)
        for element in elements {
            guard let text = element.stringValue else { return nil }
            strings.append(text)
        }
        return strings
    }

    /// The entries of a dictionary (any key and value types), in wire order.
    public var dictionaryEntries: [DBusDictEntry]? {
        if case .dictionary(_, _, let entries) = unwrapped { entries } else { nil }
    }

    /// A dictionary with string (or object path) keys as a Swift dictionary; values are unwrapped from variants
    /// (`a{sv}` → `[String: DBusValue]`). Later duplicates win.
    public var stringKeyedValue: [String: DBusValue]? {
        guard let entries = dictionaryEntries else { return nil }
        var result: [String: DBusValue] = [:]
        for entry in entries {
            guard let key = entry.key.stringValue else { return nil }
            result[key] = entry.value.unwrapped
        }
        return result
    }

    /// The members of a struct.
    public var structMembers: [DBusValue]? {
        if case .struct(let members) = unwrapped { members } else { nil }
    }
}
