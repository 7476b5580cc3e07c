internal import CSystemd

/// Writing ``DBusValue``s into a message with the non-variadic sd-bus calls (`append_basic`, `append_array`,
/// `open_container`, `close_container`). The gotchas cited are the sd-bus gotchas of `docs/bluez.md`.
extension BusMessage {
    /// Appends `values` in order; the body's signature becomes their signatures concatenated.
    /// - Throws: ``DBusError`` of kind `invalidValue` for values that do not match their declared types,
    ///   or of kind `system` when sd-bus rejects a value (an invalid object path, bad UTF-8, fds not negotiated).
    func append(_ values: [DBusValue]) throws(DBusError) {
        for value in values {
            try value.validate()
            try appendValue(value)
        }
    }

    private func appendValue(_ value: DBusValue) throws(DBusError) {
        switch value {
        case .byte(let byte): try appendBasic(.byte, byte)
        case .boolean(let flag): try appendBasic(.boolean, Int32(flag ? 1 : 0))  // 'b' is a C int (gotcha 1)
        case .int16(let number): try appendBasic(.int16, number)
        case .uint16(let number): try appendBasic(.uint16, number)
        case .int32(let number): try appendBasic(.int32, number)
        case .uint32(let number): try appendBasic(.uint32, number)
        case .int64(let number): try appendBasic(.int64, number)
        case .uint64(let number): try appendBasic(.uint64, number)
        case .double(let number): try appendBasic(.double, number)
        case .string(let text): try appendText(.string, text)
        case .objectPath(let text): try appendText(.objectPath, text)
        case .signature(let text): try appendText(.signature, text)
        case .unixFD(let descriptor):
            // sd-bus duplicates the descriptor into the message; ours stays owned by `descriptor`.
            try appendBasic(.unixFD, descriptor.rawValue)
        case .array(.byte, let elements):
            try appendBytes(elements)
        case .array(let element, let elements):
            try openContainer(.array(element), contents: element.signature)
            for element in elements { try appendValue(element) }
            try closeContainer()
        case .dictionary(let key, let valueType, let entries):
            let entrySignature = key.signature + valueType.signature
            try openContainer(.dictionary(key: key, value: valueType), contents: "{" + entrySignature + "}")
            for entry in entries {
                try openRaw(code: UInt8(ascii: "e"), contents: entrySignature)
                try appendValue(entry.key)
                try appendValue(entry.value)
                try closeContainer()
            }
            try closeContainer()
        case .struct(let members):
            try openRaw(code: UInt8(ascii: "r"), contents: DBusValue.signature(of: members))
            for member in members { try appendValue(member) }
            try closeContainer()
        case .variant(let inner):
            try openContainer(.variant, contents: inner.signature)
            try appendValue(inner)
            try closeContainer()
        }
    }

    private func appendBasic<T>(_ type: DBusType, _ value: T) throws(DBusError) {
        var copy = value
        let result = withUnsafePointer(to: &copy) {
            sd_bus_message_append_basic(pointer, CChar(bitPattern: type.code), $0)
        }
        try check(result, "sd_bus_message_append_basic(\(type))")
    }

    /// Strings, object paths and signatures: `append_basic` takes the `char *` itself (gotcha 2).
    private func appendText(_ type: DBusType, _ text: String) throws(DBusError) {
        let result = text.withCString { sd_bus_message_append_basic(pointer, CChar(bitPattern: type.code), $0) }
        try check(result, "sd_bus_message_append_basic(\(type))")
    }

    /// `ay` in one call.
    private func appendBytes(_ elements: [DBusValue]) throws(DBusError) {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(elements.count)
        for element in elements {
            guard case .byte(let byte) = element else {
                throw DBusError.invalidValue("append ay", "array of y holds a \(element.type)")
            }
            bytes.append(byte)
        }
        let result = bytes.withUnsafeBytes { buffer in
            sd_bus_message_append_array(pointer, CChar(bitPattern: UInt8(ascii: "y")), buffer.baseAddress, buffer.count)
        }
        try check(result, "sd_bus_message_append_array(y)")
    }

    private func openContainer(_ type: DBusType, contents: String) throws(DBusError) {
        try openRaw(code: type.code, contents: contents)
    }

    /// Opens a container by its sd-bus code: `a`, `v`, `r` (struct) or `e` (dict entry).
    private func openRaw(code: UInt8, contents: String) throws(DBusError) {
        let result = contents.withCString { sd_bus_message_open_container(pointer, CChar(bitPattern: code), $0) }
        try check(result, "sd_bus_message_open_container(\(String(UnicodeScalar(code))), \(contents))")
    }

    private func closeContainer() throws(DBusError) {
        try check(sd_bus_message_close_container(pointer), "sd_bus_message_close_container")
    }
}
