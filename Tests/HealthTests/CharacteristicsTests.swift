import Foundation
import Health
import Testing

@Suite struct CharacteristicsTests {
    static func instant(_ text: String) throws -> Instant {
        Instant(milliseconds: Int64(try #require(ISO8601DateFormatter().date(from: text)).timeIntervalSince1970 * 1000))
    }

    @Test func valuesParseByNameAliasOrNumberAndAreRefusedClearly() throws {
        #expect(try Characteristics.Value(parsing: "female", for: .biologicalSex) == .enumerated(1))
        #expect(try Characteristics.Value(parsing: "AB-", for: .bloodType) == .enumerated(6))
        #expect(try Characteristics.Value(parsing: "oPositive", for: .bloodType) == .enumerated(7))
        #expect(try Characteristics.Value(parsing: "IV", for: .fitzpatrickSkinType) == .enumerated(4))
        #expect(try Characteristics.Value(parsing: "2", for: .biologicalSex) == .enumerated(2))
        #expect(
            try Characteristics.Value(parsing: "1990-02-02", for: .dateOfBirth)
                == .date(LocalDateTime(year: 1990, month: 2, day: 2)))
        #expect(throws: CharacteristicError.self) { try Characteristics.Value(parsing: "notSet", for: .bloodType) }
        #expect(throws: CharacteristicError.self) { try Characteristics.Value(parsing: "Z+", for: .bloodType) }
        #expect(throws: CharacteristicError.self) {
            try Characteristics.Value(parsing: "1990-02-30", for: .dateOfBirth)
        }
        #expect(throws: CharacteristicError.self) {
            try Characteristics.Value(parsing: "1990-02-02T10:00", for: .dateOfBirth)
        }
        #expect(throws: CharacteristicError.self) {
            try Characteristics.Value(parsing: "1850-01-01", for: .dateOfBirth)
        }
        let now = try Self.instant("2026-01-01T00:00:00Z")
        #expect(throws: CharacteristicError.self) {
            try Characteristics.Value(parsing: "2030-01-01", for: .dateOfBirth, today: now)
        }
        #expect(throws: CharacteristicError.notACharacteristic("heartRate")) {
            try Characteristics.Value(parsing: "1", for: .heartRate)
        }
        do {
            _ = try Characteristics.Value(parsing: "Z+", for: .bloodType)
        } catch {
            #expect(error.description.hasPrefix("bloodType cannot be 'Z+'; it takes aPositive, aNegative"))
        }
    }

    @Test func theAgeIsCountedInTheReadersTimeZone() throws {
        let person = Characteristics([
            "dateOfBirth": .date(try LocalDateTime(year: 1990, month: 2, day: 2))
        ])
        // 1 February 2026 23:30 UTC is already 2 February in Berlin: the birthday there, not yet in New York.
        let instant = try Self.instant("2026-02-01T23:30:00Z")
        let berlin = try #require(TimeZone(identifier: "Europe/Berlin"))
        let newYork = try #require(TimeZone(identifier: "America/New_York"))
        #expect(person.age(at: instant, timeZone: berlin) == 36)
        #expect(person.age(at: instant, timeZone: newYork) == 35)
        #expect(Characteristics().age(at: instant, timeZone: berlin) == nil)
        // Born on 29 February: a year older on 1 March in a common year.
        let leap = try LocalDateTime(year: 2000, month: 2, day: 29)
        #expect(Characteristics.age(birth: leap, at: try Self.instant("2025-02-28T12:00:00Z"), timeZone: .gmt) == 24)
        #expect(Characteristics.age(birth: leap, at: try Self.instant("2025-03-01T12:00:00Z"), timeZone: .gmt) == 25)
        #expect(Characteristics.age(birth: leap, at: try Self.instant("2028-02-29T12:00:00Z"), timeZone: .gmt) == 28)
    }
}

@Suite struct CategoryStatisticsTests {
    static func sample(_ value: Int, _ from: Int64, _ to: Int64, source: String = "a", subject: String? = nil)
        -> StatisticsSample
    {
        StatisticsSample(
            start: Instant(milliseconds: from), end: Instant(milliseconds: to), value: Double(value),
            provenance: Provenance(source: source, device: nil), subject: subject)
    }

    @Test func overlapsCountOncePerSubjectAndInstantsCountWithoutTime() {
        let borders = [0, 100, 200].map { Instant(milliseconds: $0) }
        let buckets = CategoryStatistics.buckets(
            [
                Self.sample(1, 50, 150), Self.sample(1, 60, 120, source: "b"), Self.sample(1, 90, 110, subject: "x"),
                Self.sample(2, 100, 100), Self.sample(2, 200, 200), Self.sample(3, 150, 140),
            ], borders: borders)
        #expect(buckets.count == 2)
        #expect(buckets[0] == [.init(value: 1, milliseconds: 50 + 10, count: 3)])
        // 100-150 from the first, 100-120 from the second (already covered), 100-110 of subject x; the instant at
        // the border belongs to the later bucket; the one at 200 to none; the reversed sample is ignored.
        #expect(
            buckets[1] == [
                .init(value: 1, milliseconds: 50 + 10, count: 3), .init(value: 2, milliseconds: 0, count: 1),
            ])
    }
}
