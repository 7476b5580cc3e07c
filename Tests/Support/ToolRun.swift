internal import Foundation

/// What a program run to completion said: exit status, stdout, stderr.
public struct ToolRun: Sendable {
    public var status: Int32
    public var stdout: String
    public var stderr: String

    public init(status: Int32, stdout: String, stderr: String) {
        self.status = status
        self.stdout = stdout
        self.stderr = stderr
    }
}

/// Runs `path` with `arguments` to completion (the `wearhouse` binary, busctl, bluetoothctl, systemd-analyze),
/// feeding `stdin` when given. Both pipes are read on their own threads before waiting, so a child that writes
/// a lot to either cannot block.
public func runTool(
    _ path: String, _ arguments: [String], environment: [String: String]? = nil, stdin: String? = nil
) throws -> ToolRun {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: path)
    process.arguments = arguments
    if let environment { process.environment = environment }
    let out = Pipe()
    let err = Pipe()
    let input = Pipe()
    process.standardOutput = out
    process.standardError = err
    process.standardInput = input
    try process.run()
    if let stdin { input.fileHandleForWriting.write(Data(stdin.utf8)) }
    try input.fileHandleForWriting.close()
    let errors = ErrorReader(err.fileHandleForReading)
    let outData = out.fileHandleForReading.readDataToEndOfFile()
    let errData = errors.wait()
    process.waitUntilExit()
    return ToolRun(
        status: process.terminationStatus, stdout: String(decoding: outData, as: UTF8.self),
        stderr: String(decoding: errData, as: UTF8.self))
}

/// Reads a pipe to its end on a thread of its own.
private final class ErrorReader: @unchecked Sendable {
    // @unchecked Sendable: `data` is written by the reading thread before `done` is signalled, read after.
    private var data = Data()
    private let done = DispatchSemaphore(value: 0)

    init(_ handle: FileHandle) {
        Thread.detachNewThread { [self] in
            data = handle.readDataToEndOfFile()
            done.signal()
        }
    }

    func wait() -> Data {
        done.wait()
        return data
    }
}

/// Runs `work` (a blocking wait: a program run to completion, a process's exit) on a thread of its own and awaits
/// it, leaving the concurrency pool's threads free. A test whose own process serves the program it waits for (a
/// FakeBlueZ on a private bus, whose agent calls and clock run as tasks) must wait so: two such tests blocking a pool
/// thread each took both of the machine's two, and a `Pair` then waited for an agent call that never started.
public func offPool<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread.detachNewThread { continuation.resume(with: Result { try work() }) }
    }
}
