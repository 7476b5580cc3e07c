import Health
import Support
import TestSupport
import Testing

@Suite struct HealthUnitTests {
    // MARK: Parsing

    @Test func everyCatalogUnitParsesToItself() throws {
        for type in HealthTypeCatalog.all where !type.canonicalUnit.isEmpty {
            let unit = try HealthUnit(type.canonicalUnit)
            #expect(unit.description == type.canonicalUnit, "\(type)")
        }
    }

    @Test(arguments: [
        ("count/min", "count/min"),
        ("km/h", "km/hr"),
        ("km/hr", "km/hr"),
        ("\u{00B5}g", "mcg"),
        ("\u{03BC}s", "mcs"),
        ("m·s^-1", "m*s^-1"),
        ("(m)/(s)", "m/s"),
        ("mL/kg*min", "mL/(kg*min)"),
        ("mL/(kg*min)", "mL/(kg*min)"),
        ("kg*m^2/s^2", "kg*m^2/s^2"),
        ("(kg*m)*s", "kg*m*s"),
        ("m/s/s", "m/s/s"),
        ("m/(s/kg)", "m/(s/kg)"),
        ("(m/s)^2", "(m/s)^2"),
        ("kg*(m/s)^2", "kg*(m/s)^2"),
        ("(m/s)*kg", "(m/s)*kg"),
        ("%", "%"),
        ("mmHg", "mmHg"),
    ])
    func canonicalDescription(input: String, canonical: String) throws {
        let unit = try HealthUnit(input)
        #expect(unit.description == canonical)
        #expect(try HealthUnit(unit.description) == unit)
    }

    @Test func aliasesAreEqualAndHashAlike() throws {
        let units: Set<HealthUnit> = [try HealthUnit("km/h"), try HealthUnit("km/hr"), try HealthUnit("(km)/(hr)")]
        #expect(units.count == 1)
        // Equivalent but differently written units are not equal; they convert with factor 1.
        let joule = try HealthUnit("J")
        let derived = try HealthUnit("kg*m^2/s^2")
        #expect(joule != derived)
        #expect(try joule.conversionFactor(to: derived) == 1)
    }

    @Test func multiplicationBindsTighterThanDivisionAsInHealthKit() throws {
        let healthKit = try HealthUnit("mL/kg*min")
        let explicit = try HealthUnit("mL/(kg*min)")
        #expect(healthKit == explicit)
        #expect(healthKit.dimension == HealthUnit.Dimension(length: 3, mass: -1, time: -1))
        // a/b/c divides twice.
        #expect(try HealthUnit("m/s/s").conversionFactor(to: HealthUnit("m/s^2")) == 1)
    }

    @Test func exactNamesWinOverPrefixedReadings() throws {
        #expect(try HealthUnit("min").conversionFactor(to: HealthUnit("s")) == 60)
        #expect(try HealthUnit("mi").conversionFactor(to: HealthUnit("m")) == Rational(201_168, 125))
        #expect(try HealthUnit("h").conversionFactor(to: HealthUnit("s")) == 3600)
        #expect(try HealthUnit("d").conversionFactor(to: HealthUnit("hr")) == 24)
        #expect(try HealthUnit("hg").conversionFactor(to: HealthUnit("g")) == 100)
        #expect(try HealthUnit("dL").conversionFactor(to: HealthUnit("mL")) == 100)
        #expect(try HealthUnit("dam").conversionFactor(to: HealthUnit("m")) == 10)
    }

    // MARK: Conversions

    @Test func kilometresAndMilesToMetresAreExact() throws {
        let metre = try HealthUnit("m")
        #expect(try HealthUnit("km").conversionFactor(to: metre) == 1000)
        #expect(try HealthUnit("km").convert(1.5, to: metre) == 1500)
        let mile = try HealthUnit("mi")
        #expect(try mile.conversionFactor(to: metre) == Rational(1_609_344, 1000))
        #expect(try mile.convert(1, to: metre) == 1609.344)
        #expect(try mile.convert(exactly: 1, to: metre) == Rational(1_609_344, 1000))
        #expect(try metre.conversionFactor(to: mile) == Rational(125, 201_168))
    }

    @Test func kilocaloriesAndKilojoulesAreExact() throws {
        let kcal = try HealthUnit("kcal")
        let kJ = try HealthUnit("kJ")
        #expect(try kcal.conversionFactor(to: kJ) == Rational(4184, 1000))
        #expect(try kcal.convert(1, to: kJ) == 4.184)
        #expect(try kJ.conversionFactor(to: kcal) == Rational(1000, 4184))
        #expect(try HealthUnit("Cal").conversionFactor(to: kcal) == 1)
        #expect(try HealthUnit("cal").conversionFactor(to: HealthUnit("J")) == Rational(4184, 1000))
    }

    @Test func ratesAndSpeeds() throws {
        let perMinute = try HealthUnit("count/min")
        let perSecond = try HealthUnit("count/s")
        #expect(try perMinute.conversionFactor(to: perSecond) == Rational(1, 60))
        #expect(try perMinute.convert(120, to: perSecond) == 2)
        let kmh = try HealthUnit("km/h")
        let ms = try HealthUnit("m/s")
        #expect(try kmh.conversionFactor(to: ms) == Rational(10, 36))
        #expect(try kmh.convert(3.6, to: ms) == 1)
        #expect(try HealthUnit("km/hr").conversionFactor(to: ms) == Rational(5, 18))
        #expect(try HealthUnit("mi/hr").conversionFactor(to: ms) == Rational(1_609_344, 3_600_000))
    }

    @Test func millisecondsToSeconds() throws {
        #expect(try HealthUnit("ms").conversionFactor(to: HealthUnit("s")) == Rational(1, 1000))
        #expect(try HealthUnit("ms").convert(850, to: HealthUnit("s")) == 0.85)
        #expect(try HealthUnit("s").convert(1, to: HealthUnit("ms")) == 1000)
    }

    @Test(arguments: [
        ("fm", -15), ("pm", -12), ("nm", -9), ("mcm", -6), ("\u{00B5}m", -6), ("\u{03BC}m", -6), ("mm", -3),
        ("cm", -2), ("dm", -1), ("dam", 1), ("hm", 2), ("km", 3), ("Mm", 6), ("Gm", 9), ("Tm", 12),
    ])
    func lengthPrefixes(prefixed: String, power: Int) throws {
        let ten: Rational = 10
        #expect(try HealthUnit(prefixed).conversionFactor(to: HealthUnit("m")) == ten.power(power))
    }

    @Test(
        arguments: [
            ("mcg", "g", 1, 1_000_000), ("kg", "g", 1000, 1), ("ms", "s", 1, 1000), ("kJ", "J", 1000, 1),
            ("MJ", "J", 1_000_000, 1), ("kcal", "cal", 1000, 1), ("mL", "L", 1, 1000), ("dL", "L", 1, 10),
            ("kHz", "Hz", 1000, 1), ("mHz", "Hz", 1, 1000),
        ] as [(String, String, Int64, Int64)])
    func prefixesOnEveryPrefixableUnit(prefixed: String, base: String, numerator: Int64, denominator: Int64) throws {
        #expect(try HealthUnit(prefixed).conversionFactor(to: HealthUnit(base)) == Rational(numerator, denominator))
    }

    @Test(
        arguments: [
            ("kg*m^2/s^2", "J", 1, 1),
            ("kcal", "kg*m^2/s^2", 4184, 1),
            ("L", "m^3", 1, 1000),
            ("mL/(kg*min)", "L/(kg*hr)", 60, 1000),
            ("(m/s)^2", "m^2/s^2", 1, 1),
            ("mmHg", "kg/(m*s^2)", 133_322_387_415, 1_000_000_000),
            ("lb", "kg", 45_359_237, 100_000_000),
            ("oz", "g", 28_349_523_125, 1_000_000_000),
            ("lb", "oz", 16, 1),
            ("ft", "in", 12, 1),
            ("yd", "ft", 3, 1),
            ("mi", "yd", 1760, 1),
            ("in", "cm", 254, 100),
            ("d", "min", 1440, 1),
            ("hr", "min", 60, 1),
            ("Hz", "s^-1", 1, 1),
        ] as [(String, String, Int64, Int64)])
    func compoundConversions(from: String, to: String, numerator: Int64, denominator: Int64) throws {
        let factor = try Rational(numerator, denominator)
        let source = try HealthUnit(from)
        let target = try HealthUnit(to)
        #expect(source.isCompatible(with: target))
        #expect(try source.conversionFactor(to: target) == factor)
        #expect(try target.conversionFactor(to: source) == factor.reciprocal())
    }

    @Test func countIsItsOwnDimension() throws {
        let perMinute = try HealthUnit("count/min")
        #expect(!perMinute.isCompatible(with: try HealthUnit("Hz")))
        #expect(!(try HealthUnit("count")).isCompatible(with: try HealthUnit("%")))
        #expect(!(try HealthUnit("count")).isCompatible(with: try HealthUnit("m/m")))
        #expect(try HealthUnit("m/m").dimension == .none)
        #expect(try HealthUnit("km/m").conversionFactor(to: HealthUnit("mm/m")) == 1_000_000)
    }

    @Test func convertingToItselfIsTheIdentity() throws {
        for text in ["count/min", "kcal", "m/s", "ms", "%"] {
            let unit = try HealthUnit(text)
            #expect(try unit.convert(0.1, to: unit) == 0.1)
            #expect(try unit.conversionFactor(to: unit) == 1)
        }
    }

    // MARK: Errors

    @Test(arguments: [("m", "s"), ("count", "m"), ("kcal", "m"), ("count/min", "Hz"), ("%", "count")])
    func incompatibleUnitsAreErrorsNamingBoth(from: String, to: String) throws {
        let source = try HealthUnit(from)
        let target = try HealthUnit(to)
        #expect(!source.isCompatible(with: target))
        let error = #expect(throws: UnitError.self) { try source.convert(1, to: target) }
        guard case .incompatible(let fromUnit, _, let toUnit, _) = error else {
            Issue.record("expected .incompatible, got \(String(describing: error))")
            return
        }
        #expect(fromUnit == from)
        #expect(toUnit == to)
        #expect(error?.description.contains("'\(from)'") == true)
        #expect(error?.description.contains("'\(to)'") == true)
    }

    @Test func incompatibleMessageNamesDimensions() throws {
        let error = #expect(throws: UnitError.self) { try HealthUnit("kcal").conversionFactor(to: HealthUnit("m")) }
        #expect(
            error?.description == "cannot convert 'kcal' (length^2*mass*time^-2) to 'm' (length): incompatible units")
    }

    @Test(arguments: [
        ("furlong", UnitError.unknownUnit("furlong", at: 1)),
        ("count/furlong", .unknownUnit("furlong", at: 7)),
        ("kg*m^2/fortnight^2", .unknownUnit("fortnight", at: 8)),
        ("", .empty),
        ("m/", .syntax(expected: "a unit", found: "end of input", at: 3)),
        ("/s", .syntax(expected: "a unit", found: "'/'", at: 1)),
        ("m^", .syntax(expected: "a non-zero integer exponent from -99 to 99", found: "end of input", at: 3)),
        ("m^x", .syntax(expected: "a non-zero integer exponent from -99 to 99", found: "'x'", at: 3)),
        ("m^-", .syntax(expected: "a non-zero integer exponent from -99 to 99", found: "end of input", at: 4)),
        ("m^0", .syntax(expected: "a non-zero integer exponent from -99 to 99", found: "'0'", at: 3)),
        ("m^100", .syntax(expected: "a non-zero integer exponent from -99 to 99", found: "'100'", at: 3)),
        ("(m/s", .syntax(expected: "')' to close the '(' at character 1", found: "end of input", at: 5)),
        ("m)", .syntax(expected: "'*', '/' or the end", found: "')'", at: 2)),
        ("m s", .syntax(expected: "'*', '/' or the end", found: "' '", at: 2)),
        ("2m", .syntax(expected: "a unit", found: "'2'", at: 1)),
        ("1/s", .syntax(expected: "a unit", found: "'1'", at: 1)),
        ("m^2^3", .syntax(expected: "'*', '/' or the end", found: "'^'", at: 4)),
        ("kcount", .prefixNotAllowed(prefix: "k", unit: "count", at: 1)),
        ("m/kmi", .prefixNotAllowed(prefix: "k", unit: "mi", at: 3)),
        ("kCal", .prefixNotAllowed(prefix: "k", unit: "Cal", at: 1)),
        ("Km", .unknownUnit("Km", at: 1)),
        ("Tm^3", .overflow("the scale of 'Tm^3'")),
    ])
    func parseErrorsSayWhatAndWhere(input: String, expected: UnitError) {
        let error = #expect(throws: UnitError.self) { try HealthUnit(input) }
        #expect(error == expected)
    }

    @Test func parseErrorMessages() {
        let unknown = #expect(throws: UnitError.self) { try HealthUnit("furlong") }
        #expect(unknown?.description == "unknown unit 'furlong' at character 1")
        let syntax = #expect(throws: UnitError.self) { try HealthUnit("mL/(kg*min") }
        #expect(
            syntax?.description == "expected ')' to close the '(' at character 4, found end of input at character 11")
        let prefix = #expect(throws: UnitError.self) { try HealthUnit("kcount") }
        #expect(prefix?.description == "unit 'count' takes no metric prefix, found 'kcount' at character 1")
    }

    @Test func factorsTooLargeForExactArithmeticAreErrors() throws {
        let tera = try HealthUnit("Tm")
        let pico = try HealthUnit("pm")
        #expect(throws: UnitError.overflow("the factor from 'Tm' to 'pm'")) { try tera.conversionFactor(to: pico) }
        #expect(throws: UnitError.self) { try tera.convert(exactly: 1, to: pico) }
        // The Double conversion falls back to the ratio of the scales.
        #expect(try tera.convert(2, to: pico) == 2e24)
        // Cross-reduction keeps products that cancel exact.
        #expect(try HealthUnit("Tm*pm").conversionFactor(to: HealthUnit("m^2")) == 1)
    }

    // MARK: Properties

    /// Random pairs of compatible units: built from the same shape with random members of each dimension.
    @Test func randomCompatiblePairsConvertConsistently() throws {
        let lengths = ["m", "km", "cm", "mm", "mcm", "mi", "ft", "in", "yd", "dam"]
        let masses = ["g", "kg", "mg", "mcg", "lb", "oz"]
        let times = ["s", "ms", "min", "hr", "h", "d", "mcs"]
        let energies = ["J", "kJ", "cal", "kcal", "Cal", "kg*m^2/s^2"]
        let volumes = ["L", "mL", "dL", "m^3", "cm^3"]
        let shapes: [([[String]], (([String]) -> String))] = [
            ([lengths], { $0[0] }),
            ([lengths, times], { "\($0[0])/\($0[1])" }),
            ([["count"], times], { "count/\($0[1])" }),
            ([energies, times], { "\($0[0])/\($0[1])" }),
            ([volumes, masses, times], { "\($0[0])/(\($0[1])*\($0[2]))" }),
            ([masses, lengths], { "\($0[0])*\($0[1])^2" }),
            ([lengths, times], { "\($0[0])/\($0[1])^2" }),
            ([energies, masses], { "\($0[0])/\($0[1])" }),
            ([["mmHg"], masses, lengths, times], { _ in "mmHg" }),
        ]
        var random = SplitMix64(seed: 0x5EED_0001)
        var exact = 0
        for _ in 0..<2000 {
            let (pools, build) = random.pick(shapes)
            func pick() -> String { build(pools.map { random.pick($0) }) }
            let a = try HealthUnit(pick())
            let b = try HealthUnit(pick())
            let c = try HealthUnit(pick())
            #expect(a.isCompatible(with: b))
            // Contrived pairs (mcm/d^2 against mi/ms^2) may not have an exact 64-bit factor; most do.
            if let ab = try? a.conversionFactor(to: b), let ba = try? b.conversionFactor(to: a),
                let bc = try? b.conversionFactor(to: c), let ac = try? a.conversionFactor(to: c)
            {
                exact += 1
                #expect(try ab.multiplied(by: ba) == 1, "\(a) <-> \(b)")
                if let abc = try? ab.multiplied(by: bc) { #expect(abc == ac, "\(a) \(b) \(c)") }
            }
            let value = Double(random.next() % 1_000_000) / 997 + 0.001
            let there = try a.convert(value, to: b)
            let back = try b.convert(there, to: a)
            #expect(abs(back - value) <= 1e-12 * abs(value), "\(value) \(a) -> \(b) -> \(a) gave \(back)")
            let viaScales = value * a.scale.doubleValue / b.scale.doubleValue
            #expect(abs(there - viaScales) <= 1e-12 * abs(viaScales), "\(value) \(a) -> \(b)")
        }
        #expect(exact > 1500)
    }

    @Test func randomIncompatiblePairsThrow() throws {
        let groups = [
            ["m", "km", "mi"], ["s", "min", "hr"],
            ["g", "lb"], ["kcal", "kJ"], ["count", "count/s"], ["%"], ["Hz", "count/min"],
        ]
        var random = SplitMix64(seed: 42)
        for _ in 0..<500 {
            let i = Int(random.next() % UInt64(groups.count))
            var j = Int(random.next() % UInt64(groups.count))
            if i == j { j = (j + 1) % groups.count }
            let a = try HealthUnit(random.pick(groups[i]))
            let b = try HealthUnit(random.pick(groups[j]))
            if i == 4 && j == 6 || i == 6 && j == 4 {
                // count/s and count/min share a dimension across these two groups.
                continue
            }
            #expect(!a.isCompatible(with: b), "\(a) vs \(b)")
            #expect(throws: UnitError.self) { try a.convert(1, to: b) }
        }
    }
}

@Suite struct RationalTests {
    @Test func reducesAndNormalisesSign() throws {
        let r = try Rational(1_609_344, 1000)
        #expect(r.numerator == 201_168)
        #expect(r.denominator == 125)
        #expect(try Rational(3, -6) == Rational(-1, 2))
        #expect(try Rational(0, -5) == 0)
        #expect(try Rational(-4, -8).description == "1/2")
        #expect(Rational(integerLiteral: 7).description == "7")
    }

    @Test func arithmetic() throws {
        let half = try Rational(1, 2)
        let third = try Rational(1, 3)
        #expect(try half.adding(third) == Rational(5, 6))
        #expect(try half.multiplied(by: third) == Rational(1, 6))
        #expect(try half.divided(by: third) == Rational(3, 2))
        #expect(try half.power(-3) == 8)
        #expect(try third.power(0) == 1)
        #expect(half > third)
        #expect(try Rational(-1, 2) < third)
        #expect(half.doubleValue == 0.5)
        #expect(try Rational(1, 3).applied(to: 3) == 1)
    }

    @Test func errorsInsteadOfTraps() throws {
        #expect(throws: Rational.Error.divisionByZero) { try Rational(1, 0) }
        #expect(throws: Rational.Error.divisionByZero) { try Rational.zero.reciprocal() }
        #expect(throws: Rational.Error.overflow) { try Rational(Int64.min, -1) }
        #expect(throws: Rational.Error.overflow) { try Rational(Int64.max).multiplied(by: 2) }
        #expect(throws: Rational.Error.overflow) { try Rational(Int64.max).adding(1) }
        let ten: Rational = 10
        #expect(throws: Rational.Error.overflow) { try ten.power(19) }
        #expect(try ten.power(18) == Rational(1_000_000_000_000_000_000))
        // Large parts still compare correctly.
        #expect(try Rational(Int64.max, 3) > Rational(Int64.max - 1, 3))
    }

    // MARK: Temperatures, moles, and the other units of the HealthKit catalog

    @Test func temperaturesConvertExactlyThroughTheirZeros() throws {
        let fahrenheit = try HealthUnit("degF")
        let celsius = try HealthUnit("degC")
        let kelvin = try HealthUnit("K")
        #expect(try fahrenheit.convert(98.6, to: celsius) == 37)
        #expect(try celsius.convert(37, to: fahrenheit) == 98.6)
        #expect(try celsius.convert(0, to: kelvin) == 273.15)
        #expect(try kelvin.convert(0, to: fahrenheit) == -459.67)
        #expect(try fahrenheit.convert(-40, to: celsius) == -40)
        #expect(try fahrenheit.convert(exactly: Rational(986, 10), to: celsius) == 37)
        #expect(try celsius.convert(exactly: 100, to: fahrenheit) == 212)
        // No factor converts degF to degC; the same unit still converts with 1.
        #expect(throws: UnitError.offsetConversion(from: "degF", to: "degC")) {
            try fahrenheit.conversionFactor(to: celsius)
        }
        #expect(try celsius.conversionFactor(to: celsius) == 1)
        #expect(try kelvin.conversionFactor(to: HealthUnit("K")) == 1)
    }

    @Test(arguments: ["degC/min", "degF^2", "kg*degC", "(degC)/s"])
    func offsetTemperaturesStandAlone(text: String) {
        #expect(throws: UnitError.self) { try HealthUnit(text) }
        do {
            _ = try HealthUnit(text)
        } catch {
            #expect(error.description.contains("cannot be part of a compound unit"))
        }
    }

    @Test func kelvinCombinesLikeAnyUnit() throws {
        #expect(try HealthUnit("K/min").dimension == HealthUnit.Dimension(time: -1, temperature: 1))
    }

    @Test func glucoseConvertsBetweenMolesAndMassWithItsMolarMass() throws {
        let molar = try HealthUnit("mmol<180.15588000005408>/L")
        #expect(molar.description == "mmol<180.15588000005408>/L")
        #expect(try HealthUnit(molar.description) == molar)
        let mass = try HealthUnit("mg/dL")
        #expect(molar.isCompatible(with: mass))
        let glucose = try mass.convert(100, to: molar)
        #expect(abs(glucose - 5.5507) < 0.00005)
        #expect(abs(try molar.convert(glucose, to: mass) - 100) < 1e-9)
        // Without a molar mass a mole is an amount, not a mass.
        #expect(!(try HealthUnit("mmol/L")).isCompatible(with: mass))
        for bad in ["mmol<>/L", "mmol<-1>/L", "mmol<1.2.3>/L", "mmol<180", "g<18>", "mmol<0>/L"] {
            #expect(throws: UnitError.self, "\(bad)") { try HealthUnit(bad) }
        }
    }

    @Test func stoneIsFourteenPounds() throws {
        #expect(try HealthUnit("st").convert(1, to: HealthUnit("lb")) == 14)
        #expect(try HealthUnit("st").convert(1, to: HealthUnit("kg")) == 6.35029318)
    }

    @Test(arguments: [
        ("kJ", "Cal", 4.184, 1.0),
        ("Cal", "kcal", 1.0, 1.0),
        ("L", "mL", 1.0, 1000.0),
        ("fl_oz_us", "mL", 1.0, 29.5735295625),
        ("pt_us", "fl_oz_us", 1.0, 16.0),
        ("pt_imp", "fl_oz_imp", 1.0, 20.0),
        ("kPa", "Pa", 1.0, 1000.0),
        ("cmAq", "Pa", 1.0, 98.0665),
        ("atm", "kPa", 1.0, 101.325),
        ("mmHg", "kPa", 750.0615, 99.99995),
        ("S", "mcS", 1.0, 1_000_000.0),
        ("W", "kcal/hr", 1.0, 0.8604206500956023),
        ("IU", "IU", 3.0, 3.0),
    ])
    func catalogUnitsConvert(from: String, to: String, value: Double, expected: Double) throws {
        let result = try HealthUnit(from).convert(value, to: HealthUnit(to))
        #expect(abs(result - expected) <= abs(expected) * 1e-6, "\(value) \(from) = \(result) \(to)")
    }

    @Test func internationalUnitsAndSiemensConvertToNothingElse() throws {
        #expect(!(try HealthUnit("IU")).isCompatible(with: try HealthUnit("mg")))
        #expect(!(try HealthUnit("mcS")).isCompatible(with: try HealthUnit("count")))
        #expect(try HealthUnit("mcS").dimension.description == "conductance")
    }

    @Test func decimalsReadExactly() {
        #expect(Rational(decimal: 98.6) == (try? Rational(493, 5)))
        #expect(
            Rational(decimalText: "180.15588000005408") == (try? Rational(18_015_588_000_005_408, 100_000_000_000_000)))
        #expect(Rational(decimal: 1e-5) == (try? Rational(1, 100_000)))
        #expect(Rational(decimal: .infinity) == nil)
        #expect(Rational(decimalText: "1.2.3") == nil)
        #expect(Rational(decimalText: "") == nil)
        #expect(Rational(decimal: 1e300) == nil)
    }
}
