internal import Glibc
import Synchronization

/// A program run as a child with `posix_spawn`, inheriting no descriptor but its three standard ones.
///
/// For the processes that start many children from many threads at once (the test runner, `wearhouse demo`), in
/// place of Foundation's `Process`, whose child inherits whatever descriptors the parent's other threads have open
/// as it starts: the write end of a pipe another test then read forever, or the socket through which `Process`
/// learns that another child has exited, so that its `waitUntilExit` waits on until that other child ends (a CI
/// run, 2026-12-06, stopped after 20 minutes with every bus test stuck). Here the child closes every descriptor
/// from 3 up as it starts (glibc's `posix_spawn_file_actions_addclosefrom_np`), and the pipes made for it are
/// close-on-exec.
///
/// ```swift
/// let daemon = try ChildProcess.start("/usr/bin/dbus-daemon", ["--nofork"], output: .descriptor(pipe.write))
/// daemon.signal(SIGKILL)
/// let exit = daemon.wait()
/// ```
public final class ChildProcess: Sendable {
    /// The child's process ID: valid to signal until ``wait()`` has reaped it, which ``signal(_:)`` checks.
    public let pid: Int32
    /// The wait status once reaped; the lock is also what keeps a signal from reaching a reused ID.
    private let reaped = Mutex<ChildExit?>(nil)

    private init(pid: Int32) {
        self.pid = pid
    }

    /// Where one of the child's standard streams goes.
    public enum Stream: Sendable {
        /// `/dev/null`.
        case null
        /// The parent's own stream.
        case inherited
        /// A file the child opens: read for standard input; else written, created with mode 0644 and emptied
        /// first unless `append`.
        case file(String, append: Bool)
        /// A descriptor of the parent's (a pipe's end, numbered 3 or more), duplicated onto the stream; the parent
        /// still owns it.
        case descriptor(Int32)
        /// For standard error only: wherever standard output goes (`2>&1`).
        case sameAsOutput
    }

    /// Starts `path` with `arguments` (not counting the program's own name) and `environment` (the parent's when
    /// nil). Standard input is `/dev/null` unless given.
    /// - Throws: ``ChildProcessError`` when the program cannot be started (missing, not executable, no memory).
    public static func start(
        _ path: String, _ arguments: [String], environment: [String: String]? = nil, input: Stream = .null,
        output: Stream = .inherited, errors: Stream = .inherited
    ) throws(ChildProcessError) -> ChildProcess {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for (stream, target) in [(input, Int32(0)), (output, 1), (errors, 2)] {
            switch stream {
            case .null:
                posix_spawn_file_actions_addopen(&actions, target, "/dev/null", target == 0 ? O_RDONLY : O_WRONLY, 0)
            case .inherited:
                break
            case .file(let file, let append):
                let flags = target == 0 ? O_RDONLY : O_WRONLY | O_CREAT | (append ? O_APPEND : O_TRUNC)
                posix_spawn_file_actions_addopen(&actions, target, file, flags, 0o644)
            case .descriptor(let descriptor):
                posix_spawn_file_actions_adddup2(&actions, descriptor, target)
            case .sameAsOutput:
                posix_spawn_file_actions_adddup2(&actions, 1, target)
            }
        }
        guard let addCloseFrom else {
            throw ChildProcessError("this C library cannot close a child's descriptors (glibc 2.34 or later can)")
        }
        let added = addCloseFrom(&actions, 3)
        guard added == 0 else { throw ChildProcessError("posix_spawn_file_actions_addclosefrom_np", errno: added) }

        // The child starts with no signal blocked and the usual signals at their defaults, whatever the spawning
        // thread had (a test runner blocks SIGTERM, and a blocked SIGTERM would stay pending in the child).
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var unblocked = sigset_t()
        sigemptyset(&unblocked)
        posix_spawnattr_setsigmask(&attributes, &unblocked)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for number in [SIGHUP, SIGINT, SIGQUIT, SIGPIPE, SIGALRM, SIGTERM, SIGUSR1, SIGUSR2, SIGCHLD] {
            sigaddset(&defaults, number)
        }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        defer { for argument in argv { free(argument) } }
        let environmentLines = environment.map { $0.map { strdup("\($0.key)=\($0.value)") } + [nil] }
        defer { for line in environmentLines ?? [] { free(line) } }
        var pid: pid_t = 0
        let spawned =
            if let environmentLines {
                posix_spawn(&pid, path, &actions, &attributes, argv, environmentLines)
            } else {
                posix_spawn(&pid, path, &actions, &attributes, argv, environ)
            }
        guard spawned == 0 else { throw ChildProcessError("cannot run \(path)", errno: spawned) }
        return ChildProcess(pid: pid)
    }

    /// Runs `path` to its end, feeding it `input` (`/dev/null` when nil), and returns what it
    /// wrote to standard output and error, read as it writes them so that neither pipe fills. Blocks the calling
    /// thread: call it through an async wrapper that keeps the concurrency pool free when the program may wait
    /// for this process.
    public static func run(
        _ path: String, _ arguments: [String], environment: [String: String]? = nil, input: [UInt8]? = nil
    ) throws(ChildProcessError) -> ChildOutput {
        var made: [Int32] = []
        let output: (read: Int32, write: Int32)
        let errors: (read: Int32, write: Int32)
        var feed: (read: Int32, write: Int32)?
        let child: ChildProcess
        do throws(ChildProcessError) {
            output = try pipe()
            made += [output.read, output.write]
            errors = try pipe()
            made += [errors.read, errors.write]
            if input != nil {
                let ends = try pipe()
                made += [ends.read, ends.write]
                feed = ends
            }
            child = try start(
                path, arguments, environment: environment, input: feed.map { .descriptor($0.read) } ?? .null,
                output: .descriptor(output.write), errors: .descriptor(errors.write))
        } catch {
            for end in made { close(end) }
            throw error
        }
        close(output.write)
        close(errors.write)
        if let feed { close(feed.read) }
        let (stdout, stderr) = exchange(input ?? [], into: feed?.write, from: output.read, errors.read)
        return ChildOutput(exit: child.wait(), stdout: stdout, stderr: stderr)
    }

    /// Writes `input` to `feed` (then closes it) while reading `output` and `errors` to their ends (then closes
    /// them), with `poll`, on the calling thread.
    private static func exchange(
        _ input: [UInt8], into feed: Int32?, from output: Int32, _ errors: Int32
    ) -> ([UInt8], [UInt8]) {
        var collected: [[UInt8]] = [[], []]
        var open: [Int32?] = [output, errors]
        var writer = feed
        var written = 0
        if let feed {
            _ = fcntl(feed, F_SETFL, fcntl(feed, F_GETFL) | O_NONBLOCK)
            if input.isEmpty {
                close(feed)
                writer = nil
            }
        }
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while open.contains(where: { $0 != nil }) || writer != nil {
            var polled = open.map { pollfd(fd: $0 ?? -1, events: Int16(POLLIN), revents: 0) }
            polled.append(pollfd(fd: writer ?? -1, events: Int16(POLLOUT), revents: 0))
            guard poll(&polled, nfds_t(polled.count), -1) >= 0 || errno == EINTR else { break }
            for index in 0..<2 {
                guard let descriptor = open[index], polled[index].revents != 0 else { continue }
                let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
                if count > 0 {
                    collected[index] += buffer[0..<count]
                } else if count == 0 || (errno != EINTR && errno != EAGAIN) {
                    close(descriptor)
                    open[index] = nil
                }
            }
            if let descriptor = writer, polled[2].revents != 0 {
                let count = withoutBrokenPipeSignal {
                    input.withUnsafeBytes { raw in write(descriptor, raw.baseAddress! + written, raw.count - written) }
                }
                if count > 0 { written += count }
                // The child closed its input before reading all of it: the rest is not wanted.
                let refused = count < 0 && errno != EINTR && errno != EAGAIN
                if written == input.count || refused {
                    close(descriptor)
                    writer = nil
                }
            }
        }
        for descriptor in open + [writer] { if let descriptor { close(descriptor) } }
        return (collected[0], collected[1])
    }

    /// Runs `write` with SIGPIPE blocked on this thread, and takes away a SIGPIPE it raised: a child that closed
    /// its input makes the write fail with `EPIPE` instead of ending this process.
    private static func withoutBrokenPipeSignal(_ write: () -> Int) -> Int {
        var pipeSignal = sigset_t()
        sigemptyset(&pipeSignal)
        sigaddset(&pipeSignal, SIGPIPE)
        var previous = sigset_t()
        pthread_sigmask(SIG_BLOCK, &pipeSignal, &previous)
        let count = write()
        let failure = errno
        if count < 0, failure == EPIPE, sigismember(&previous, SIGPIPE) == 0 {
            var now = timespec()
            _ = sigtimedwait(&pipeSignal, nil, &now)
        }
        pthread_sigmask(SIG_SETMASK, &previous, nil)
        errno = failure
        return count
    }

    /// A pipe whose two ends are close-on-exec, so that no other child inherits them (hand one to a child with
    /// ``Stream/descriptor(_:)``). The caller closes both.
    public static func pipe() throws(ChildProcessError) -> (read: Int32, write: Int32) {
        var ends: [Int32] = [-1, -1]
        guard let makePipe else { throw ChildProcessError("this C library has no pipe2") }
        guard makePipe(&ends, O_CLOEXEC) == 0 else { throw ChildProcessError("pipe2", errno: errno) }
        return (ends[0], ends[1])
    }

    /// Sends `number` to the child, unless it has already been reaped (its ID may then be another process's).
    public func signal(_ number: Int32) {
        reaped.withLock { reaped in
            if reaped == nil { _ = kill(pid, number) }
        }
    }

    /// Whether the child has not exited yet; when it has, it is reaped.
    public var isRunning: Bool {
        reaped.withLock { reaped in
            if reaped == nil { reaped = Self.reap(pid, blocking: false) }
            return reaped == nil
        }
    }

    /// Waits for the child to exit, blocking the calling thread, and reaps it. Idempotent; any thread.
    @discardableResult
    public func wait() -> ChildExit {
        // Once reaped, the ID may be another child's: not waited on again.
        if let reaped = reaped.withLock({ $0 }) { return reaped }
        // Waits without reaping, then reaps under the lock, so that `signal` never reaches a reused ID.
        var information = siginfo_t()
        while waitid(P_PID, id_t(pid), &information, WEXITED | WNOWAIT) < 0, errno == EINTR {}
        return reaped.withLock { reaped in
            if let reaped { return reaped }
            let exit = Self.reap(pid, blocking: true) ?? ChildExit(raw: 0xFF00)
            reaped = exit
            return exit
        }
    }

    /// Waits for the child to exit on a thread of its own, leaving the concurrency pool's threads free. Not
    /// cancellable: signal the child to end the wait.
    public func exit() async -> ChildExit {
        let child = self
        return await withCheckedContinuation { continuation in
            detachThread { continuation.resume(returning: child.wait()) }
        }
    }

    /// `waitpid` for `pid`: its status, or nil while it runs (not blocking). A child someone else reaped
    /// (`ECHILD`) counts as exited with status 255.
    private static func reap(_ pid: Int32, blocking: Bool) -> ChildExit? {
        var status: Int32 = 0
        while true {
            let result = waitpid(pid, &status, blocking ? 0 : WNOHANG)
            if result == pid { return ChildExit(raw: status) }
            if result == 0 { return nil }
            if errno != EINTR { return ChildExit(raw: 0xFF00) }
        }
    }

    /// glibc's `pipe2`, which Swift's Glibc module does not declare.
    private typealias MakePipe = @convention(c) (UnsafeMutablePointer<Int32>, Int32) -> Int32
    private static let makePipe: MakePipe? = dlsym(nil, "pipe2").map { unsafeBitCast($0, to: MakePipe.self) }

    /// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34 and later), which Swift's Glibc module does not
    /// declare.
    private typealias AddCloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
    private static let addCloseFrom: AddCloseFrom? = dlsym(nil, "posix_spawn_file_actions_addclosefrom_np").map {
        unsafeBitCast($0, to: AddCloseFrom.self)
    }
}

/// How a child ended: its `waitpid` status.
public struct ChildExit: Sendable, Equatable, CustomStringConvertible {
    public let raw: Int32

    public init(raw: Int32) {
        self.raw = raw
    }

    /// Whether it exited (rather than being killed by a signal).
    public var exited: Bool { raw & 0x7F == 0 }
    /// Its exit code, or the number of the signal that killed it (as Foundation's `terminationStatus`).
    public var status: Int32 { exited ? (raw >> 8) & 0xFF : raw & 0x7F }
    /// Whether it exited with code 0.
    public var succeeded: Bool { exited && status == 0 }

    public var description: String { exited ? "exit code \(status)" : "signal \(status)" }
}

/// What a program run to its end wrote, and how it ended.
public struct ChildOutput: Sendable {
    public var exit: ChildExit
    public var stdout: [UInt8]
    public var stderr: [UInt8]
}

/// Why a child could not be started.
public struct ChildProcessError: Error, CustomStringConvertible {
    public let description: String

    init(_ what: String, errno code: Int32? = nil) {
        description = code.map { "\(what): \(String(cString: strerror($0)))" } ?? what
    }
}

/// Runs `work` on a new detached thread.
private func detachThread(_ work: @escaping @Sendable () -> Void) {
    final class Box: @unchecked Sendable {
        // @unchecked Sendable: handed to exactly one thread.
        let work: @Sendable () -> Void
        init(_ work: @escaping @Sendable () -> Void) { self.work = work }
    }
    let box = Unmanaged.passRetained(Box(work)).toOpaque()
    var thread = pthread_t()
    let created = pthread_create(
        &thread, nil,
        { context in
            guard let context else { return nil }
            Unmanaged<Box>.fromOpaque(context).takeRetainedValue().work()
            return nil
        }, box)
    if created == 0 {
        pthread_detach(thread)
    } else {
        Unmanaged<Box>.fromOpaque(box).takeRetainedValue().work()
    }
}
