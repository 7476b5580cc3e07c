internal import Glibc

/// A file descriptor carried in a D-Bus message (type `h`), owned by this object and closed in `deinit`.
///
/// Received descriptors are duplicated out of the message (which owns its own copy), so they stay valid after
/// the message is gone. Two values are equal when they refer to the same open file (same device and inode), so a
/// descriptor that went through the bus compares equal to the one that was sent, although its number differs.
///
/// To hand the descriptor to code that closes it, take a ``duplicate()``; ``rawValue`` stays owned here.
public final class DBusFileDescriptor: Hashable, Sendable, CustomStringConvertible {
    /// The descriptor number. Owned by this object: do not close it.
    public let rawValue: Int32
    private let device: UInt64
    private let inode: UInt64

    /// Duplicates `descriptor` (with `F_DUPFD_CLOEXEC`); the caller keeps ownership of the original.
    /// - Throws: ``DBusError`` of kind `system` when `fcntl` or `fstat` fails (e.g. `EBADF`).
    public convenience init(duplicating descriptor: Int32) throws(DBusError) {
        let copy = fcntl(descriptor, F_DUPFD_CLOEXEC, 3)
        guard copy >= 0 else { throw DBusError.system("fcntl(F_DUPFD_CLOEXEC)", errno: errno) }
        try self.init(adopting: copy)
    }

    /// Takes ownership of `descriptor`: it is closed in `deinit`, or right away when this initializer throws.
    /// - Throws: ``DBusError`` of kind `system` when `fstat` fails.
    public init(adopting descriptor: Int32) throws(DBusError) {
        var status = stat()
        guard fstat(descriptor, &status) == 0 else {
            let error = DBusError.system("fstat", errno: errno)
            if descriptor >= 0 { close(descriptor) }
            throw error
        }
        rawValue = descriptor
        device = UInt64(status.st_dev)
        inode = UInt64(status.st_ino)
    }

    deinit {
        close(rawValue)
    }

    /// A new descriptor for the same open file, owned by the caller (close-on-exec set).
    /// - Throws: ``DBusError`` of kind `system` when `fcntl` fails (e.g. `EMFILE`).
    public func duplicate() throws(DBusError) -> Int32 {
        let copy = fcntl(rawValue, F_DUPFD_CLOEXEC, 3)
        guard copy >= 0 else { throw DBusError.system("fcntl(F_DUPFD_CLOEXEC)", errno: errno) }
        return copy
    }

    public static func == (lhs: DBusFileDescriptor, rhs: DBusFileDescriptor) -> Bool {
        lhs.device == rhs.device && lhs.inode == rhs.inode
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(device)
        hasher.combine(inode)
    }

    public var description: String { "fd \(rawValue)" }
}
