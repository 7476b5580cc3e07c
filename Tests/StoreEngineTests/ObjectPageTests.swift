import Foundation
import Health
import StoreEngine
import Testing

/// A page of correlations or workouts (``ObjectPage``, both engines' page builder) ends at the query's limit, or
/// once its bodies (a workout's routes) hold ``ObjectPage/maximumBytes``, with a cursor after its last object.
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
        // Anchored changes hand out what stays within the bytes.
        let objects = (0..<4).map { Self.object($0, bodyBytes: third) }
        let within = ObjectPage.prefixWithinBytes(objects)
        #expect(within.objects.map(\.id) == objects.prefix(3).map(\.id))
        #expect(within.cut)
        #expect(!ObjectPage.prefixWithinBytes(Array(objects.prefix(2))).cut)
        #expect(ObjectPage.rowsPerRead(.bloodPressure) == 1_000)
    }
}
