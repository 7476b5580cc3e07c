/// Process exit codes, from sysexits(3).
public struct ExitCode: Equatable, Sendable {
    public var rawValue: Int32
    public init(_ rawValue: Int32) { self.rawValue = rawValue }

    public static let success = ExitCode(0)
    public static let failure = ExitCode(1)
    /// Bad command line.
    public static let usage = ExitCode(64)
    /// Bad input data (hex, trace, import file).
    public static let dataError = ExitCode(65)
    /// An input file is missing.
    public static let noInput = ExitCode(66)
    /// BlueZ, D-Bus or the store is not reachable.
    public static let unavailable = ExitCode(69)
    /// An internal error.
    public static let software = ExitCode(70)
    public static let ioError = ExitCode(74)
    /// Permission denied (a store the user may not read).
    public static let noPermission = ExitCode(77)
    public static let config = ExitCode(78)
}
