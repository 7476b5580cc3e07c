/// What `wearhouse import` was given, told from the file's first bytes: a btsnoop capture starts with the magic
/// `btsnoop\0`; a bleak log is text. Anything else (an empty file, a binary file with a damaged magic) is named
/// as what it is rather than read as one of them.
public enum CaptureFormat: Hashable, Sendable {
    case btsnoop
    case bleakLog

    /// The format of `bytes`.
    ///
    /// - Throws: ``BtsnoopImportError`` for an empty file, a file cut inside the btsnoop magic, and a binary file
    ///   (a NUL byte or bytes that are not UTF-8 in its first 4 KiB) without the magic.
    public static func detect(_ bytes: [UInt8]) throws(BtsnoopImportError) -> CaptureFormat {
        if bytes.starts(with: Btsnoop.magic) { return .btsnoop }
        guard !bytes.isEmpty else {
            throw BtsnoopImportError("empty file: neither a btsnoop capture nor a bleak log")
        }
        if bytes.count < Btsnoop.magic.count, Btsnoop.magic.starts(with: bytes) {
            throw BtsnoopImportError(
                "truncated btsnoop capture: \(bytes.count) bytes, not even the 8-byte magic 'btsnoop\\0'")
        }
        let head = bytes.prefix(4096)
        // A cut at 4 KiB may split a UTF-8 sequence: the last character is left out of the check.
        var text = head[...]
        if bytes.count > head.count, let last = head.lastIndex(where: { $0 & 0xC0 != 0x80 }) {
            text = head[..<last]
        }
        let binary = head.contains(0) || String(validating: text, as: UTF8.self) == nil
        guard !binary else {
            let first = bytes.prefix(8).map { hex($0) }.joined(separator: " ")
            throw BtsnoopImportError(
                "not a btsnoop capture (its first bytes are \(first), not the magic 62 74 73 6e 6f 6f 70 00 "
                    + "'btsnoop\\0') and not a bleak log (it is binary, not text)")
        }
        if bytes.allSatisfy({ $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }) {
            throw BtsnoopImportError("blank file: neither a btsnoop capture nor a bleak log")
        }
        return .bleakLog
    }

    private static func hex(_ byte: UInt8) -> String {
        let digits = Array("0123456789abcdef")
        return String([digits[Int(byte >> 4)], digits[Int(byte & 0xF)]])
    }
}
