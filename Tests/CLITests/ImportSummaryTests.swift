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
}
