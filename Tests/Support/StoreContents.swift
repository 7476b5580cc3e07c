internal import Foundation
public import Health

/// Everything a store holds (every quantity sample of every type, every heartbeat series), for comparing two
/// stores.
public struct StoreContents: Equatable, Sendable {
    public var quantities: [QuantitySample]
    public var series: [HeartbeatSeriesSample]

    public static func of(_ store: any HealthStore) async throws -> StoreContents {
        var quantities: [QuantitySample] = []
        for type in HealthTypeCatalog.all where type.isSampleType {
            var cursor: SampleCursor?
            repeat {
                let page = try await store.samples(SampleQuery(type: type, limit: 1000, cursor: cursor), as: .owner)
                quantities += page.samples
                cursor = page.next
            } while cursor != nil
        }
        var series: [HeartbeatSeriesSample] = []
        var cursor: SampleCursor?
        repeat {
            let page = try await store.heartbeatSeries(
                SampleQuery(type: .heartbeatSeries, limit: 1000, cursor: cursor), as: .owner)
            series += page.series
            cursor = page.next
        } while cursor != nil
        return StoreContents(
            quantities: quantities.sorted { $0.id.uuidString < $1.id.uuidString },
            series: series.sorted { $0.id.uuidString < $1.id.uuidString })
    }
}
