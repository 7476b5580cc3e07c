import Foundation
import Testing

@testable import HealthImports

/// The XML pull reader's pieces parsed on a thread of their own (``XMLPullReader/readAhead(pieces:)``) and its
/// elements recorded into a temporary file and read back (Sources/HealthImports/XMLRecording.swift): the same
/// events, lines and attributes as the document read straight, over many frames and pieces.
@Suite struct XMLRecordingTests {
    /// A document of `count` elements, every third with children and odd attribute values, one line each.
    static func document(_ count: Int) -> String {
        var text = "<?xml version=\"1.0\"?>\n<root a=\"1\">\n"
        for index in 0..<count {
            if index % 3 == 0 {
                text += "<Workout n=\"\(index)\" v=\"&lt;\(index)&amp;é\"><Entry key=\"k\(index)\" value=\"\"/>"
                text += "<Inner><Deep x=\"\(String(repeating: "x", count: index % 50))\"/></Inner></Workout>\n"
            } else {
                text += "<Record n=\"\(index)\" type=\"T\(index % 7)\"/>\n"
            }
        }
        return text + "</root>\n"
    }

    static func reader(_ text: String) throws -> XMLPullReader {
        var bytes = Array(text.utf8)[...]
        return try XMLPullReader(name: "test.xml") { buffer in
            let count = min(buffer.count, bytes.count, 10_007)
            buffer.copyBytes(from: bytes.prefix(count))
            bytes = bytes.dropFirst(count)
            return count
        }
    }

    /// Every event with its line and (for a start) its attributes, in words.
    static func events(of reader: XMLPullReader, where wanted: (String) -> Bool = { _ in true }) throws -> [String] {
        var seen: [String] = []
        while let event = try reader.next() {
            switch event {
            case .start(let name, let depth):
                let attributes = try reader.attributes().sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
                seen.append("start \(name) \(depth) line \(reader.line) \(attributes)")
            case .end(let name, let depth):
                seen.append("end \(name) \(depth) line \(reader.line)")
            }
        }
        return seen
    }

    @Test func aDocumentReadAheadGivesTheSameEvents() async throws {
        let text = Self.document(20_000)
        let straight = try Self.events(of: Self.reader(text))
        // Read on one thread while parsed on another, handed over by the pieces' queue.
        nonisolated(unsafe) let ahead = try Self.reader(text)
        let parser = try #require(ahead.readAhead(pieces: 2))
        #expect(ahead.readAhead(pieces: 2) == nil)
        let seen = await withTaskGroup(of: Void.self) { group in
            group.addTask { await OwnThread.run("test.xml") { parser.run() } }
            let seen = await OwnThread.run("test.reader") { Result { try Self.events(of: ahead) } }
            await group.waitForAll()
            return seen
        }
        #expect(try seen.get() == straight)
        #expect(straight.count > 40_000)
        #expect(ahead.bytesRead == Int64(text.utf8.count))
    }

    @Test func recordedElementsReadBackTheSame() throws {
        let text = Self.document(20_000)
        // The elements to record, read straight: each Workout from its start to its end.
        var wanted: [String] = []
        var inside = false
        for event in try Self.events(of: Self.reader(text)) {
            if event.hasPrefix("start Workout") { inside = true }
            if inside { wanted.append(event) }
            if event.hasPrefix("end Workout") { inside = false }
        }
        let reader = try Self.reader(text)
        let recording = try XMLRecording()
        while let event = try reader.next() {
            if case .start("Workout", let depth) = event { try recording.record(reader, startedAt: depth) }
        }
        #expect(recording.elements == 6_667)
        let replayed = try Self.events(of: recording.replay())
        #expect(replayed == wanted)
        #expect(replayed.count == 6_667 * 8)
    }

    @Test func aReaderThatStopsEndsTheParserThread() async throws {
        let text = Self.document(20_000)
        nonisolated(unsafe) let reader = try Self.reader(text)
        let parser = try #require(reader.readAhead(pieces: 1))
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await OwnThread.run("test.xml") { parser.run() } }
            _ = try? reader.next()
            parser.stop()
            await group.waitForAll()
        }
        // The queue stopped: the reader ends after the piece it holds (64 KiB of the input at most), no error, no
        // wait for the parser, which ended.
        var left = 0
        while try reader.next() != nil { left += 1 }
        #expect(left < 5_000)
    }
}
