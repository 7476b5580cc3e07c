import Foundation
import Health
import HealthImports
import StoreEngine

/// `wearhouse import-samples export.zip` (or `export.xml`): an Apple Health export, through the same store calls as
/// a JSON-lines file (docs/apple-health-import.md). The samples and heartbeat series go in batches into one
/// transaction, read on two threads of their own (the XML parsed ahead of the reader) while the store saves;
/// correlations and workouts follow, a thousand at a time in a transaction each, then the owner's
/// characteristics. Every id is derived from the sample's natural key, so running it again (after a kill, or with
/// a newer export) stores only what is not stored yet.
enum AppleHealthImport {
    static func run(
        file: String, format: AppleHealthExport.Format, options: ImportSamplesCommand.Options, console: Console
    ) async -> ExitCode {
        let reader: AppleHealthReader
        let export: AppleHealthExport
        do {
            export = try AppleHealthExport(path: file, format: format)
            let bar = console.errorIsTerminal && export.size > 0 ? ProgressBar(console: console) : nil
            var progress: (@Sendable (Double) -> Void)?
            if let bar { progress = { @Sendable fraction in bar.show(fraction) } }
            reader = try AppleHealthReader(export: export, defaultSource: options.source, progress: progress)
            reader.holdsObjects = false
            defer { bar?.end() }
            return try await save(reader, options: options, console: console, bar: bar)
        } catch let failure as StoreLocation.Failure {
            console.error(failure.message)
            return failure.code
        } catch let late as ObjectsReadError {
            console.error(
                "\(file): \(late.error.message); the samples were imported, the correlations and workouts not all "
                    + "(run the import again)")
            return .ioError
        } catch let bad as XMLReadError {
            let place = bad.line > 0 ? ":\(bad.line)" : ""
            console.error("\(file)\(place): \(bad.message); nothing was imported")
            return bad.isRead ? .ioError : .dataError
        } catch let invalid as InvalidSampleError {
            console.error("\(file): \(invalid.reason); nothing was imported")
            return .dataError
        } catch {
            console.error("\(file): \(error); nothing was imported")
            return .ioError
        }
    }

    /// Saves `objects` in one transaction; when the store refuses one (a member that conflicts with a stored
    /// sample, say), that one is left out, counted under `kind` in `refused` with the store's reason, and the rest
    /// saved again: at most one more save per refused object, never one per object.
    private static func saveRefusing<Object: Sendable>(
        _ objects: [Object], _ kind: String, _ refused: inout [String: (count: Int, reason: String)],
        _ save: ([Object]) async throws -> [WriteOutcome]
    ) async throws -> [WriteOutcome] {
        var remaining = objects
        while !remaining.isEmpty {
            do {
                return try await save(remaining)
            } catch {
                guard let invalid = error as? InvalidSampleError, remaining.indices.contains(invalid.index) else {
                    throw error
                }
                remaining.remove(at: invalid.index)
                let reason = refused[kind]?.reason ?? invalid.reason
                refused[kind] = ((refused[kind]?.count ?? 0) + 1, reason)
            }
        }
        return []
    }

    private static func save(
        _ reader: AppleHealthReader, options: ImportSamplesCommand.Options, console: Console, bar: ProgressBar?
    ) async throws -> ExitCode {
        let store = try StoreLocation.open(store: options.store, mustExist: false)
        var summary = ImportSummary()
        let types = HealthTypeCatalog.all.filter { $0.isSampleType || $0 == .heartbeatSeries }.map(\.identifier)
        summary.before = await ImportSummary.storedCounts(store, of: types)
        var counts = try await reader.readingAhead { next in try await store.saveAll(as: .owner, next) }
        bar?.end()
        var refused: [String: (count: Int, reason: String)] = [:]
        while true {
            let objects: (correlations: [Correlation], workouts: [Workout])?
            do {
                objects = try await reader.readObjects()
            } catch {
                throw ObjectsReadError(error: error)
            }
            guard let objects else { break }
            var outcomes = try await saveRefusing(objects.correlations, "Correlation", &refused) { list in
                try await store.save(list, as: .owner)
            }
            outcomes += try await saveRefusing(objects.workouts, "Workout", &refused) { list in
                try await store.save(list, as: .owner)
            }
            for outcome in outcomes { counts[outcome, default: 0] += 1 }
        }
        for (type, value) in reader.characteristics {
            try await store.setCharacteristic(type, to: value, of: nil, as: .owner)
        }
        summary.outcomes = counts
        summary.read = reader.read
        summary.converted = reader.converted
        for (type, skipped) in reader.skippedByType {
            let place = skipped.line > 0 ? "; first at line \(skipped.line)" : ""
            summary.skipped[type] = (skipped.count, skipped.reason + place)
        }
        summary.after = await ImportSummary.storedCounts(store, of: summary.read.keys)
        summary.before = summary.before.filter { summary.after[$0.key] != nil }
        if reader.routeFiles > 0 {
            summary.notes.append(
                "routes: \(reader.routeLocations) locations in \(reader.routeFiles) GPX files, kept with their workouts"
            )
        }
        if reader.creationDates > 0 {
            summary.notes.append(
                "creationDate of \(reader.creationDates) records not kept (the model has no creation date)")
        }
        for (what, skipped) in reader.notImported.sorted(by: { $0.key < $1.key }) {
            let place = skipped.line > 0 ? "; first at line \(skipped.line)" : ""
            summary.notImported.append((what, skipped.count, skipped.reason + place))
        }
        for (what, skipped) in refused.sorted(by: { $0.key < $1.key }) {
            summary.notImported.append((what, skipped.count, "the store refused it: \(skipped.reason)"))
        }
        console.out(summary.text)
        return .success
    }
}

/// The correlations and workouts failing to be read back after the samples were saved.
private struct ObjectsReadError: Error {
    let error: XMLReadError
}
