public import Foundation

/// HealthKit's `HKBiologicalSex`, numbered as HealthKit numbers it.
public enum BiologicalSex: Int, Hashable, Sendable, CaseIterable {
    case notSet = 0, female, male, other
}

/// HealthKit's `HKBloodType`.
public enum BloodType: Int, Hashable, Sendable, CaseIterable {
    case notSet = 0, aPositive, aNegative, bPositive, bNegative, abPositive, abNegative, oPositive, oNegative
}

/// HealthKit's `HKFitzpatrickSkinType`: type I to VI.
public enum FitzpatrickSkinType: Int, Hashable, Sendable, CaseIterable {
    case notSet = 0, typeI, typeII, typeIII, typeIV, typeV, typeVI
}

/// Why a characteristic value was refused.
public enum CharacteristicError: Error, Equatable, Sendable, CustomStringConvertible {
    case notACharacteristic(String)
    case invalid(type: String, value: String, takes: String)

    public var description: String {
        switch self {
        case .notACharacteristic(let type):
            "\(type) is not a characteristic; the characteristics are "
                + HealthTypeCatalog.types(of: .characteristic).map(\.identifier).joined(separator: ", ")
        case .invalid(let type, let value, let takes):
            "\(type) cannot be '\(value.prefix(64))'; it takes \(takes)"
        }
    }
}

/// The characteristics of one person (HealthKit's `HKCharacteristicType`s): facts the person (the store's
/// owner) sets and apps may read but never write (`docs/store-semantics.md`, item 26). What is not set is absent.
public struct Characteristics: Hashable, Sendable {
    /// By characteristic type identifier (`biologicalSex`, `bloodType`, `dateOfBirth`, `fitzpatrickSkinType`).
    public var values: [String: Characteristics.Value]

    public init(_ values: [String: Characteristics.Value] = [:]) {
        self.values = values
    }

    public var biologicalSex: BiologicalSex {
        guard case .enumerated(let value)? = values[HealthType.biologicalSex.identifier] else { return .notSet }
        return BiologicalSex(rawValue: value) ?? .notSet
    }

    public var bloodType: BloodType {
        guard case .enumerated(let value)? = values[HealthType.bloodType.identifier] else { return .notSet }
        return BloodType(rawValue: value) ?? .notSet
    }

    public var fitzpatrickSkinType: FitzpatrickSkinType {
        guard case .enumerated(let value)? = values[HealthType.fitzpatrickSkinType.identifier] else { return .notSet }
        return FitzpatrickSkinType(rawValue: value) ?? .notSet
    }

    /// The date of birth, a calendar date (midnight), or `nil` when not set.
    public var dateOfBirth: LocalDateTime? {
        guard case .date(let date)? = values[HealthType.dateOfBirth.identifier] else { return nil }
        return date
    }

    /// The age in whole years at `instant` where the reader is (`timeZone`), or `nil` without a date of birth.
    /// Someone born on 29 February turns a year older on 1 March in common years.
    public func age(at instant: Instant, timeZone: TimeZone) -> Int? {
        guard let birth = dateOfBirth else { return nil }
        return Self.age(birth: birth, at: instant, timeZone: timeZone)
    }

    /// The age in whole years on the local date of `instant` in `timeZone` of someone born on `birth`.
    public static func age(birth: LocalDateTime, at instant: Instant, timeZone: TimeZone) -> Int? {
        guard let today = try? StatisticsBuckets.localTime(at: instant, in: timeZone) else { return nil }
        var years = today.year - birth.year
        if (today.month, today.day) < (birth.month, birth.day) { years -= 1 }
        return max(0, years)
    }
}

extension Characteristics {
    /// One characteristic's value: an enumeration's integer (biological sex, blood type, skin type) or a calendar
    /// date (date of birth, midnight of a ``LocalDateTime``).
    public enum Value: Hashable, Sendable {
        case enumerated(Int)
        case date(LocalDateTime)

        /// The value `text` names for `type`: an enumeration value's name or alias (`female`, `AB+`, `IV`) or its
        /// integer, or for `dateOfBirth` a date `YYYY-MM-DD` from 1900-01-01 up to `today` (the next day, so that any
        /// time zone's today is accepted).
        ///
        /// - Throws: ``CharacteristicError`` naming the type and what it takes.
        public init(parsing text: String, for type: HealthType, today: Instant = .now) throws(CharacteristicError) {
            guard type.kind == .characteristic else { throw .notACharacteristic(type.identifier) }
            if type.values.isEmpty {
                let date: LocalDateTime
                do {
                    date = try LocalDateTime(parsing: text)
                } catch {
                    throw .invalid(type: type.identifier, value: text, takes: "a date YYYY-MM-DD")
                }
                guard date.isMidnight, text.count == 10 else {
                    throw .invalid(type: type.identifier, value: text, takes: "a date YYYY-MM-DD, without a time")
                }
                let latest = today.adding(milliseconds: 86_400_000)
                guard date.year >= 1900, StatisticsBuckets.instant(for: date, in: .gmt) <= latest else {
                    throw .invalid(type: type.identifier, value: text, takes: "a date from 1900-01-01 to today")
                }
                self = .date(date)
                return
            }
            let takes = type.values.filter { $0.value != 0 }.map(\.name).joined(separator: ", ")
            if let value = type.value(named: text) ?? Int(text).flatMap({ type.name(of: $0) != nil ? $0 : nil }) {
                guard value != 0 else {
                    throw .invalid(type: type.identifier, value: text, takes: takes + " (to clear it, unset it)")
                }
                self = .enumerated(value)
                return
            }
            throw .invalid(type: type.identifier, value: text, takes: takes)
        }

        /// The stored and printed form: the enumeration value's name, or the date `YYYY-MM-DD`.
        public func text(for type: HealthType) -> String {
            switch self {
            case .enumerated(let value): type.name(of: value) ?? String(value)
            case .date(let date): String(date.description.prefix(10))
            }
        }
    }
}
