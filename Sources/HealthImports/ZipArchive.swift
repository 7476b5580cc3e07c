internal import CLibZip
import Foundation

/// Why a zip archive or one of its entries could not be read.
public struct ZipError: Error, CustomStringConvertible, Sendable {
    public var message: String

    public init(_ message: String) { self.message = message }

    public var description: String { message }
}

/// A zip archive opened read-only in place: libzip, wrapped once (the only user of `CLibZip`). It lists the
/// entries and streams one at a time, never unpacking to disk.
///
/// Limits: at most ``maximumEntries`` entries; an entry may declare at most ``maximumEntryBytes`` and at most
/// ``maximumRatio`` times its compressed size (deflate's own ceiling is about 1,032:1; real XML compresses 10-30:1,
/// so only crafted or padded data goes past it); an entry that yields more than it declares, or fails its CRC, is
/// refused where it happens. Not thread-safe: one owner reads it.
public final class ZipArchive {
    public static let maximumEntries = 1_000_000
    public static let maximumEntryBytes: Int64 = 64 << 30
    public static let maximumRatio: Int64 = 500

    public struct Entry: Sendable, Hashable {
        public var index: Int
        public var name: String
        /// The uncompressed size the archive declares, and the compressed one.
        public var size: Int64
        public var compressedSize: Int64
    }

    private let archive: OpaquePointer
    public let path: String
    public private(set) var entries: [Entry] = []

    public init(path: String) throws(ZipError) {
        var code: Int32 = 0
        guard let archive = zip_open(path, ZIP_RDONLY | ZIP_CHECKCONS, &code) else {
            var error = zip_error_t()
            zip_error_init_with_code(&error, code)
            defer { zip_error_fini(&error) }
            throw ZipError("\(path) is not a readable zip archive: \(String(cString: zip_error_strerror(&error)))")
        }
        self.archive = archive
        self.path = path
        let count = zip_get_num_entries(archive, 0)
        guard count >= 0, count <= Int64(Self.maximumEntries) else {
            zip_discard(archive)
            throw ZipError("\(path) holds \(count) entries; at most \(Self.maximumEntries) are read")
        }
        for index in 0..<count {
            var status = zip_stat_t()
            zip_stat_init(&status)
            guard zip_stat_index(archive, zip_uint64_t(index), 0, &status) == 0, let name = status.name else {
                continue
            }
            entries.append(
                Entry(
                    index: Int(index), name: String(cString: name), size: Int64(clamping: status.size),
                    compressedSize: Int64(clamping: status.comp_size)))
        }
    }

    deinit { zip_discard(archive) }

    /// The entry called `name`, if there is one.
    public func entry(named name: String) -> Entry? {
        entries.first { $0.name == name }
    }

    /// A stream of `entry`'s uncompressed bytes.
    public func open(_ entry: Entry) throws(ZipError) -> ZipEntryStream {
        guard entry.size <= Self.maximumEntryBytes else {
            throw ZipError("\(entry.name) declares \(entry.size) bytes; at most \(Self.maximumEntryBytes) are read")
        }
        if entry.size > 1 << 20, entry.size / max(entry.compressedSize, 1) > Self.maximumRatio {
            throw ZipError(
                "\(entry.name) declares \(entry.size) bytes from \(entry.compressedSize) compressed, more than "
                    + "\(Self.maximumRatio):1; it looks like a zip bomb and is not read")
        }
        guard let file = zip_fopen_index(archive, zip_uint64_t(entry.index), 0) else {
            throw ZipError("cannot open \(entry.name) in \(path): \(String(cString: zip_strerror(archive)))")
        }
        return ZipEntryStream(file: file, entry: entry, owner: self)
    }
}

/// One entry's bytes, read in order; it keeps its archive open.
public final class ZipEntryStream {
    private let file: OpaquePointer
    private let owner: ZipArchive
    public let entry: ZipArchive.Entry
    /// Uncompressed bytes read so far.
    public private(set) var bytesRead: Int64 = 0

    init(file: OpaquePointer, entry: ZipArchive.Entry, owner: ZipArchive) {
        self.file = file
        self.entry = entry
        self.owner = owner
    }

    deinit { zip_fclose(file) }

    /// Reads up to `buffer.count` bytes into `buffer`; 0 at the end of the entry.
    public func read(into buffer: UnsafeMutableRawBufferPointer) throws(ZipError) -> Int {
        guard let base = buffer.baseAddress, !buffer.isEmpty else { return 0 }
        let count = zip_fread(file, base, zip_uint64_t(buffer.count))
        guard count >= 0 else {
            throw ZipError("cannot read \(entry.name): \(String(cString: zip_file_strerror(file)))")
        }
        bytesRead += count
        guard bytesRead <= entry.size else {
            throw ZipError("\(entry.name) holds more than the \(entry.size) bytes its header declares")
        }
        return Int(count)
    }
}

@available(*, unavailable)
extension ZipArchive: Sendable {}

@available(*, unavailable)
extension ZipEntryStream: Sendable {}
