import Health
import Testing

@Suite struct HealthTypeCatalogTests {
    @Test func looksUpHealthKitIdentifiers() throws {
        let heartRate = try #require(HealthTypeCatalog.type("heartRate"))
        #expect(heartRate.canonicalUnit == "count/min")
        #expect(heartRate.aggregation == .discrete)
        #expect(heartRate.validRange == 1...300)
        #expect(HealthTypeCatalog.type("stepCount")?.aggregation == .cumulative)
        #expect(HealthTypeCatalog.type("HKQuantityTypeIdentifierHeartRate") == nil)
        #expect(HealthTypeCatalog.type("steps") == nil)
    }

    @Test func identifiersAreUnique() {
        let identifiers = HealthTypeCatalog.all.map(\.identifier)
        #expect(Set(identifiers).count == identifiers.count)
    }

    @Test func cumulativeTypesAcceptZeroButNotNegative() {
        for type in HealthTypeCatalog.all where type.aggregation == .cumulative {
            #expect(type.validRange?.contains(0) == true)
            #expect(type.validRange?.contains(-1) == false)
        }
    }
}
