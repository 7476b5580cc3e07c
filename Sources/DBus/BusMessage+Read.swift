internal import CSystemd

/// Reading a message body into ``DBusValue``s, walking it generically with `peek_type`, `read_basic`,
/// `read_array`, `enter_container` and `exit_container`. The gotchas cited are the sd-bus gotchas of
/// `docs/bluez.md`.
extension BusMessage {
    /// Moves the read position back to the start of the body (a message passed on to another handler must be
    /// readable again).
    func rewind() throws(DBusError) {
        try check(sd_bus_message_rewind(pointer, 1), "sd_bus_message_rewind")
    }

    /// Reads every remaining value of the body (from the start for a fresh message).
    /// - Throws: ``DBusError`` of kind `system` when sd-bus fails to read (a malformed message), or of kind
    ///   `invalidSignature` when the body's signature cannot be parsed.
    func readAll() throws(DBusError) -> [DBusValue] {
        var values: [DBusValue] = []
        while let value = try readValue() { values.append(value) }
        return values
    }

    /// Reads the next value, or returns `nil` at the end of the body or of the current container.
    private func readValue() throws(DBusError) -> DBusValue? {
        var code: CChar = 0
        var contentsPointer: UnsafePointer<CChar>?
        guard try check(sd_bus_message_peek_type(pointer, &code, &contentsPointer), "sd_bus_message_peek_type") > 0
        else { return nil }
        // `contents` is borrowed from the message: copy it before moving on.
        let contents = contentsPointer.map { String(cString: $0) } ?? ""
        switch UInt8(bitPattern: code) {
        case UInt8(ascii: "y"): return .byte(try readBasic(code, UInt8(0)))
        case UInt8(ascii: "b"): return .boolean(try readBasic(code, Int32(0)) != 0)  // a C int (gotcha 1)
        case UInt8(ascii: "n"): return .int16(try readBasic(code, Int16(0)))
        case UInt8(ascii: "q"): return .uint16(try readBasic(code, UInt16(0)))
        case UInt8(ascii: "i"): return .int32(try readBasic(code, Int32(0)))
        case UInt8(ascii: "u"): return .uint32(try readBasic(code, UInt32(0)))
        case UInt8(ascii: "x"): return .int64(try readBasic(code, Int64(0)))
        case UInt8(ascii: "t"): return .uint64(try readBasic(code, UInt64(0)))
        case UInt8(ascii: "d"): return .double(try readBasic(code, Double(0)))
        case UInt8(ascii: "s"): return .string(try readText(code))
        case UInt8(ascii: "o"): return .objectPath(try readText(code))
        case UInt8(ascii: "g"): return .signature(try readText(code))
        case UInt8(ascii: "h"):
            // The message owns this descriptor (gotcha 3): keep a duplicate.
            return .unixFD(try DBusFileDescriptor(duplicating: try readBasic(code, Int32(-1))))
        case UInt8(ascii: "a"):
            return try readArray(contents: contents)
        case UInt8(ascii: "r"):
            try enter(code, contents)
            let members = try readAll()
            try exit()
            return .struct(members)
        case UInt8(ascii: "v"):
            try enter(code, contents)
            guard let inner = try readValue() else {
                throw DBusError(kind: .unexpectedReply, operation: "read variant", message: "empty variant")
            }
            try exit()
            return .variant(inner)
        default:
            throw DBusError(
                kind: .invalidSignature, operation: "sd_bus_message_peek_type",
                message: "unexpected type code \(UInt8(bitPattern: code))")
        }
    }

    private func readArray(contents: String) throws(DBusError) -> DBusValue {
        if contents == "y" { return .bytes(try readBytes()) }
        let arrayType = try DBusType(signature: "a" + contents)
        try enter(CChar(bitPattern: UInt8(ascii: "a")), contents)
        let value: DBusValue
        switch arrayType {
        case .dictionary(let key, let valueType):
            var entries: [DBusDictEntry] = []
            let entryContents = String(contents.dropFirst().dropLast())
            while try peekIsPresent() {
                try enter(CChar(bitPattern: UInt8(ascii: "e")), entryContents)
                guard let entryKey = try readValue(), let entryValue = try readValue() else {
                    throw DBusError(kind: .unexpectedReply, operation: "read dict entry", message: "incomplete entry")
                }
                try exit()
                entries.append(DBusDictEntry(key: entryKey, value: entryValue))
            }
            value = .dictionary(key: key, value: valueType, entries)
        case .array(let element):
            value = .array(element, try readAll())
        default:
            throw DBusError(kind: .invalidSignature, operation: "read array", message: "'a\(contents)' is not an array")
        }
        try exit()
        return value
    }

    private func readBytes() throws(DBusError) -> [UInt8] {
        var data: UnsafeRawPointer?
        var size = 0
        try check(
            sd_bus_message_read_array(pointer, CChar(bitPattern: UInt8(ascii: "y")), &data, &size),
            "sd_bus_message_read_array(y)")
        guard let data, size > 0 else { return [] }
        return Array(UnsafeRawBufferPointer(start: data, count: size))
    }

    private func peekIsPresent() throws(DBusError) -> Bool {
        try check(sd_bus_message_peek_type(pointer, nil, nil), "sd_bus_message_peek_type") > 0
    }

    private func readBasic<T>(_ code: CChar, _ initial: T) throws(DBusError) -> T {
        var value = initial
        let result = withUnsafeMutablePointer(to: &value) { sd_bus_message_read_basic(pointer, code, $0) }
        guard try check(result, "sd_bus_message_read_basic(\(String(UnicodeScalar(UInt8(bitPattern: code)))))") > 0
        else { throw endOfContainer() }
        return value
    }

    /// Strings, object paths and signatures: sd-bus writes a `const char *` borrowed from the message (gotcha 2).
    private func readText(_ code: CChar) throws(DBusError) -> String {
        var text: UnsafePointer<CChar>?
        let result = withUnsafeMutablePointer(to: &text) { sd_bus_message_read_basic(pointer, code, $0) }
        guard try check(result, "sd_bus_message_read_basic(\(String(UnicodeScalar(UInt8(bitPattern: code)))))") > 0,
            let text
        else { throw endOfContainer() }
        return String(cString: text)
    }

    private func enter(_ code: CChar, _ contents: String) throws(DBusError) {
        let result = contents.withCString { sd_bus_message_enter_container(pointer, code, $0) }
        guard try check(result, "sd_bus_message_enter_container(\(contents))") > 0 else { throw endOfContainer() }
    }

    private func exit() throws(DBusError) {
        try check(sd_bus_message_exit_container(pointer), "sd_bus_message_exit_container")
    }

    private func endOfContainer() -> DBusError {
        DBusError(kind: .unexpectedReply, operation: "read message", message: "value missing at end of container")
    }
}
