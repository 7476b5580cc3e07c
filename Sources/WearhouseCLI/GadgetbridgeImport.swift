import Health
import HealthImports
import StoreEngine

/// `wearhouse import-samples Gadgetbridge.db`: Gadgetbridge's database (found from its SQLite header and its
/// tables), read only, through the same store calls as a JSON-lines file: the samples go in batches into one
/// transaction, every id derived from the sample's type, source (`Gadgetbridge`), device (its MAC), start and
/// end, so that running it again (after a kill, or with a newer copy of the database) stores only what is new.
enum GadgetbridgeImport {
    static func run(file: String, options: ImportSamplesCommand.Options, console: Console) async -> ExitCode {
        let bar = console.errorIsTerminal ? ProgressBar(console: console) : nil
        var progress: (@Sendable (Double) -> Void)?
        if let bar { progress = { @Sendable fraction in bar.show(fraction) } }
        do {
            let reader = try GadgetbridgeReader(path: file, progress: progress)
            let store = try StoreLocation.open(store: options.store, mustExist: false)
            let types = [HealthType.stepCount, .heartRate, .sleepAnalysis].map(\.identifier) + ["restingHeartRate"]
            var summary = ImportSummary()
            summary.before = await ImportSummary.storedCounts(store, of: types)
            reader.storedSleep = try await storedSleep(store, devices: reader.devices.values.map(\.device.key))
            summary.outcomes = try await store.saveAll(as: .owner) { try reader.next() }
            bar?.end()
            summary.after = await ImportSummary.storedCounts(store, of: types)
            summary.read = reader.read
            for row in reader.devices.values.sorted(by: { $0.id < $1.id }) {
                let device = row.device
                let fields = [
                    device.name, device.manufacturer, device.model, device.firmwareVersion.map { "firmware " + $0 },
                ].compactMap { $0 }
                summary.notes.append(
                    "device \(row.id): \(fields.joined(separator: ", ")) (\(device.localIdentifier ?? "no MAC"), "
                        + "Gadgetbridge type \(row.type))")
            }
            let tables = reader.tables.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }
            summary.notes.append("tables read: " + (tables.isEmpty ? "none" : tables.joined(separator: ", ")))
            summary.notImported = reader.notImported.sorted { $0.key < $1.key }.map { what, skipped in
                let place = skipped.first.isEmpty ? "" : "; first at \(skipped.first)"
                return (what, skipped.count, skipped.reason + place)
            }
            console.out(summary.text)
            return .success
        } catch let failure as StoreLocation.Failure {
            bar?.end()
            console.error(failure.message)
            return failure.code
        } catch let bad as GadgetbridgeError {
            bar?.end()
            console.error("\(bad.message); nothing was imported")
            return .dataError
        } catch let invalid as InvalidSampleError {
            bar?.end()
            console.error("\(file): \(invalid.reason); nothing was imported")
            return .dataError
        } catch {
            bar?.end()
            console.error("\(file): \(error); nothing was imported")
            return .ioError
        }
    }

    /// The sleep samples of source Gadgetbridge the store holds for these devices (by device key, start to end in
    /// milliseconds), for ``GadgetbridgeReader/storedSleep``; at most a million.
    static func storedSleep(_ store: any HealthStoreEngine, devices: [String]) async throws -> [String: [Int64: Int64]]
    {
        var found: [String: [Int64: Int64]] = [:]
        guard !devices.isEmpty else { return found }
        var cursor: SampleCursor?
        var count = 0
        repeat {
            let page = try await store.samples(
                SampleQuery(
                    type: .sleepAnalysis, sources: [GadgetbridgeReader.source.identifier], devices: devices,
                    limit: 10_000, cursor: cursor), as: .owner)
            for sample in page.samples {
                guard let key = sample.device?.key else { continue }
                found[key, default: [:]][sample.start.milliseconds] = sample.end.milliseconds
            }
            count += page.samples.count
            cursor = page.next
        } while cursor != nil && count < 1_000_000
        return found
    }
}
