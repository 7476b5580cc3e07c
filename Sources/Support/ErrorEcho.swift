/// How an error line shows a value that came from outside (an argument, a field of a file): quoted, control
/// characters escaped, and at most ``limit`` characters of it, so that a 1 MB bad value does not become a 1 MB
/// error line. A longer value shows its first ``limit`` characters, `...` and its size in bytes:
/// `'aaaa...' (1048576 bytes)`. Every error line that repeats such a value goes through ``echo(_:)``.
public enum ErrorEcho {
    /// The most characters of a value an error line repeats.
    public static let limit = 64

    /// `text` quoted for an error line, cut to ``limit`` characters (with its size in bytes when cut).
    public static func echo(_ text: some StringProtocol) -> String {
        var shown = ""
        var count = 0
        var cut = false
        for character in text {
            if count == limit {
                cut = true
                break
            }
            count += 1
            shown += escaped(character)
        }
        return cut ? "'\(shown)...' (\(text.utf8.count) bytes)" : "'\(shown)'"
    }

    private static func escaped(_ character: Character) -> String {
        guard character.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            return String(character)
        }
        return character.unicodeScalars.map { scalar in
            switch scalar {
            case "\n": "\\n"
            case "\r": "\\r"
            case "\t": "\\t"
            default:
                scalar.properties.generalCategory == .control
                    ? "\\u{\(String(scalar.value, radix: 16))}" : String(scalar)
            }
        }.joined()
    }
}
