internal import Foundation
internal import Support

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
/// feeding `stdin` when given; both outputs are read as the program writes them (`ChildProcess.run`, whose child
/// inherits none of the descriptors the other tests have open).
public func runTool(
    _ path: String, _ arguments: [String], environment: [String: String]? = nil, stdin: String? = nil
) throws -> ToolRun {
    let output = try ChildProcess.run(path, arguments, environment: environment, input: stdin.map { Array($0.utf8) })
    return ToolRun(
        status: output.exit.status, stdout: String(decoding: output.stdout, as: UTF8.self),
        stderr: String(decoding: output.stderr, as: UTF8.self))
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
