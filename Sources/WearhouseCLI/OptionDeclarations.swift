/// What an option's (or a positional's) value is: how it is parsed and checked, and what help, man pages and shell
/// completions say about it.
public enum OptionKind: Sendable, Equatable {
    /// No value: `--json`.
    case flag
    /// Any text.
    case text
    /// A file or folder (completions offer paths).
    case path
    /// A sensor's Bluetooth address (completions offer the store's sensors).
    case sensor
    /// A whole number within the range.
    case integer(ClosedRange<Int>)
    /// A number of seconds within the range, fractions allowed.
    case seconds(ClosedRange<Double>)
    /// One of these words.
    case choice([String])
    /// Comma-separated values, and the option may be repeated (the values add up); each value one of these words,
    /// or any text when `nil`.
    case list([String]?)
}

/// One `--name` option as declared: everything about it except where it is stored.
public struct OptionInfo: Sendable, Equatable {
    /// The name after `--`.
    public let name: String
    /// What the value is called in usage and help (`file` in `--out <file>`); `nil` for a flag.
    public let valueName: String?
    public let help: String
    public let kind: OptionKind
    /// The value the command uses when the option is not given, spelled as on the command line; `nil` when there is
    /// none, or when it depends on something else (the help says what).
    public let defaultValue: String?
    /// Whether the command line must give the option.
    public let isRequired: Bool

    /// Whether the option may be given more than once.
    public var isRepeatable: Bool {
        if case .list = kind { true } else { false }
    }

    /// `--name <value>`, or `--name` for a flag.
    public var spelling: String {
        valueName.map { "--\(name) <\($0)>" } ?? "--\(name)"
    }
}

/// One positional argument as declared.
public struct PositionalInfo: Sendable, Equatable {
    /// What the argument is called in usage and help (`file` in `<file>`).
    public let name: String
    public let help: String
    /// ``OptionKind/text``, ``OptionKind/path``, ``OptionKind/sensor`` or ``OptionKind/choice(_:)``.
    public let kind: OptionKind
    public let isRequired: Bool
    /// Whether it takes every remaining argument.
    public let isRepeatable: Bool

    /// `<name>`, `<name>...` or `[<name>...]`.
    public var spelling: String {
        let word = "<\(name)>" + (isRepeatable ? "..." : "")
        return isRequired ? word : "[\(word)]"
    }
}

/// A constraint between a command's options, checked after parsing (option names without `--`).
public struct OptionRule: Sendable, Equatable {
    /// How many of ``options`` the command line must give.
    public enum Count: Sendable, Equatable {
        case atMostOne, exactlyOne, atLeastOne, all
    }

    public let count: Count
    public let options: [String]
    /// The option whose presence makes the rule apply; `nil` when it always applies.
    public let when: String?

    /// At most one of the options (`--days` or `--forever`).
    public static func exclusive(_ options: String...) -> OptionRule {
        OptionRule(count: .atMostOne, options: options, when: nil)
    }

    /// Exactly one of the options (`--address` or `--bus`).
    public static func oneOf(_ options: String...) -> OptionRule {
        OptionRule(count: .exactlyOne, options: options, when: nil)
    }

    /// At least one of the options (`--read`, `--write` or both).
    public static func anyOf(_ options: String...) -> OptionRule {
        OptionRule(count: .atLeastOne, options: options, when: nil)
    }

    /// When `option` is given, every one of `needed` must be too.
    public static func requires(_ option: String, _ needed: String...) -> OptionRule {
        OptionRule(count: .all, options: needed, when: option)
    }

    /// When `option` is given, at least one of `needed` must be too.
    public static func requires(_ option: String, anyOf needed: String...) -> OptionRule {
        OptionRule(count: .atLeastOne, options: needed, when: option)
    }

    /// What is wrong with a command line that gave the options `given`, or `nil` when the rule holds.
    func violation(given: Set<String>) -> String? {
        if let when, !given.contains(when) { return nil }
        let present = options.filter(given.contains)
        let missing = options.filter { !given.contains($0) }
        let needs = when.map { "--\($0) needs " } ?? "give "
        switch count {
        case .atMostOne where present.count > 1, .exactlyOne where present.count > 1:
            return "\(Self.list(present, "and")) cannot be used together"
        case .exactlyOne where present.isEmpty, .atLeastOne where present.isEmpty:
            return needs + Self.list(options, "or")
        case .all where !missing.isEmpty:
            return needs + Self.list(missing, "and")
        default:
            return nil
        }
    }

    /// `--a`, `--a or --b`, `--a, --b or --c`.
    static func list(_ names: [String], _ conjunction: String) -> String {
        let spelled = names.map { "--\($0)" }
        guard let last = spelled.last, spelled.count > 1 else { return spelled.joined() }
        return spelled.dropLast().joined(separator: ", ") + " \(conjunction) " + last
    }
}

/// Options a command's options struct is filled from: its properties start at their defaults.
public protocol CommandOptions: Sendable {
    init()
}

/// The options of a command that takes none (a group of subcommands).
public struct NoOptions: CommandOptions {
    public init() {}
}

/// One `--name` option of a command, bound to the property of the command's options struct that it writes.
public struct Option<Options: CommandOptions>: Sendable {
    public let info: OptionInfo
    /// Writes one occurrence's value (empty for a flag), or says why it does not fit.
    let apply: @Sendable (inout Options, String) throws(UsageError) -> Void
}

/// One positional argument of a command, bound to the property it writes.
public struct Positional<Options: CommandOptions>: Sendable {
    public let info: PositionalInfo
    let apply: @Sendable (inout Options, String) throws(UsageError) -> Void
}

extension Option {
    /// `--name`: sets the property to `true`.
    public static func flag(_ name: String, _ path: any WritableKeyPath<Options, Bool> & Sendable, help: String)
        -> Option
    {
        Option(info: declared(name, nil, help, .flag, nil, required: false)) { options, _ in
            options[keyPath: path] = true
        }
    }

    /// `--name <value>`: any text, `nil` when not given.
    public static func text(
        _ name: String, value: String, _ path: any WritableKeyPath<Options, String?> & Sendable,
        kind: OptionKind = .text, help: String
    ) -> Option {
        Option(info: declared(name, value, help, kind, nil, required: false)) { options, text in
            options[keyPath: path] = text
        }
    }

    /// `--name <value>`: any text; the property's initial value is the default (none when it is empty).
    public static func text(
        _ name: String, value: String, _ path: any WritableKeyPath<Options, String> & Sendable,
        kind: OptionKind = .text, required: Bool = false, help: String
    ) -> Option {
        let initial = Options()[keyPath: path]
        return Option(info: declared(name, value, help, kind, initial.isEmpty ? nil : initial, required: required)) {
            options, text in
            options[keyPath: path] = text
        }
    }

    /// `--name <n>`: a whole number within `range`; the property's initial value is the default.
    public static func integer(
        _ name: String, value: String = "n", in range: ClosedRange<Int>,
        _ path: any WritableKeyPath<Options, Int> & Sendable, help: String
    ) -> Option {
        let initial = String(Options()[keyPath: path])
        return Option(info: declared(name, value, help, .integer(range), initial, required: false)) {
            options, text throws(UsageError) in
            options[keyPath: path] = try wholeNumber(name, text, range)
        }
    }

    /// `--name <n>`: a whole number within `range`, `nil` when not given.
    public static func integer(
        _ name: String, value: String = "n", in range: ClosedRange<Int>,
        _ path: any WritableKeyPath<Options, Int?> & Sendable, help: String
    ) -> Option {
        Option(info: declared(name, value, help, .integer(range), nil, required: false)) {
            options, text throws(UsageError) in
            options[keyPath: path] = try wholeNumber(name, text, range)
        }
    }

    /// `--name <seconds>`: a duration in (possibly fractional) seconds within `range`; the property's initial value
    /// is the default.
    public static func seconds(
        _ name: String, in range: ClosedRange<Double>, _ path: any WritableKeyPath<Options, Duration> & Sendable,
        help: String
    ) -> Option {
        let initial = secondsText(Options()[keyPath: path])
        return Option(info: declared(name, "seconds", help, .seconds(range), initial, required: false)) {
            options, text throws(UsageError) in
            options[keyPath: path] = try duration(name, text, range)
        }
    }

    /// `--name <seconds>`: a duration in (possibly fractional) seconds within `range`, `nil` when not given.
    public static func seconds(
        _ name: String, in range: ClosedRange<Double>, _ path: any WritableKeyPath<Options, Duration?> & Sendable,
        help: String
    ) -> Option {
        Option(info: declared(name, "seconds", help, .seconds(range), nil, required: false)) {
            options, text throws(UsageError) in
            options[keyPath: path] = try duration(name, text, range)
        }
    }

    /// `--name <a|b|c>`: one of an enumeration's raw values; the property's initial value is the default.
    public static func choice<Value: RawRepresentable & CaseIterable & Sendable>(
        _ name: String, value: String? = nil, _ path: any WritableKeyPath<Options, Value> & Sendable,
        required: Bool = false, help: String
    ) -> Option where Value.RawValue == String {
        let words = Value.allCases.map(\.rawValue)
        let initial = Options()[keyPath: path].rawValue
        return Option(
            info: declared(
                name, value ?? words.joined(separator: "|"), help, .choice(words), initial, required: required)
        ) { options, text throws(UsageError) in
            options[keyPath: path] = try choose(name, text, as: Value.self)
        }
    }

    /// `--name <a|b|c>`: one of an enumeration's raw values, `nil` when not given.
    public static func choice<Value: RawRepresentable & CaseIterable & Sendable>(
        _ name: String, value: String? = nil, _ path: any WritableKeyPath<Options, Value?> & Sendable, help: String
    ) -> Option where Value.RawValue == String {
        let words = Value.allCases.map(\.rawValue)
        return Option(
            info: declared(name, value ?? words.joined(separator: "|"), help, .choice(words), nil, required: false)
        ) { options, text throws(UsageError) in
            options[keyPath: path] = try choose(name, text, as: Value.self)
        }
    }

    /// `--name <a,b>`, repeatable: comma-separated words (each one of `allowed`, when given), `nil` when not given.
    public static func list(
        _ name: String, value: String, _ path: any WritableKeyPath<Options, [String]?> & Sendable,
        allowed: [String]? = nil, help: String
    ) -> Option {
        list(name, value: value, path, allowed: allowed, help: help) { text throws(UsageError) in
            if let allowed, !allowed.contains(text) {
                throw UsageError("--\(name): \(echo(text)) is not one of \(allowed.joined(separator: ", "))")
            }
            return text
        }
    }

    /// `--name <a,b>`, repeatable: comma-separated values, each parsed by `element`; `nil` when not given.
    public static func list<Element: Sendable>(
        _ name: String, value: String, _ path: any WritableKeyPath<Options, [Element]?> & Sendable,
        allowed: [String]? = nil, help: String, element: @escaping @Sendable (String) throws(UsageError) -> Element
    ) -> Option {
        Option(info: declared(name, value, help, .list(allowed), nil, required: false)) {
            options, text throws(UsageError) in
            var values = options[keyPath: path] ?? []
            for item in text.split(separator: ",") { values.append(try element(String(item).trimmingSpaces)) }
            options[keyPath: path] = values
        }
    }

    /// `--name <value>`: text turned into a value by `parse` (which says what is wrong with it), `nil` when not given.
    public static func value<Value: Sendable>(
        _ name: String, value: String, _ path: any WritableKeyPath<Options, Value?> & Sendable,
        kind: OptionKind = .text, required: Bool = false, help: String,
        parse: @escaping @Sendable (String) throws(UsageError) -> Value
    ) -> Option {
        Option(info: declared(name, value, help, kind, nil, required: required)) { options, text throws(UsageError) in
            options[keyPath: path] = try parse(text)
        }
    }

    /// `--name <value>`: text turned into a value by `parse`; the property's initial value, spelled by `format`, is
    /// the default (not shown for a required option, whose initial value is only a placeholder).
    public static func value<Value: Sendable>(
        _ name: String, value: String, _ path: any WritableKeyPath<Options, Value> & Sendable,
        kind: OptionKind = .text, required: Bool = false, help: String, format: (Value) -> String,
        parse: @escaping @Sendable (String) throws(UsageError) -> Value
    ) -> Option {
        let initial = required ? nil : format(Options()[keyPath: path])
        return Option(info: declared(name, value, help, kind, initial, required: required)) {
            options, text throws(UsageError) in
            options[keyPath: path] = try parse(text)
        }
    }

    private static func declared(
        _ name: String, _ value: String?, _ help: String, _ kind: OptionKind, _ defaultValue: String?, required: Bool
    ) -> OptionInfo {
        OptionInfo(
            name: name, valueName: value, help: help, kind: kind, defaultValue: required ? nil : defaultValue,
            isRequired: required)
    }

    private static func wholeNumber(_ name: String, _ text: String, _ range: ClosedRange<Int>) throws(UsageError)
        -> Int
    {
        guard let number = Int(text), range.contains(number) else {
            throw UsageError("--\(name) must be \(describe(range)), not \(echo(text))")
        }
        return number
    }

    private static func duration(_ name: String, _ text: String, _ range: ClosedRange<Double>) throws(UsageError)
        -> Duration
    {
        guard let seconds = Double(text), range.contains(seconds) else {
            throw UsageError("--\(name) must be \(describe(range)), not \(echo(text))")
        }
        return .milliseconds(Int64((seconds * 1000).rounded()))
    }

    private static func choose<Value: RawRepresentable & CaseIterable>(_ name: String, _ text: String, as: Value.Type)
        throws(UsageError) -> Value where Value.RawValue == String
    {
        guard let value = Value(rawValue: text) else {
            let words = Value.allCases.map(\.rawValue)
            throw UsageError(
                "--\(name) must be \(words.dropLast().joined(separator: ", ")) or \(words.last ?? ""), not \(echo(text))"
            )
        }
        return value
    }
}

extension Positional {
    /// `<name>`: one argument, as given.
    public static func required(
        _ name: String, _ path: any WritableKeyPath<Options, String> & Sendable, kind: OptionKind = .text,
        help: String
    ) -> Positional {
        Positional(info: PositionalInfo(name: name, help: help, kind: kind, isRequired: true, isRepeatable: false)) {
            options, text in
            options[keyPath: path] = text
        }
    }

    /// `<name>`: one argument turned into a value by `parse`.
    public static func required<Value: Sendable>(
        _ name: String, _ path: any WritableKeyPath<Options, Value> & Sendable, kind: OptionKind = .text,
        help: String, parse: @escaping @Sendable (String) throws(UsageError) -> Value
    ) -> Positional {
        Positional(info: PositionalInfo(name: name, help: help, kind: kind, isRequired: true, isRepeatable: false)) {
            options, text throws(UsageError) in
            options[keyPath: path] = try parse(text)
        }
    }

    /// `<name>...` (or `[<name>...]` when not `required`): every remaining argument.
    public static func repeating(
        _ name: String, _ path: any WritableKeyPath<Options, [String]> & Sendable, kind: OptionKind = .text,
        required: Bool, help: String
    ) -> Positional {
        Positional(
            info: PositionalInfo(name: name, help: help, kind: kind, isRequired: required, isRepeatable: true)
        ) { options, text in
            options[keyPath: path].append(text)
        }
    }
}

/// `a whole number from 1 to 600`, `a whole number of 0 or more`.
func describe(_ range: ClosedRange<Int>) -> String {
    range.upperBound == Int.max
        ? "a whole number of \(range.lowerBound) or more"
        : "a whole number from \(range.lowerBound) to \(range.upperBound)"
}

/// `a number of seconds from 1 to 600`; `a positive number of seconds` for ``anySeconds``.
func describe(_ range: ClosedRange<Double>) -> String {
    range == anySeconds
        ? "a positive number of seconds"
        : "a number of seconds from \(decimal(range.lowerBound)) to \(decimal(range.upperBound))"
}

/// The range of a duration option that takes any positive number of seconds (up to some 30 years).
let anySeconds: ClosedRange<Double> = 0.001...999_999_999

/// `30`, `0.25`.
func decimal(_ value: Double) -> String {
    value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(value)
}

/// A duration in seconds as the command line spells it.
func secondsText(_ duration: Duration) -> String {
    let (seconds, attoseconds) = duration.components
    return decimal(Double(seconds) + Double(attoseconds) / 1e18)
}
