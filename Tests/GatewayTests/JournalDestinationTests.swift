import Foundation
import Gateway
import Support
import Testing

/// The journal destination, which stays in Gateway with libsystemd (the logger's model is in Support).
@Suite struct JournalDestinationTests {
    /// `JOURNAL_STREAM` is `device:inode` of the stream systemd connected; only a matching fd counts.
    @Test func recognisesTheJournalStream() throws {
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        defer {
            close(fds[0])
            close(fds[1])
        }
        var status = stat()
        #expect(fstat(fds[1], &status) == 0)
        let stream = "\(status.st_dev):\(status.st_ino)"
        #expect(LogDestination.isJournalStream(stream, fileDescriptor: fds[1]))
        #expect(!LogDestination.isJournalStream("\(status.st_dev):\(status.st_ino + 1)", fileDescriptor: fds[1]))
        #expect(!LogDestination.isJournalStream(nil, fileDescriptor: fds[1]))
        #expect(!LogDestination.isJournalStream("garbage", fileDescriptor: fds[1]))
        #expect(!LogDestination.isJournalStream(stream, fileDescriptor: -1))
    }
}
