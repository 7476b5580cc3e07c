/// Why a configuration could not be read: where (file and line, or the override) and what.
///
/// ```
/// wearhouse.conf:7: unknown key 'batchsize' in [writer]
/// override writer.batch-size: 0 is out of range (1...100000) for batch-size in [writer]
/// ```
public struct ConfigurationError: Error, Equatable, Sendable, CustomStringConvertible {
    /// `file:line`, `file`, or `override section.key`.
    public var location: String
    public var message: String

    public init(location: String, message: String) {
        self.location = location
        self.message = message
    }

    public var description: String { "\(location): \(message)" }
}

/// A parsed INI file: `[section]` headers and `key = value` lines, each remembering its line.
///
/// Lines starting with `#` or `;` and blank lines are ignored. A `#` inside a value is part of the value (no
/// trailing comments). Keys and section names are case-sensitive; spaces around keys and values are trimmed.
/// A key given twice in one section is an error, as is a key before the first section.
public struct INIFile: Equatable, Sendable {
    /// One `key = value` line.
    public struct Entry: Equatable, Sendable {
        public var section: String
        public var key: String
        public var value: String
        /// 1-based.
        public var line: Int
    }

    /// One `[section]` header.
    public struct Section: Equatable, Sendable {
        public var name: String
        /// 1-based.
        public var line: Int
    }

    /// The name used in error messages (usually the path).
    public var name: String
    /// The section headers in file order (a section may appear more than once).
    public var sections: [Section]
    public var entries: [Entry]

    /// Parses `text`; errors name `name` and the line.
    public init(parsing text: String, name: String) throws(ConfigurationError) {
        self.name = name
        sections = []
        entries = []
        var section: String?
        var lineNumber = 0
        for rawLine in text.split(separator: "\n", omittingEmptySubsequences: false) {
            lineNumber += 1
            let line = rawLine.trimmingSpaces
            if line.isEmpty || line.hasPrefix("#") || line.hasPrefix(";") { continue }
            let location = "\(name):\(lineNumber)"
            if line.hasPrefix("[") {
                guard line.hasSuffix("]"), line.count > 2 else {
                    throw ConfigurationError(location: location, message: "malformed section header '\(line)'")
                }
                let name = String(line.dropFirst().dropLast()).trimmingSpaces
                guard !name.isEmpty, !name.contains("[") else {
                    throw ConfigurationError(location: location, message: "malformed section header '\(line)'")
                }
                section = name
                sections.append(Section(name: name, line: lineNumber))
                continue
            }
            guard let equals = line.firstIndex(of: "=") else {
                throw ConfigurationError(location: location, message: "expected 'key = value', got '\(line)'")
            }
            let key = String(line[..<equals]).trimmingSpaces
            let value = String(line[line.index(after: equals)...]).trimmingSpaces
            guard !key.isEmpty else {
                throw ConfigurationError(location: location, message: "missing key before '='")
            }
            guard let section else {
                throw ConfigurationError(location: location, message: "key '\(key)' before any [section]")
            }
            if let first = entries.first(where: { $0.section == section && $0.key == key }) {
                throw ConfigurationError(
                    location: location,
                    message: "duplicate key '\(key)' in [\(section)] (first on line \(first.line))")
            }
            entries.append(Entry(section: section, key: key, value: value, line: lineNumber))
        }
    }
}

extension StringProtocol {
    /// Without leading and trailing spaces, tabs and carriage returns.
    var trimmingSpaces: String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\r" }
        guard let start = firstIndex(where: { !isSpace($0) }), let end = lastIndex(where: { !isSpace($0) }) else {
            return ""
        }
        return String(self[start...end])
    }
}
