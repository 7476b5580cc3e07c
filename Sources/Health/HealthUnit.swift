/// A unit of measure written in HealthKit's unit-string grammar (`HKUnit(from:)`): `count/min`, `kcal`, `m/s`,
/// `mL/(kg*min)`.
///
/// A unit is a product of powers of named units, each with an optional metric prefix. Parsing yields the unit's
/// **dimension** (exponents of length, mass, time, count and percent) and its **scale**, the exact size of one
/// of it in the base units m, g, s, count and %. Two units are compatible when their dimensions are equal, and
/// the factor between them is the exact ratio of their scales.
///
/// ## Grammar
///
/// ```
/// unit     := product ( "/" product )*       -- left-associative: a/b/c = a/(b*c)
/// product  := power ( ("*" | "·") power )*    -- binds tighter than "/": mL/kg*min = mL/(kg*min)
/// power    := primary ( "^" ["-"] digits )?   -- a non-zero integer exponent, -99...99
/// primary  := symbol | "(" unit ")"
/// symbol   := [prefix] name
/// ```
///
/// `*` binding tighter than `/` follows HealthKit, where `mL/kg*min` is the usual spelling of the VO₂max unit.
///
/// Names: `count`, `m`, `g`, `s`, `min`, `hr` (also `h`), `d`, `J`, `cal`, `Cal` (= `kcal`, the food calorie),
/// `W`, `mi`, `ft`, `in`, `yd`, `%`, `Hz`, `mmHg`, `cmAq`, `atm`, `Pa`, `L`, `fl_oz_us`, `fl_oz_imp`, `pt_us`,
/// `pt_imp`, `lb`, `oz`, `st`, `K`, `degC`, `degF`, `mol`, `IU`, `S`. Metric prefixes `f p n mc m c d da h k M G T`
/// (`µ` is accepted for `mc`) apply to `m g s J cal W Pa L Hz mol S` only. A name that matches exactly wins over a
/// prefixed reading: `min` is minutes, `mi` is miles, `h` alone is hours, `d` alone is days, `mmHg` is millimetres
/// of mercury, `cmAq` centimetres of water. `mol<M>` (say `mmol<180.15588000005408>`, glucose) is a mole of a
/// substance of molar mass M g/mol, and so a mass: `mmol<180.15588000005408>/L` converts to `mg/dL`. Whitespace
/// and numbers outside an exponent or a molar mass are errors.
///
/// ## Temperatures
///
/// `K` is a unit like the others. `degC` and `degF` count from their own zeros (a value `v` is `(v + offset) ×
/// scale` kelvin, offsets 273.15 and 459.67), so they stand alone: `degC/min` is an error
/// (``UnitError/offsetUnitInCompound(_:)``), and ``conversionFactor(to:)`` between them throws, since no factor
/// converts them. ``convert(_:to:)`` converts exactly: a `Double` is read as the shortest decimal that prints it
/// (98.6 → 493/5), so 98.6 degF is exactly 37 degC.
///
/// ## Dimensions
///
/// Energy, pressure, volume and frequency are derived (`J` = kg·m²/s², `L` = dm³, `Hz` = 1/s), so `kg*m^2/s^2`
/// converts to `kcal`. **`count` is a dimension of its own**, as in HealthKit: `count/min` and `count/s` are
/// compatible with each other but not with `Hz` (1/s), and `count` is not compatible with `%` or with a
/// dimensionless ratio such as `m/m`. A heart rate is a number of beats per time, not a frequency.
///
/// ## Exactness
///
/// Scales are ``Rational``s with 64-bit parts: 1 mi = 1609.344 m, 1 cal = 4.184 J, 1 lb = 0.45359237 kg,
/// 1 mmHg = 133.322387415 Pa, all exact, and ``conversionFactor(to:)`` and ``convert(exactly:to:)`` are exact.
/// 64 bits hold about 19 decimal digits, which every catalog unit and every realistic pair of health units fit
/// with room to spare, but contrived pairs do not (`Tm` to `pm` is 10^24; `mcm/d^2` to `mi/ms^2` needs 25 digits).
/// Then the exact APIs throw ``UnitError/overflow(_:)``, while ``convert(_:to:)`` on a `Double` falls back to
/// the ratio of the two scales in `Double` (relative error about 1e-16) instead of failing. A unit whose own scale
/// does not fit (`Tm^3`, 10^36 m³) is a parse error.
///
/// ## Equality
///
/// Equality and hashing use the canonical ``description``: aliases are normalised (`h` → `hr`, `µ` → `mc`,
/// `·` → `*`), redundant parentheses dropped and a product after `/` parenthesised, so `km/h` == `km/hr` and
/// `mL/kg*min` == `mL/(kg*min)`. Units that are merely equivalent (`J` and `kg*m^2/s^2`) are not equal; they
/// convert with factor 1.
///
/// ```swift
/// let bpm = try HealthUnit("count/min")
/// try bpm.convert(120, to: HealthUnit("count/s"))   // 2.0
/// try HealthUnit("km/h").conversionFactor(to: HealthUnit("m/s"))   // 5/18
/// ```
public struct HealthUnit: Hashable, Sendable, CustomStringConvertible {
    /// Exponents of the base quantities. Energy and the other derived quantities are expressed through these.
    public struct Dimension: Hashable, Sendable, CustomStringConvertible {
        public var length: Int
        public var mass: Int
        public var time: Int
        /// Counted things: steps, beats. Kept apart from dimensionless ratios and from frequency.
        public var count: Int
        /// Percent: a ratio HealthKit keeps apart from `count`.
        public var percent: Int
        /// Thermodynamic temperature (`K`, and `degC`, `degF` alone).
        public var temperature: Int
        /// Amount of substance without a molar mass (`mmol`); `mmol<180.15588000005408>` is a mass.
        public var amount: Int
        /// Electrical conductance (`S`, `mcS`), a base of its own here (no ampere).
        public var conductance: Int
        /// International units (`IU`): substance-specific, so convertible only to themselves.
        public var internationalUnit: Int

        public init(
            length: Int = 0, mass: Int = 0, time: Int = 0, count: Int = 0, percent: Int = 0, temperature: Int = 0,
            amount: Int = 0, conductance: Int = 0, internationalUnit: Int = 0
        ) {
            self.length = length
            self.mass = mass
            self.time = time
            self.count = count
            self.percent = percent
            self.temperature = temperature
            self.amount = amount
            self.conductance = conductance
            self.internationalUnit = internationalUnit
        }

        /// No dimension at all (`m/m`).
        public static let none = Dimension()

        /// `length*time^-1`, `mass*length^2*time^-2`, or `none`.
        public var description: String {
            let parts = [
                ("length", length), ("mass", mass), ("time", time), ("count", count), ("percent", percent),
                ("temperature", temperature), ("amount", amount), ("conductance", conductance),
                ("internationalUnit", internationalUnit),
            ]
            .filter { $0.1 != 0 }
            .map { $0.1 == 1 ? $0.0 : "\($0.0)^\($0.1)" }
            return parts.isEmpty ? "none" : parts.joined(separator: "*")
        }

        fileprivate func combined(with other: Dimension, times multiplier: Int) -> Dimension? {
            func term(_ a: Int, _ b: Int) -> Int? {
                let (product, productOverflow) = b.multipliedReportingOverflow(by: multiplier)
                let (sum, sumOverflow) = a.addingReportingOverflow(product)
                return productOverflow || sumOverflow ? nil : sum
            }
            guard let length = term(length, other.length), let mass = term(mass, other.mass),
                let time = term(time, other.time), let count = term(count, other.count),
                let percent = term(percent, other.percent), let temperature = term(temperature, other.temperature),
                let amount = term(amount, other.amount), let conductance = term(conductance, other.conductance),
                let internationalUnit = term(internationalUnit, other.internationalUnit)
            else { return nil }
            return Dimension(
                length: length, mass: mass, time: time, count: count, percent: percent, temperature: temperature,
                amount: amount, conductance: conductance, internationalUnit: internationalUnit)
        }
    }

    /// The canonical unit string: parsing it gives back an equal unit.
    public let description: String
    /// What the unit measures.
    public let dimension: Dimension
    /// The size of one of this unit in the base units m, g, s, count and % (`km` → 1000, `kcal` → 4184000,
    /// since 1 J = 1000 g·m²/s²).
    public let scale: Rational
    /// Where the unit's zero lies, in the unit itself: a value `v` is `(v + offset) × scale` base units. Zero for
    /// every unit but `degC` (273.15) and `degF` (459.67), which are allowed only alone.
    public let offset: Rational

    /// Parses a HealthKit unit string.
    ///
    /// - Throws: ``UnitError`` naming what is wrong and the 1-based character where it is, e.g.
    ///   "unknown unit 'furlong' at character 1".
    public init(_ string: String) throws(UnitError) {
        var parser = UnitParser(string)
        let node = try parser.parseUnit()
        let evaluator = UnitEvaluator(source: string)
        let (dimension, scale) = try evaluator.evaluate(node)
        self.description = node.canonical
        self.dimension = dimension
        self.scale = scale
        if case .named(_, let unit) = node {
            self.offset = unit.offset
        } else {
            if let unit = node.offsetUnit { throw .offsetUnitInCompound(unit) }
            self.offset = .zero
        }
    }

    /// Whether values in this unit can be converted to `other` (their dimensions are equal).
    public func isCompatible(with other: HealthUnit) -> Bool {
        dimension == other.dimension
    }

    /// The exact factor `f` such that a value `v` in this unit is `v × f` in `other`.
    ///
    /// - Throws: ``UnitError/incompatible(from:fromDimension:to:toDimension:)`` when the dimensions differ,
    ///   ``UnitError/overflow(_:)`` when the factor does not fit 64-bit parts.
    public func conversionFactor(to other: HealthUnit) throws(UnitError) -> Rational {
        guard isCompatible(with: other) else {
            throw .incompatible(
                from: description, fromDimension: dimension.description, to: other.description,
                toDimension: other.dimension.description)
        }
        if self == other { return .one }
        guard offset == .zero, other.offset == .zero else {
            throw .offsetConversion(from: description, to: other.description)
        }
        do {
            return try scale.divided(by: other.scale)
        } catch {
            throw .overflow("the factor from '\(description)' to '\(other.description)'")
        }
    }

    /// `value` (in this unit) expressed in `other`.
    ///
    /// Uses the exact factor (one rounding per factor part, so `1 mi` gives exactly `1609.344` m); when that
    /// factor does not fit 64-bit parts, uses the ratio of the scales in `Double` rather than failing.
    ///
    /// - Throws: ``UnitError/incompatible(from:fromDimension:to:toDimension:)`` when the dimensions differ.
    public func convert(_ value: Double, to other: HealthUnit) throws(UnitError) -> Double {
        if self == other { return value }
        if offset != .zero || other.offset != .zero {
            guard isCompatible(with: other) else {
                throw .incompatible(
                    from: description, fromDimension: dimension.description, to: other.description,
                    toDimension: other.dimension.description)
            }
            // A value written in decimal (98.6 degF) is taken as that decimal, so that the conversion is exact.
            if let exact = Rational(decimal: value), let result = try? convertAffine(exact, to: other) {
                return result.doubleValue
            }
            return (value + offset.doubleValue) * (scale.doubleValue / other.scale.doubleValue)
                - other.offset.doubleValue
        }
        do {
            return try conversionFactor(to: other).applied(to: value)
        } catch .overflow {
            return value * (scale.doubleValue / other.scale.doubleValue)
        }
    }

    /// `value` (in this unit) expressed exactly in `other`.
    ///
    /// - Throws: as ``conversionFactor(to:)``, and ``UnitError/overflow(_:)`` when the result does not fit.
    public func convert(exactly value: Rational, to other: HealthUnit) throws(UnitError) -> Rational {
        if self != other, offset != .zero || other.offset != .zero, isCompatible(with: other) {
            do {
                return try convertAffine(value, to: other)
            } catch {
                throw .overflow("\(value) \(description) in '\(other.description)'")
            }
        }
        let factor = try conversionFactor(to: other)
        do {
            return try value.multiplied(by: factor)
        } catch {
            throw .overflow("\(value) \(description) in '\(other.description)'")
        }
    }

    /// `(value + offset) × scale / other.scale − other.offset`, exactly.
    private func convertAffine(_ value: Rational, to other: HealthUnit) throws(Rational.Error) -> Rational {
        let base = try value.adding(offset).multiplied(by: scale.divided(by: other.scale))
        return try base.adding(Rational(-other.offset.numerator, other.offset.denominator))
    }

    public static func == (lhs: HealthUnit, rhs: HealthUnit) -> Bool {
        lhs.description == rhs.description
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(description)
    }
}

/// Why a unit string could not be parsed or a conversion could not be made.
///
/// Positions are 1-based character offsets into the unit string; one past the end means "at the end".
public enum UnitError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The unit string was empty.
    case empty
    /// A name that is not a unit, with or without a prefix.
    case unknownUnit(String, at: Int)
    /// A metric prefix on a unit that takes none (`kmi`, `kcount`, `kCal`).
    case prefixNotAllowed(prefix: String, unit: String, at: Int)
    /// The grammar wanted `expected` at `at` and found `found` (a quoted character or "end of input").
    case syntax(expected: String, found: String, at: Int)
    /// An exact scale or factor does not fit 64-bit parts; the payload says which.
    case overflow(String)
    /// A conversion between units of different dimensions.
    case incompatible(from: String, fromDimension: String, to: String, toDimension: String)
    /// `degC` or `degF` inside a product, quotient or power: their zero is not zero, so they stand alone.
    case offsetUnitInCompound(String)
    /// A plain factor asked between units with different zeros (`degF` to `degC`); convert values instead.
    case offsetConversion(from: String, to: String)
    /// A molar mass (`mol<180.15588000005408>`) that is not a positive decimal, or on a unit other than `mol`.
    case molarMass(String, at: Int)

    public var description: String {
        switch self {
        case .empty:
            "empty unit string"
        case .unknownUnit(let name, let at):
            "unknown unit '\(name)' at character \(at)"
        case .prefixNotAllowed(let prefix, let unit, let at):
            "unit '\(unit)' takes no metric prefix, found '\(prefix)\(unit)' at character \(at)"
        case .syntax(let expected, let found, let at):
            "expected \(expected), found \(found) at character \(at)"
        case .overflow(let what):
            "\(what) does not fit an exact 64-bit fraction"
        case .incompatible(let from, let fromDimension, let to, let toDimension):
            "cannot convert '\(from)' (\(fromDimension)) to '\(to)' (\(toDimension)): incompatible units"
        case .offsetUnitInCompound(let unit):
            "'\(unit)' counts from its own zero and cannot be part of a compound unit or a power; use K"
        case .offsetConversion(let from, let to):
            "'\(from)' to '\(to)' is no plain factor (the units have different zeros); convert the value instead"
        case .molarMass(let text, let at):
            "molar mass '\(text)' at character \(at) must be a positive decimal number of grams per mole after mol"
        }
    }
}

// MARK: - Unit table

/// A named unit: its dimension, its scale in base units, and whether it takes metric prefixes.
private struct NamedUnit {
    let symbol: String
    let dimension: HealthUnit.Dimension
    let scale: Rational
    let prefixable: Bool
    /// The unit's zero in its own values (`degC`: 273.15); see ``HealthUnit/offset``.
    var offset: Rational = .zero
}

private enum UnitTable {
    static let energy = HealthUnit.Dimension(length: 2, mass: 1, time: -2)

    /// Scales are in base units (m, g, s, count, %): a joule is 1 kg·m²/s² = 1000 g·m²/s².
    static let units: [NamedUnit] = [
        NamedUnit(symbol: "count", dimension: .init(count: 1), scale: 1, prefixable: false),
        NamedUnit(symbol: "m", dimension: .init(length: 1), scale: 1, prefixable: true),
        NamedUnit(symbol: "g", dimension: .init(mass: 1), scale: 1, prefixable: true),
        NamedUnit(symbol: "s", dimension: .init(time: 1), scale: 1, prefixable: true),
        NamedUnit(symbol: "min", dimension: .init(time: 1), scale: 60, prefixable: false),
        NamedUnit(symbol: "hr", dimension: .init(time: 1), scale: 3600, prefixable: false),
        NamedUnit(symbol: "d", dimension: .init(time: 1), scale: 86_400, prefixable: false),
        NamedUnit(symbol: "J", dimension: energy, scale: 1000, prefixable: true),
        // Thermochemical calorie, 4.184 J, as HealthKit and the food labels use it.
        NamedUnit(symbol: "cal", dimension: energy, scale: 4184, prefixable: true),
        // The food calorie: 1 Cal = 1 kcal.
        NamedUnit(symbol: "Cal", dimension: energy, scale: 4_184_000, prefixable: false),
        NamedUnit(symbol: "mi", dimension: .init(length: 1), scale: fraction(1_609_344, 1000), prefixable: false),
        NamedUnit(symbol: "ft", dimension: .init(length: 1), scale: fraction(3048, 10_000), prefixable: false),
        NamedUnit(symbol: "in", dimension: .init(length: 1), scale: fraction(254, 10_000), prefixable: false),
        NamedUnit(symbol: "yd", dimension: .init(length: 1), scale: fraction(9144, 10_000), prefixable: false),
        NamedUnit(symbol: "%", dimension: .init(percent: 1), scale: 1, prefixable: false),
        NamedUnit(symbol: "Hz", dimension: .init(time: -1), scale: 1, prefixable: true),
        // Conventional millimetre of mercury: 133.322387415 Pa, and 1 Pa = 1000 g/(m·s²).
        NamedUnit(
            symbol: "mmHg", dimension: pressure,
            scale: fraction(133_322_387_415, 1_000_000),
            prefixable: false),
        NamedUnit(symbol: "L", dimension: .init(length: 3), scale: fraction(1, 1000), prefixable: true),
        // International avoirdupois pound, 0.45359237 kg; the ounce is 1/16 of it.
        NamedUnit(symbol: "lb", dimension: .init(mass: 1), scale: fraction(45_359_237, 100_000), prefixable: false),
        NamedUnit(symbol: "oz", dimension: .init(mass: 1), scale: fraction(45_359_237, 1_600_000), prefixable: false),
        // The stone: 14 lb, 6.35029318 kg.
        NamedUnit(symbol: "st", dimension: .init(mass: 1), scale: fraction(635_029_318, 100_000), prefixable: false),
        NamedUnit(symbol: "Pa", dimension: pressure, scale: 1000, prefixable: true),
        // Centimetre of water, 98.0665 Pa, and the standard atmosphere, 101325 Pa.
        NamedUnit(symbol: "cmAq", dimension: pressure, scale: fraction(196_133, 2), prefixable: false),
        NamedUnit(symbol: "atm", dimension: pressure, scale: 101_325_000, prefixable: false),
        NamedUnit(
            symbol: "W", dimension: .init(length: 2, mass: 1, time: -3), scale: 1000, prefixable: true),
        // US fluid ounce 29.5735295625 mL and pint 473.176473 mL; imperial 28.4130625 mL and 568.26125 mL.
        NamedUnit(
            symbol: "fl_oz_us", dimension: .init(length: 3), scale: fraction(295_735_295_625, 10_000_000_000_000_000),
            prefixable: false),
        NamedUnit(
            symbol: "fl_oz_imp", dimension: .init(length: 3), scale: fraction(284_130_625, 10_000_000_000_000),
            prefixable: false),
        NamedUnit(
            symbol: "pt_us", dimension: .init(length: 3), scale: fraction(473_176_473, 1_000_000_000_000),
            prefixable: false),
        NamedUnit(
            symbol: "pt_imp", dimension: .init(length: 3), scale: fraction(56_826_125, 100_000_000_000),
            prefixable: false),
        // Temperatures: K is the base; degC and degF have their zeros at 273.15 K and 459.67 degF below 0 K's.
        NamedUnit(symbol: "K", dimension: .init(temperature: 1), scale: 1, prefixable: false),
        NamedUnit(
            symbol: "degC", dimension: .init(temperature: 1), scale: 1, prefixable: false,
            offset: fraction(27_315, 100)),
        NamedUnit(
            symbol: "degF", dimension: .init(temperature: 1), scale: fraction(5, 9), prefixable: false,
            offset: fraction(45_967, 100)),
        // A mole without a molar mass; `mol<M>` (M in g/mol) is made from it as a mass of scale M.
        NamedUnit(symbol: "mol", dimension: .init(amount: 1), scale: 1, prefixable: true),
        NamedUnit(symbol: "IU", dimension: .init(internationalUnit: 1), scale: 1, prefixable: false),
        NamedUnit(symbol: "S", dimension: .init(conductance: 1), scale: 1, prefixable: true),
    ]

    static let pressure = HealthUnit.Dimension(length: -1, mass: 1, time: -2)

    static let bySymbol: [String: NamedUnit] = Dictionary(uniqueKeysWithValues: units.map { ($0.symbol, $0) })

    /// Alternative spellings and the canonical name they stand for.
    static let aliases: [String: String] = ["h": "hr"]

    /// Metric prefixes: canonical symbol and power of ten.
    static let prefixes: [(symbol: String, power: Int)] = [
        ("f", -15), ("p", -12), ("n", -9), ("mc", -6), ("m", -3), ("c", -2), ("d", -1),
        ("da", 1), ("h", 2), ("k", 3), ("M", 6), ("G", 9), ("T", 12),
    ]

    /// Prefix spellings that map to a canonical prefix (micro sign and Greek mu).
    static let prefixAliases: [String: String] = ["\u{00B5}": "mc", "\u{03BC}": "mc"]

    /// A constant fraction from the table above; the parts are small literals, so this cannot fail, and a
    /// failure would show up as a scale of 0 in the unit tests rather than a trap.
    private static func fraction(_ numerator: Int64, _ denominator: Int64) -> Rational {
        (try? Rational(numerator, denominator)) ?? .zero
    }
}

// MARK: - Syntax tree

private indirect enum UnitNode {
    /// The first unit with an offset (`degC`) anywhere in the tree.
    var offsetUnit: String? {
        switch self {
        case .named(_, let unit): unit.offset == .zero ? nil : unit.symbol
        case .power(let base, _): base.offsetUnit
        case .product(let factors): factors.lazy.compactMap(\.offsetUnit).first
        case .quotient(let numerator, let denominator): numerator.offsetUnit ?? denominator.offsetUnit
        }
    }

    /// A named unit with an optional prefix (canonical prefix symbol and its power of ten).
    case named(prefix: (symbol: String, power: Int)?, unit: NamedUnit)
    case power(UnitNode, Int)
    /// Two or more factors; never directly nested (nested products are flattened).
    case product([UnitNode])
    case quotient(UnitNode, UnitNode)

    var canonical: String {
        switch self {
        case .named(let prefix, let unit):
            return (prefix?.symbol ?? "") + unit.symbol
        case .power(let base, let exponent):
            if case .named = base { return "\(base.canonical)^\(exponent)" }
            return "(\(base.canonical))^\(exponent)"
        case .product(let factors):
            return factors.map { factor in
                if case .quotient = factor { return "(\(factor.canonical))" }
                return factor.canonical
            }.joined(separator: "*")
        case .quotient(let numerator, let denominator):
            switch denominator {
            case .product, .quotient: return "\(numerator.canonical)/(\(denominator.canonical))"
            case .named, .power: return "\(numerator.canonical)/\(denominator.canonical)"
            }
        }
    }
}

// MARK: - Parser

/// Recursive descent over the characters of a unit string; positions are 1-based.
private struct UnitParser {
    private let characters: [Character]
    private var index = 0

    init(_ string: String) {
        characters = Array(string)
    }

    mutating func parseUnit() throws(UnitError) -> UnitNode {
        guard !characters.isEmpty else { throw .empty }
        let node = try parseQuotient()
        if index < characters.count {
            throw .syntax(expected: "'*', '/' or the end", found: found(), at: index + 1)
        }
        return node
    }

    private var current: Character? { index < characters.count ? characters[index] : nil }

    private func found() -> String {
        current.map { "'\($0)'" } ?? "end of input"
    }

    private mutating func parseQuotient() throws(UnitError) -> UnitNode {
        var node = try parseProduct()
        while current == "/" {
            index += 1
            node = .quotient(node, try parseProduct())
        }
        return node
    }

    private mutating func parseProduct() throws(UnitError) -> UnitNode {
        var factors = [try parsePower()]
        while current == "*" || current == "·" {
            index += 1
            factors.append(try parsePower())
        }
        if factors.count == 1, let only = factors.first { return only }
        let flattened = factors.flatMap { factor -> [UnitNode] in
            if case .product(let inner) = factor { return inner }
            return [factor]
        }
        return .product(flattened)
    }

    private mutating func parsePower() throws(UnitError) -> UnitNode {
        let base = try parsePrimary()
        guard current == "^" else { return base }
        index += 1
        let start = index
        var text = ""
        if current == "-" {
            text.append("-")
            index += 1
        }
        var hasDigits = false
        while let character = current, character.isASCII, character.isNumber {
            text.append(character)
            hasDigits = true
            index += 1
        }
        let expected = "a non-zero integer exponent from -99 to 99"
        guard hasDigits else { throw .syntax(expected: expected, found: found(), at: index + 1) }
        guard let exponent = Int(text), exponent != 0, (-99...99).contains(exponent) else {
            throw .syntax(expected: expected, found: "'\(text)'", at: start + 1)
        }
        return .power(base, exponent)
    }

    private mutating func parsePrimary() throws(UnitError) -> UnitNode {
        guard let character = current else {
            throw .syntax(expected: "a unit", found: "end of input", at: index + 1)
        }
        if character == "(" {
            let open = index
            index += 1
            let inner = try parseQuotient()
            guard current == ")" else {
                if current == nil {
                    throw .syntax(
                        expected: "')' to close the '(' at character \(open + 1)", found: found(), at: index + 1)
                }
                throw .syntax(expected: "')'", found: found(), at: index + 1)
            }
            index += 1
            return inner
        }
        guard UnitParser.isSymbolCharacter(character) else {
            throw .syntax(expected: "a unit", found: found(), at: index + 1)
        }
        let start = index
        while let next = current, UnitParser.isSymbolCharacter(next) { index += 1 }
        let named = try UnitParser.resolve(String(characters[start..<index]), at: start + 1)
        guard current == "<" else { return named }
        let open = index
        index += 1
        var text = ""
        while let next = current, next != ">", text.count < 40 {
            text.append(next)
            index += 1
        }
        guard current == ">" else { throw .molarMass("<" + text, at: open + 1) }
        index += 1
        guard case .named(let prefix, let unit) = named, unit.symbol == "mol",
            text.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == ".") }),
            let mass = Rational(decimalText: text), mass > .zero
        else { throw .molarMass(text, at: open + 2) }
        return .named(
            prefix: prefix,
            unit: NamedUnit(symbol: "mol<\(text)>", dimension: .init(mass: 1), scale: mass, prefixable: true))
    }

    private static func isSymbolCharacter(_ character: Character) -> Bool {
        (character.isASCII && character.isLetter) || character == "%" || character == "_" || character == "\u{00B5}"
            || character == "\u{03BC}"
    }

    /// A whole name first (`min`, `mi`, `mmHg`, `h`), else a prefix plus a prefixable name.
    private static func resolve(_ symbol: String, at position: Int) throws(UnitError) -> UnitNode {
        let canonical = UnitTable.aliases[symbol] ?? symbol
        if let unit = UnitTable.bySymbol[canonical] { return .named(prefix: nil, unit: unit) }
        var prefixSpellings = UnitTable.prefixes.map { ($0.symbol, $0) }
        for (spelling, target) in UnitTable.prefixAliases {
            if let prefix = UnitTable.prefixes.first(where: { $0.symbol == target }) {
                prefixSpellings.append((spelling, prefix))
            }
        }
        var notPrefixable: (prefix: String, unit: String)?
        for (spelling, prefix) in prefixSpellings where symbol.hasPrefix(spelling) {
            let rest = String(symbol.dropFirst(spelling.count))
            guard let unit = UnitTable.bySymbol[rest] else { continue }
            if unit.prefixable { return .named(prefix: prefix, unit: unit) }
            notPrefixable = (spelling, rest)
        }
        if let notPrefixable {
            throw .prefixNotAllowed(prefix: notPrefixable.prefix, unit: notPrefixable.unit, at: position)
        }
        throw .unknownUnit(symbol, at: position)
    }
}

// MARK: - Evaluation

/// Computes dimension and exact scale of a syntax tree, mapping arithmetic overflow to ``UnitError/overflow(_:)``.
private struct UnitEvaluator {
    let source: String

    func evaluate(_ node: UnitNode) throws(UnitError) -> (HealthUnit.Dimension, Rational) {
        switch node {
        case .named(let prefix, let unit):
            guard let prefix else { return (unit.dimension, unit.scale) }
            return (
                unit.dimension,
                try checked { () throws(Rational.Error) in
                    let ten: Rational = 10
                    return try unit.scale.multiplied(by: ten.power(prefix.power))
                }
            )
        case .power(let base, let exponent):
            let (dimension, scale) = try evaluate(base)
            guard let raised = HealthUnit.Dimension.none.combined(with: dimension, times: exponent) else {
                throw .overflow("the dimension of '\(source)'")
            }
            return (raised, try checked { () throws(Rational.Error) in try scale.power(exponent) })
        case .product(let factors):
            var dimension = HealthUnit.Dimension.none
            var scale = Rational.one
            for factor in factors {
                let (factorDimension, factorScale) = try evaluate(factor)
                guard let combined = dimension.combined(with: factorDimension, times: 1) else {
                    throw .overflow("the dimension of '\(source)'")
                }
                dimension = combined
                scale = try checked { () throws(Rational.Error) in try scale.multiplied(by: factorScale) }
            }
            return (dimension, scale)
        case .quotient(let numerator, let denominator):
            let (top, topScale) = try evaluate(numerator)
            let (bottom, bottomScale) = try evaluate(denominator)
            guard let dimension = top.combined(with: bottom, times: -1) else {
                throw .overflow("the dimension of '\(source)'")
            }
            return (dimension, try checked { () throws(Rational.Error) in try topScale.divided(by: bottomScale) })
        }
    }

    private func checked(_ body: () throws(Rational.Error) -> Rational) throws(UnitError) -> Rational {
        do {
            return try body()
        } catch {
            throw .overflow("the scale of '\(source)'")
        }
    }
}
