internal import CDispatch
internal import CSystemd
internal import Glibc
public import Support

/// The systemd journal as a ``LogDestination``: here rather than in Support, where the logger's model is, because
/// only this module links libsystemd.
extension LogDestination {
    /// The systemd journal through `sd_journal_sendv`, with the priority and the extra fields as journal fields;
    /// falls back to standard error when the journal refuses the entry.
    public static func journal(identifier: String = "wearhouse") -> LogDestination {
        LogDestination { entry in
            if !sendToJournal(entry.journalFields(identifier: identifier)) {
                LogDestination.standardError.write(entry)
            }
        }
    }

    /// The journal when standard error is connected to it (systemd sets `JOURNAL_STREAM` to that stream's
    /// `device:inode`), standard error otherwise (a terminal, a pipe, a file).
    public static func automatic(identifier: String = "wearhouse") -> LogDestination {
        let stream = getenv("JOURNAL_STREAM").map { String(cString: $0) }
        return isJournalStream(stream, fileDescriptor: STDERR_FILENO)
            ? .journal(identifier: identifier) : .standardError
    }

    /// Whether `journalStream` (the `JOURNAL_STREAM` value, `device:inode` in decimal) names the file behind
    /// `fileDescriptor`. A child that inherited the variable but not the stream does not match.
    public static func isJournalStream(_ journalStream: String?, fileDescriptor: Int32) -> Bool {
        guard let journalStream else { return false }
        let parts = journalStream.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, let device = UInt64(parts[0]), let inode = UInt64(parts[1]) else { return false }
        var status = stat()
        guard fstat(fileDescriptor, &status) == 0 else { return false }
        return UInt64(status.st_dev) == device && UInt64(status.st_ino) == inode
    }

    /// Sends one entry's fields as iovecs (the variadic `sd_journal_send` cannot be called from Swift).
    static func sendToJournal(_ fields: [String]) -> Bool {
        var storage: [UInt8] = []
        var ranges: [Range<Int>] = []
        for field in fields {
            let start = storage.count
            storage += field.utf8
            ranges.append(start..<storage.count)
        }
        return storage.withUnsafeMutableBytes { bytes in
            guard let base = bytes.baseAddress else { return false }
            var vectors = ranges.map { iovec(iov_base: base + $0.lowerBound, iov_len: $0.count) }
            return sd_journal_sendv(&vectors, Int32(vectors.count)) >= 0
        }
    }
}
