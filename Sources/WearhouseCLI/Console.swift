internal import Foundation
internal import Synchronization

/// Where a command writes: stdout carries data only, stderr diagnostics. Injected so tests can capture both.
public struct Console: Sendable {
    public var out: @Sendable (String) -> Void
    /// Bytes for stdout (an export's large writes); by default as text through ``out``.
    public var outBytes: @Sendable (UnsafeRawBufferPointer) -> Void
    public var err: @Sendable (String) -> Void
    /// Whether stdout is a terminal (progress bars, colours).
    public var isTerminal: Bool
    /// Whether stderr is a terminal (progress counts of commands whose data goes to stdout or a file).
    public var errorIsTerminal: Bool

    public init(
        out: @escaping @Sendable (String) -> Void, err: @escaping @Sendable (String) -> Void, isTerminal: Bool,
        errorIsTerminal: Bool = false, outBytes: (@Sendable (UnsafeRawBufferPointer) -> Void)? = nil
    ) {
        self.out = out
        self.outBytes = outBytes ?? { out(String(decoding: $0, as: UTF8.self)) }
        self.err = err
        self.isTerminal = isTerminal
        self.errorIsTerminal = errorIsTerminal
    }

    /// Whether a command writing data shows its progress on stderr: stderr is a terminal, and the data does not
    /// go to that same terminal (`dataOnTerminal`: it goes to stdout, and stdout is a terminal too).
    func showsProgress(dataOnTerminal: Bool) -> Bool {
        errorIsTerminal && !(dataOnTerminal && isTerminal)
    }

    /// The process's own stdout and stderr. When one of them can no longer be written (the reader of a pipe went
    /// away with SIGPIPE ignored, as under systemd; a full disk), the process ends with 74 (EX_IOERR) and a line
    /// on stderr naming the stream and the error, instead of trapping or going on writing into nothing.
    public static let standard = Console(
        out: { write($0, to: STDOUT_FILENO, name: "stdout") },
        err: { write($0, to: STDERR_FILENO, name: "stderr") },
        isTerminal: isatty(STDOUT_FILENO) != 0,
        errorIsTerminal: isatty(STDERR_FILENO) != 0,
        outBytes: { write($0, to: STDOUT_FILENO, name: "stdout") }
    )

    /// Writes `Error: message` and a hint to stderr.
    public func error(_ message: String, hint: String? = nil) {
        err("Error: \(message)\n" + (hint.map { "\($0)\n" } ?? ""))
    }

    /// Writes all of `text` to `descriptor` (retrying interrupted and partial writes); exits 74 when it cannot.
    static func write(_ text: String, to descriptor: Int32, name: String) {
        var text = text
        text.withUTF8 { write(UnsafeRawBufferPointer($0), to: descriptor, name: name) }
    }

    /// Writes all of `bytes` to `descriptor` (retrying interrupted and partial writes); exits 74 when it cannot.
    static func write(_ bytes: UnsafeRawBufferPointer, to descriptor: Int32, name: String) {
        guard let base = bytes.baseAddress else { return }
        var offset = 0
        while offset < bytes.count {
            let written = Foundation.write(descriptor, base + offset, bytes.count - offset)
            if written < 0 {
                let code = errno
                if code == EINTR { continue }
                if descriptor != STDERR_FILENO {
                    let line = "wearhouse: cannot write to \(name): \(String(cString: strerror(code))); stopping\n"
                    _ = line.utf8CString.withUnsafeBufferPointer {
                        Foundation.write(STDERR_FILENO, $0.baseAddress, $0.count - 1)
                    }
                }
                Foundation.exit(ExitCode.ioError.rawValue)
            }
            offset += written
        }
    }
}

/// `exported 1234567 samples` on stderr, redrawn in place at most every ``step`` samples, for commands whose total
/// is not known before they end (`export`, `samples`).
final class CountProgress: Sendable {
    static let step = 50_000
    let console: Console
    private let shown = Mutex(0)

    init(_ console: Console) {
        self.console = console
    }

    func show(_ count: Int) {
        let due = shown.withLock { last in
            guard count - last >= Self.step else { return false }
            last = count
            return true
        }
        if due { console.err("\r\(count) samples") }
    }

    func end() {
        console.err("\r" + String(repeating: " ", count: 24) + "\r")
    }
}
