/// One D-Bus value of any type, as read from or written to a message.
///
/// Containers carry their element types, so an empty array still has a signature:
///
/// ```swift
/// let uuids: DBusValue = .array(.string, [])                         // as
/// let props: DBusValue = .vardict(["Powered": .boolean(true)])      // a{sv}
/// let pair: DBusValue = .struct([.objectPath("/a"), .uint16(23)])   // (oq)
/// ```
///
/// Arrays and dictionaries keep the order of the wire. ``type`` and ``signature`` are computed; appending a value
/// whose elements do not match the declared element type fails with a ``DBusError`` of kind `invalidValue`.
public indirect enum DBusValue: Hashable, Sendable, CustomStringConvertible {
    case byte(UInt8)
    case boolean(Bool)
    case int16(Int16)
    case uint16(UInt16)
    case int32(Int32)
    case uint32(UInt32)
    case int64(Int64)
    case uint64(UInt64)
    case double(Double)
    case string(String)
    /// An object path (`o`), e.g. `/org/bluez/hci0`.
    case objectPath(String)
    /// A type signature (`g`), e.g. `a{sv}`.
    case signature(String)
    /// A file descriptor (`h`), owned by the ``DBusFileDescriptor``.
    case unixFD(DBusFileDescriptor)
    /// An array (`aT`) of values whose type is the element type `T`.
    case array(DBusType, [DBusValue])
    /// A dictionary (`a{KV}`): entries in wire order, keys of the basic type `K`, values of type `V`.
    case dictionary(key: DBusType, value: DBusType, [DBusDictEntry])
    /// A struct (`(…)`) of one or more members.
    case `struct`([DBusValue])
    /// A variant (`v`): a value with its own type.
    case variant(DBusValue)

    /// The complete D-Bus type of this value.
    public var type: DBusType {
        switch self {
        case .byte: .byte
        case .boolean: .boolean
        case .int16: .int16
        case .uint16: .uint16
        case .int32: .int32
        case .uint32: .uint32
        case .int64: .int64
        case .uint64: .uint64
        case .double: .double
        case .string: .string
        case .objectPath: .objectPath
        case .signature: .signature
        case .unixFD: .unixFD
        case .array(let element, _): .array(element)
        case .dictionary(let key, let value, _): .dictionary(key: key, value: value)
        case .struct(let members): .struct(members.map(\.type))
        case .variant: .variant
        }
    }

    /// The signature of this value's type (`s`, `a{sv}`, `(oq)`).
    public var signature: String { type.signature }

    /// The signature of a list of values, as a message body carries it.
    public static func signature(of values: [DBusValue]) -> String {
        values.map(\.signature).joined()
    }

    // MARK: Builders

    /// `ay` from bytes (appended and read with sd-bus's fast array calls).
    public static func bytes(_ bytes: [UInt8]) -> DBusValue {
        .array(.byte, bytes.map { .byte($0) })
    }

    /// `as` from strings.
    public static func strings(_ strings: [String]) -> DBusValue {
        .array(.string, strings.map { .string($0) })
    }

    /// `ao` from object paths.
    public static func objectPaths(_ paths: [String]) -> DBusValue {
        .array(.objectPath, paths.map { .objectPath($0) })
    }

    /// `a{sv}` from a Swift dictionary: every value is wrapped in a variant; entries are sorted by key so that
    /// the wire form is deterministic.
    public static func vardict(_ dictionary: [String: DBusValue]) -> DBusValue {
        let entries = dictionary.sorted { $0.key < $1.key }.map {
            DBusDictEntry(key: .string($0.key), value: .variant($0.value))
        }
        return .dictionary(key: .string, value: .variant, entries)
    }

    /// `a{sv}` from ordered pairs (every value wrapped in a variant), keeping the given order.
    public static func vardict(ordered pairs: [(String, DBusValue)]) -> DBusValue {
        .dictionary(
            key: .string, value: .variant, pairs.map { DBusDictEntry(key: .string($0.0), value: .variant($0.1)) })
    }

    public var description: String {
        switch self {
        case .byte(let value): "y \(value)"
        case .boolean(let value): "b \(value)"
        case .int16(let value): "n \(value)"
        case .uint16(let value): "q \(value)"
        case .int32(let value): "i \(value)"
        case .uint32(let value): "u \(value)"
        case .int64(let value): "x \(value)"
        case .uint64(let value): "t \(value)"
        case .double(let value): "d \(value)"
        case .string(let value): "s \"\(value)\""
        case .objectPath(let value): "o \(value)"
        case .signature(let value): "g \(value)"
        case .unixFD(let value): "h \(value.rawValue)"
        case .array(let element, let values):
            "a\(element.signature) [\(values.map(\.description).joined(separator: ", "))]"
        case .dictionary(let key, let value, let entries):
            "a{\(key.signature)\(value.signature)} "
                + "{\(entries.map { "\($0.key): \($0.value)" }.joined(separator: ", "))}"
        case .struct(let members): "(\(members.map(\.description).joined(separator: ", ")))"
        case .variant(let inner): "v <\(inner)>"
        }
    }

    /// Checks that every container's contents match its declared types (recursively).
    /// - Throws: ``DBusError`` of kind `invalidValue` naming the first mismatch.
    public func validate() throws(DBusError) {
        switch self {
        case .array(let element, let values):
            for value in values {
                guard value.type == element else {
                    throw DBusError.invalidValue("validate", "array of \(element) holds a \(value.type)")
                }
                try value.validate()
            }
        case .dictionary(let key, let valueType, let entries):
            guard key.isBasic else { throw DBusError.invalidValue("validate", "dictionary key \(key) is not basic") }
            for entry in entries {
                guard entry.key.type == key, entry.value.type == valueType else {
                    throw DBusError.invalidValue(
                        "validate", "dictionary of {\(key)\(valueType)} holds {\(entry.key.type)\(entry.value.type)}")
                }
                try entry.value.validate()
            }
        case .struct(let members):
            guard !members.isEmpty else { throw DBusError.invalidValue("validate", "empty struct") }
            for member in members { try member.validate() }
        case .variant(let inner):
            try inner.validate()
        case .string(let text), .objectPath(let text), .signature(let text):
            guard !text.utf8.contains(0) else { throw DBusError.invalidValue("validate", "string contains NUL") }
        default:
            break
        }
    }
}

/// One entry of a D-Bus dictionary (`{KV}`).
public struct DBusDictEntry: Hashable, Sendable {
    /// The key (a basic type).
    public var key: DBusValue
    /// The value.
    public var value: DBusValue

    /// An entry `key` → `value`.
    public init(key: DBusValue, value: DBusValue) {
        self.key = key
        self.value = value
    }
}
