import Glibc
import Support
import Testing

/// `ChildProcess`, the way the tests and `wearhouse demo` start programs: real children of this test process.
@Suite struct ChildProcessTests {
    @Test func aProgramRunToItsEndGivesItsOutputsAndExitCode() throws {
        let ran = try ChildProcess.run("/bin/sh", ["-c", "echo out; echo err >&2; exit 3"])
        #expect(String(decoding: ran.stdout, as: UTF8.self) == "out\n")
        #expect(String(decoding: ran.stderr, as: UTF8.self) == "err\n")
        #expect(ran.exit.exited && ran.exit.status == 3 && !ran.exit.succeeded)
        #expect(ran.exit.description == "exit code 3")
    }

    /// A megabyte each way: the input is written while the output is read, so neither pipe fills and stops both.
    @Test func largeInputAndOutputDoNotBlockEachOther() throws {
        let input = (0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        let ran = try ChildProcess.run("/bin/sh", ["-c", "cat; cat /dev/zero | head -c 1048576 >&2"], input: input)
        #expect(ran.stdout == input)
        #expect(ran.stderr.count == 1 << 20)
        #expect(ran.exit.succeeded)
    }

    /// A child that exits without reading its input: the write fails with EPIPE, and this process goes on.
    @Test func inputTheChildDoesNotReadIsDroppedWithoutABrokenPipeSignal() throws {
        let ran = try ChildProcess.run("/bin/true", [], input: [UInt8](repeating: 7, count: 1 << 22))
        #expect(ran.exit.succeeded)
    }

    /// The child has its three standard descriptors and no other, even one this process opened without
    /// close-on-exec (as Foundation's `Pipe` does).
    @Test func theChildInheritsOnlyItsStandardDescriptors() throws {
        var leaky: [Int32] = [-1, -1]
        #expect(pipe(&leaky) == 0)
        defer { for end in leaky { close(end) } }
        let check = "for f in 0 1 2 \(leaky[0]) \(leaky[1]); do [ -e /proc/$$/fd/$f ] && echo $f; done; true"
        let ran = try ChildProcess.run("/bin/sh", ["-c", check])
        #expect(String(decoding: ran.stdout, as: UTF8.self) == "0\n1\n2\n", "pipe \(leaky)")
    }

    @Test func theEnvironmentIsTheOneGiven() throws {
        let ran = try ChildProcess.run("/usr/bin/env", [], environment: ["ONLY": "this one"])
        #expect(String(decoding: ran.stdout, as: UTF8.self) == "ONLY=this one\n")
    }

    /// A thread that blocks SIGTERM (as the test runner's do) still starts children that SIGTERM ends.
    @Test func theChildStartsWithNoSignalBlocked() async throws {
        var terminate = sigset_t()
        sigemptyset(&terminate)
        sigaddset(&terminate, SIGTERM)
        var previous = sigset_t()
        pthread_sigmask(SIG_BLOCK, &terminate, &previous)
        let child = try ChildProcess.start("/bin/sleep", ["30"])
        pthread_sigmask(SIG_SETMASK, &previous, nil)
        #expect(child.isRunning)
        child.signal(SIGTERM)
        let exit = await child.exit()
        #expect(!exit.exited && exit.status == SIGTERM && exit.description == "signal 15")
        #expect(!child.isRunning)
        child.signal(SIGKILL)  // reaped: nothing is sent to whichever process has its ID now
        #expect(child.wait() == exit)
    }

    @Test func streamsGoToFilesAndStandardErrorCanFollowStandardOutput() throws {
        let path = "/tmp/wearhouse-child-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).txt"
        defer { unlink(path) }
        for _ in 0..<2 {
            let child = try ChildProcess.start(
                "/bin/sh", ["-c", "echo one; echo two >&2"], output: .file(path, append: true), errors: .sameAsOutput)
            #expect(child.wait().succeeded)
        }
        let ran = try ChildProcess.run("/bin/cat", [path])
        #expect(String(decoding: ran.stdout, as: UTF8.self) == "one\ntwo\none\ntwo\n")
    }

    @Test func aMissingProgramIsAClearError() {
        #expect {
            try ChildProcess.start("/nonexistent/program", [])
        } throws: { error in
            "\(error)".contains("/nonexistent/program") && "\(error)".contains("No such file")
        }
    }
}
