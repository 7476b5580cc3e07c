import Foundation

/// An Apple Health export opened for reading: `export.zip` (read in place through ``ZipArchive``) or an unpacked
/// `export.xml` on disk, with the files beside it (workout routes, ECGs, clinical records).
public final class AppleHealthExport {
    enum Origin {
        case zip(ZipArchive, main: ZipArchive.Entry, prefix: String)
        case directory(String, main: String)
    }

    let origin: Origin
    /// What errors call the export.
    public let name: String
    /// The size of `export.xml`, uncompressed.
    public let size: Int64

    /// Whether the first bytes of `path` are a zip archive's (`PK\3\4`) or XML (`<`, after a byte-order mark and
    /// white space): the two forms an Apple Health export comes in.
    public static func format(ofFileAt path: String) -> Format? {
        guard let handle = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? handle.close() }
        let head = [UInt8]((try? handle.read(upToCount: 512)) ?? Data())
        if head.starts(with: [0x50, 0x4B, 0x03, 0x04]) { return .zip }
        var bytes = head[...]
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes = bytes.dropFirst(3) }
        if bytes.first(where: { ![0x20, 0x09, 0x0A, 0x0D].contains($0) }) == UInt8(ascii: "<") { return .xml }
        return nil
    }

    public enum Format: Sendable { case zip, xml }

    /// Opens the export at `path` in `format`: for a zip, the entry called `export.xml` (in any folder;
    /// `apple_health_export/export.xml` from the Health app).
    public init(path: String, format: Format) throws(XMLReadError) {
        name = path
        switch format {
        case .zip:
            let archive: ZipArchive
            do {
                archive = try ZipArchive(path: path)
            } catch {
                throw XMLReadError(line: 0, message: error.message, isRead: true)
            }
            guard
                let main = archive.entries.first(where: { $0.name == "export.xml" || $0.name.hasSuffix("/export.xml") })
            else {
                throw XMLReadError(
                    line: 0, message: "\(path) holds no export.xml; it is not an Apple Health export")
            }
            origin = .zip(archive, main: main, prefix: String(main.name.dropLast("export.xml".count)))
            size = main.size
        case .xml:
            let directory = (path as NSString).deletingLastPathComponent
            origin = .directory(directory.isEmpty ? "." : directory, main: path)
            size = ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? NSNumber)?.int64Value ?? 0
        }
    }

    /// A pull reader of `export.xml`.
    func mainReader() throws(XMLReadError) -> XMLPullReader {
        switch origin {
        case .zip(let archive, let main, _):
            return try reader(ofEntry: main, in: archive, name: "export.xml")
        case .directory(_, let main):
            return try reader(ofFile: main)
        }
    }

    /// A pull reader of the file at `path` inside the export (`/workout-routes/route_....gpx`) that keeps text, or
    /// `nil` when the export does not hold it.
    func reader(ofExportFile path: String) throws(XMLReadError) -> XMLPullReader? {
        let relative = path.hasPrefix("/") ? String(path.dropFirst()) : path
        guard !relative.split(separator: "/").contains("..") else { return nil }
        switch origin {
        case .zip(let archive, _, let prefix):
            guard let entry = archive.entry(named: prefix + relative) else { return nil }
            return try reader(ofEntry: entry, in: archive, name: relative, keepsText: true)
        case .directory(let directory, _):
            let full = directory + "/" + relative
            guard FileManager.default.fileExists(atPath: full) else { return nil }
            return try reader(ofFile: full, keepsText: true)
        }
    }

    /// The export's other files by folder (`electrocardiograms`, `clinical-records`, ...), with their counts: what
    /// the model does not hold, so that the summary names it. `workout-routes` is left out (routes are read with
    /// their workouts), and so is `export_cda.xml` (the same data as `export.xml`, in HL7 CDA form), which is
    /// named separately.
    func otherFiles() -> [String: Int] {
        var names: [String] = []
        switch origin {
        case .zip(let archive, let main, let prefix):
            names = archive.entries.filter { $0.name != main.name && $0.name.hasPrefix(prefix) }
                .map { String($0.name.dropFirst(prefix.count)) }
        case .directory(let directory, _):
            for folder in ["electrocardiograms", "clinical-records"] {
                let files = (try? FileManager.default.contentsOfDirectory(atPath: directory + "/" + folder)) ?? []
                names += files.map { folder + "/" + $0 }
            }
        }
        var counts: [String: Int] = [:]
        for name in names where !name.hasSuffix("/") {
            let parts = name.split(separator: "/")
            let key = parts.count > 1 ? String(parts[0]) + "/" : name
            guard key != "workout-routes/" else { continue }
            counts[key, default: 0] += 1
        }
        return counts
    }

    private func reader(
        ofEntry entry: ZipArchive.Entry, in archive: ZipArchive, name: String, keepsText: Bool = false
    ) throws(XMLReadError) -> XMLPullReader {
        let stream: ZipEntryStream
        do {
            stream = try archive.open(entry)
        } catch {
            throw XMLReadError(line: 0, message: error.message, isRead: true)
        }
        return try XMLPullReader(name: name, keepsText: keepsText) { buffer in try stream.read(into: buffer) }
    }

    private func reader(ofFile path: String, keepsText: Bool = false) throws(XMLReadError) -> XMLPullReader {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw XMLReadError(
                line: 0, message: "cannot read \(path): \(String(cString: strerror(errno)))", isRead: true)
        }
        let file = FileDescriptorInput(descriptor: descriptor)
        return try XMLPullReader(name: path, keepsText: keepsText) { buffer in try file.read(into: buffer) }
    }
}

/// A file read through its descriptor, closed when released.
final class FileDescriptorInput {
    let descriptor: Int32

    init(descriptor: Int32) { self.descriptor = descriptor }

    deinit { close(descriptor) }

    func read(into buffer: UnsafeMutableRawBufferPointer) throws(XMLReadError) -> Int {
        while true {
            let count = Foundation.read(descriptor, buffer.baseAddress, buffer.count)
            if count < 0, errno == EINTR { continue }
            guard count >= 0 else {
                throw XMLReadError(line: 0, message: String(cString: strerror(errno)), isRead: true)
            }
            return count
        }
    }
}

@available(*, unavailable)
extension AppleHealthExport: Sendable {}
