/// An exact fraction with 64-bit parts, always reduced and with a positive denominator.
///
/// Unit conversion factors are rationals so that converting never loses anything before the final rounding to
/// `Double`: a mile is exactly `201168/125` m, a kilocalorie exactly `4184` J (`docs/store-semantics.md`,
/// item 12). Every operation checks for overflow and throws ``Rational/Error/overflow`` instead of trapping or
/// rounding.
///
/// ```swift
/// let mile = try Rational(1_609_344, 1_000)   // 201168/125
/// mile.doubleValue                             // 1609.344
/// ```
public struct Rational: Hashable, Sendable, Comparable, CustomStringConvertible, ExpressibleByIntegerLiteral {
    /// Why a fraction could not be formed.
    public enum Error: Swift.Error, Equatable, Sendable, CustomStringConvertible {
        /// A part would not fit in `Int64`.
        case overflow
        /// A denominator of zero.
        case divisionByZero

        public var description: String {
            switch self {
            case .overflow: "the exact fraction does not fit in 64-bit integers"
            case .divisionByZero: "division by zero"
            }
        }
    }

    /// The numerator; carries the sign.
    public let numerator: Int64
    /// The denominator; always positive, and coprime with the numerator.
    public let denominator: Int64

    public static let zero: Rational = 0
    public static let one: Rational = 1

    /// `numerator / denominator`, reduced.
    ///
    /// - Throws: ``Error/divisionByZero`` when `denominator` is 0, ``Error/overflow`` when the reduced fraction
    ///   needs to negate `Int64.min`.
    public init(_ numerator: Int64, _ denominator: Int64 = 1) throws(Error) {
        guard denominator != 0 else { throw .divisionByZero }
        let divisor = Rational.gcd(numerator.magnitude, denominator.magnitude)
        var n = numerator / Int64(bitPattern: divisor)
        var d = denominator / Int64(bitPattern: divisor)
        if d < 0 {
            guard n != .min, d != .min else { throw .overflow }
            n = -n
            d = -d
        }
        self.numerator = n
        self.denominator = d
    }

    /// The decimal `text` exactly (`"180.15588000005408"` → 1125974250000338/6250000000000): digits with at most
    /// one `.`, an optional leading `-` and an optional exponent (`1e-5`); `nil` when it is not such a number or
    /// does not fit 64-bit parts.
    public init?(decimalText text: String) {
        var digits: Int64 = 0
        var scale = 0
        var exponent = 0
        var negative = false
        var seenPoint = false
        var seenDigit = false
        var characters = Substring(text)
        if characters.first == "-" {
            negative = true
            characters = characters.dropFirst()
        }
        var mantissa = characters
        if let e = characters.firstIndex(where: { $0 == "e" || $0 == "E" }) {
            mantissa = characters[..<e]
            guard let power = Int(characters[characters.index(after: e)...]), (-40...40).contains(power) else {
                return nil
            }
            exponent = power
        }
        for character in mantissa {
            if character == "." {
                guard !seenPoint else { return nil }
                seenPoint = true
                continue
            }
            guard let digit = character.wholeNumberValue, character.isASCII else { return nil }
            seenDigit = true
            let (shifted, o1) = digits.multipliedReportingOverflow(by: 10)
            let (sum, o2) = shifted.addingReportingOverflow(Int64(digit))
            guard !o1, !o2 else { return nil }
            digits = sum
            if seenPoint { scale += 1 }
        }
        guard seenDigit else { return nil }
        let power = exponent - scale
        let ten: Rational = 10
        guard let factor = try? ten.power(power),
            let value = try? Rational(negative ? -digits : digits).multiplied(by: factor)
        else { return nil }
        self = value
    }

    /// `value` as the shortest decimal that prints it (`98.6` → 493/5), or `nil` when it is not finite or that
    /// decimal does not fit 64-bit parts.
    public init?(decimal value: Double) {
        guard value.isFinite else { return nil }
        self.init(decimalText: "\(value)")
    }

    public init(integerLiteral value: Int64) {
        self.numerator = value
        self.denominator = 1
    }

    /// Stores parts already known to be reduced with a positive denominator.
    private init(reduced numerator: Int64, _ denominator: Int64) {
        self.numerator = numerator
        self.denominator = denominator
    }

    /// The nearest `Double` (exact when both parts are below 2^53).
    public var doubleValue: Double { Double(numerator) / Double(denominator) }

    public var description: String { denominator == 1 ? "\(numerator)" : "\(numerator)/\(denominator)" }

    /// `1 / self`.
    public func reciprocal() throws(Error) -> Rational {
        try Rational(denominator, numerator)
    }

    /// `self × other`, cross-reduced first so that intermediate products stay as small as the result allows.
    public func multiplied(by other: Rational) throws(Error) -> Rational {
        let g1 = Int64(bitPattern: Rational.gcd(numerator.magnitude, other.denominator.magnitude))
        let g2 = Int64(bitPattern: Rational.gcd(other.numerator.magnitude, denominator.magnitude))
        let (n, nOverflow) = (numerator / g1).multipliedReportingOverflow(by: other.numerator / g2)
        let (d, dOverflow) = (denominator / g2).multipliedReportingOverflow(by: other.denominator / g1)
        guard !nOverflow, !dOverflow else { throw .overflow }
        return Rational(reduced: n, d)
    }

    /// `self ÷ other`.
    public func divided(by other: Rational) throws(Error) -> Rational {
        try multiplied(by: other.reciprocal())
    }

    /// `self + other`.
    public func adding(_ other: Rational) throws(Error) -> Rational {
        let g = Int64(bitPattern: Rational.gcd(denominator.magnitude, other.denominator.magnitude))
        let (lhs, lOverflow) = numerator.multipliedReportingOverflow(by: other.denominator / g)
        let (rhs, rOverflow) = other.numerator.multipliedReportingOverflow(by: denominator / g)
        let (sum, sOverflow) = lhs.addingReportingOverflow(rhs)
        let (d, dOverflow) = (denominator / g).multipliedReportingOverflow(by: other.denominator)
        guard !lOverflow, !rOverflow, !sOverflow, !dOverflow else { throw .overflow }
        return try Rational(sum, d)
    }

    /// `self` raised to an integer power (negative powers take the reciprocal).
    ///
    /// - Throws: ``Error/divisionByZero`` for a negative power of zero, ``Error/overflow`` when a part overflows.
    public func power(_ exponent: Int) throws(Error) -> Rational {
        var base = exponent < 0 ? try reciprocal() : self
        var remaining = exponent.magnitude
        var result = Rational.one
        while remaining > 0 {
            if remaining & 1 == 1 { result = try result.multiplied(by: base) }
            remaining >>= 1
            if remaining > 0 { base = try base.multiplied(by: base) }
        }
        return result
    }

    /// `value × self`, rounded once per part: exact when the product is representable and both parts are
    /// below 2^53.
    public func applied(to value: Double) -> Double {
        if denominator == 1 { return value * Double(numerator) }
        return value * Double(numerator) / Double(denominator)
    }

    public static func < (lhs: Rational, rhs: Rational) -> Bool {
        // Compare n1/d1 < n2/d2 as n1·d2 < n2·d1 in 128 bits, which cannot overflow.
        let left = Int128(lhs.numerator) * Int128(rhs.denominator)
        let right = Int128(rhs.numerator) * Int128(lhs.denominator)
        return left < right
    }

    private static func gcd(_ a: UInt64, _ b: UInt64) -> UInt64 {
        var (x, y) = (a, b)
        while y != 0 { (x, y) = (y, x % y) }
        return x == 0 ? 1 : x
    }
}
