internal import Dispatch

/// A serial executor on its own dispatch queue, for a store engine's actor: the one place its
/// database connection is used, so blocking SQLite or libpq calls never run on the cooperative pool (GRDB's
/// pattern).
public final class StoreExecutor: SerialExecutor {
    private let queue: DispatchQueue

    public init(label: String) {
        queue = DispatchQueue(label: label, qos: .userInitiated)
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedSerialExecutor()
        queue.async { job.runSynchronously(on: executor) }
    }

    public func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        UnownedSerialExecutor(ordinary: self)
    }
}
