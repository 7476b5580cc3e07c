import Foundation
import Health
import StoreEngine
import Testing

/// A page of correlations or workouts (``ObjectPage``, both engines' page builder) ends at the query's limit, or
/// once its bodies (a workout's routes) hold ``ObjectPage/maximumBytes``, with a cursor after its last object; so
/// do anchored changes of workouts (``ObjectChanges``).
@Suite struct ObjectPageTests {
    static func object(_ index: Int, bodyBytes: Int) -> StoredObject {
        StoredObject(
            id: UUID(), type: .workout, start: Instant(seconds: Int64(index) * 3_600),
            end: Instant(seconds: Int64(index) * 3_600 + 1_800), startOffsetSeconds: 0,
            source: Source(identifier: "com.example"), device: nil, subject: nil, metadata: [:],
            body: String(repeating: "x", count: bodyBytes), seq: Int64(index), writer: "owner")
    }

    @Test func aPageEndsAtItsLimitOrItsBytesWithACursor() {
        var limited = ObjectPage(limit: 2)
        limited.add(Self.object(0, bodyBytes: 10))
        #expect(!limited.isFull)
        #expect(limited.next == nil)
        limited.add(Self.object(1, bodyBytes: 10))
        #expect(limited.isFull)
        #expect(limited.next == limited.objects.last?.cursor)

        // Without a limit, the bytes end it: a third of the budget each, so three.
        var unlimited = ObjectPage(limit: nil)
        let third = ObjectPage.maximumBytes / 3 + 1
        for index in 0..<3 where !unlimited.isFull { unlimited.add(Self.object(index, bodyBytes: third)) }
        #expect(unlimited.objects.count == 3)
        #expect(unlimited.isFull)
        #expect(unlimited.next == unlimited.objects.last?.cursor)
        // An unlimited page that ends by running out of rows has no next page.
        var short = ObjectPage(limit: nil)
        short.add(Self.object(0, bodyBytes: third))
        #expect(!short.isFull)
        #expect(short.next == nil)
        // Workouts are read a few rows at a time; correlations a thousand.
        #expect(ObjectPage.rowsPerRead(.workout) == 8)
        // Anchored changes of workouts hand out what stays within the bytes, and no deletion after it.
        let objects = (0..<4).map { Self.object($0, bodyBytes: third) }
        let late = UUID()
        let within = ObjectChanges(of: .workout, objects: objects, deleted: [(5, late)], since: -1, limit: 8)
        #expect(within.objects.map(\.id) == objects.prefix(3).map(\.id))
        #expect(within.hasMore)
        #expect(within.anchor == 2)
        #expect(within.deleted.isEmpty)
        let all = ObjectChanges(
            of: .workout, objects: Array(objects.prefix(2)), deleted: [(5, late)], since: -1, limit: 8)
        #expect(!all.hasMore)
        #expect(all.deleted == [late])
        #expect(all.events == 3)
        #expect(ObjectChanges.rowLimit(of: .workout, asked: 100) == 8)
        #expect(ObjectChanges.rowLimit(of: .bloodPressure, asked: 100) == 100)
        #expect(ObjectPage.rowsPerRead(.bloodPressure) == 1_000)
    }
}
