import Foundation
import Testing

/// The summary `import-samples` prints after an Apple Health export (Sources/WearhouseCLI/ImportSummary.swift):
/// per type what was read, what is new in the store, what it held already and what was converted from another
/// unit; a second import finds everything already stored.
@Suite struct ImportSummaryTests {
    @Test func anAppleHealthImportCountsEachTypeNewStoredAndConverted() throws {
        let folder = try AppleHealthImportTests.Folder()
        let zip = try folder.exportZip(AppleHealthImportTests.heartRates(3) + AppleHealthImportTests.everyKind)
        let store = folder.path("health.db")
        let first = try WearhouseRunner.run(["import-samples", "--store", store, zip])
        #expect(first.status == 0, "\(first.stderr)")
        for line in [
            "by type:", "  heartRate: 3 read, 3 new, 0 already stored",
            // 150 lb → kg; 1.25 km → m; 418.4 kJ → kcal.
            "  bodyMass: 1 read, 1 new, 0 already stored, 1 converted from another unit",
            "  distanceWalkingRunning: 1 read, 1 new, 0 already stored, 1 converted from another unit",
            "  activeEnergyBurned: 1 read, 1 new, 0 already stored, 1 converted from another unit",
        ] {
            #expect(first.stdout.contains(line + "\n"), "\(line) in \(first.stdout)")
        }
        let again = try WearhouseRunner.run(["import-samples", "--store", store, zip])
        #expect(again.stdout.contains("  heartRate: 3 read, 0 new, 3 already stored\n"), "\(again.stdout)")
        #expect(again.stdout.contains("  bodyMass: 1 read, 0 new, 1 already stored, 1 converted"), "\(again.stdout)")
    }

    /// Records of a catalog type that are not imported are counted on their type's line, with the first reason:
    /// a heart rate out of range, a body mass in a unit that is not a mass; a type with none imported has a line
    /// too.
    @Test func whatIsSkippedIsCountedOnItsTypesLine() throws {
        let folder = try AppleHealthImportTests.Folder()
        let odd = """
              <Record type="HKQuantityTypeIdentifierHeartRate" sourceName="Ann’s Apple Watch" unit="count/min" startDate="2024-04-01 09:00:00 +0100" endDate="2024-04-01 09:00:00 +0100" value="400"/>
              <Record type="HKQuantityTypeIdentifierHeartRate" sourceName="Ann’s Apple Watch" unit="count/min" startDate="2024-04-01 09:01:00 +0100" endDate="2024-04-01 09:01:00 +0100" value="x"/>
              <Record type="HKQuantityTypeIdentifierRespiratoryRate" sourceName="Ann’s Apple Watch" unit="m" startDate="2024-04-01 09:01:00 +0100" endDate="2024-04-01 09:01:00 +0100" value="14"/>

            """
        let zip = try folder.exportZip(AppleHealthImportTests.heartRates(3) + odd)
        let result = try WearhouseRunner.run(["import-samples", "--store", folder.path("health.db"), zip])
        #expect(result.status == 0, "\(result.stderr)")
        for line in [
            "  heartRate: 3 read, 3 new, 0 already stored, 2 skipped (heartRate value 400.0 count/min is outside "
                + "1.0...300.0; first at line ",
            "  respiratoryRate: 0 read, 1 skipped (unit m does not convert to count/min",
            "  Record HKQuantityTypeIdentifierHeartRate 2 (heartRate value 400.0",
        ] {
            #expect(result.stdout.contains(line), "\(line) in \(result.stdout)")
        }
    }
}
