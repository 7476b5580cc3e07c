import Foundation

/// Who is calling, as the service works it out from the bus's peer credentials, never from anything the caller
/// sends: the kernel-verified UID (`UnixUserID`) and process (`ProcessID`) the bus daemon reports, then what
/// `/proc/<pid>` says about that process.
///
/// The app id (``appID``) is what the store's grants are keyed on and what `wearhouse apps` lists:
///
/// - `uid<N>:<unit>` for a systemd service (`uid0:heart-monitor.service`), from `/proc/<pid>/cgroup`; a Flatpak app
///   is `uid<N>:flatpak:<app id>`;
/// - `uid<N>:<script>` for a program run by an interpreter (`uid1000:/home/ann/bin/today.py`);
/// - `uid<N>:<executable>` otherwise (`uid1000:/usr/bin/busctl`), from `/proc/<pid>/exe`, or from the command
///   line when the service may not read that link (another user's process, and the service is not root);
/// - `uid<N>` when nothing else can be read.
///
/// The UID part is as strong as the kernel: one user can never act as another user's app. The part after it is as
/// strong as Linux makes it without a sandbox: any program of the same user could start the same executable, so
/// apps of one user are told apart, not isolated from each other (Flatpak apps are: their ids come from the
/// sandbox).
public struct AppIdentity: Hashable, Sendable, CustomStringConvertible {
    public var uid: UInt32
    public var pid: UInt32?
    /// The systemd unit (or `flatpak:<id>`) the process runs in, when it is an app's own.
    public var unit: String?
    /// The script or executable.
    public var program: String?

    public init(uid: UInt32, pid: UInt32? = nil, unit: String? = nil, program: String? = nil) {
        self.uid = uid
        self.pid = pid
        self.unit = unit
        self.program = program
    }

    /// The id grants are keyed on.
    public var appID: String {
        guard let name = unit ?? program, !name.isEmpty else { return "uid\(uid)" }
        return "uid\(uid):\(name)"
    }

    public var description: String { appID }

    /// Reads what `/proc` says about `pid` (under `procRoot`, for tests).
    public static func resolve(uid: UInt32, pid: UInt32?, procRoot: String = "/proc") -> AppIdentity {
        var identity = AppIdentity(uid: uid, pid: pid)
        guard let pid, pid > 0 else { return identity }
        let directory = "\(procRoot)/\(pid)"
        if let cgroup = try? String(contentsOfFile: "\(directory)/cgroup", encoding: .utf8) {
            identity.unit = unit(fromCgroup: cgroup)
        }
        let arguments = commandLine(directory)
        let executable = link("\(directory)/exe")
        identity.program = program(
            executable: executable, arguments: arguments, workingDirectory: link("\(directory)/cwd"))
        return identity
    }

    /// The app's own unit from `/proc/<pid>/cgroup`: a service (not a user manager's `user@N.service`), or a
    /// Flatpak scope; `nil` for login sessions, terminals and containers (`0::/`).
    static func unit(fromCgroup text: String) -> String? {
        let lines = text.split(separator: "\n")
        let path =
            lines.first { $0.hasPrefix("0::") }.map { String($0.dropFirst(3)) }
            ?? lines.first { $0.contains(":name=systemd:") }.map { String($0.split(separator: ":").last ?? "") }
        guard let path, let last = path.split(separator: "/").last.map(String.init) else { return nil }
        if last.hasPrefix("app-flatpak-"), last.hasSuffix(".scope") {
            // app-flatpak-<app id>-<instance>.scope
            let body = last.dropFirst("app-flatpak-".count).dropLast(".scope".count)
            guard let dash = body.lastIndex(of: "-") else { return nil }
            return "flatpak:" + body[..<dash]
        }
        guard last.hasSuffix(".service") else { return nil }
        let managers = ["user@", "user-runtime-dir@", "session-", "init.scope"]
        if managers.contains(where: { last.hasPrefix($0) }) { return nil }
        return last
    }

    /// Interpreters whose first non-option argument is the program that runs.
    static let interpreters: [String] = [
        "python", "perl", "ruby", "node", "nodejs", "bash", "sh", "dash", "zsh", "gjs", "lua", "php", "tclsh",
    ]

    /// The script an interpreter runs, or the executable.
    static func program(executable: String?, arguments: [String], workingDirectory: String?) -> String? {
        let binary = executable ?? arguments.first.flatMap { $0.isEmpty ? nil : $0 }
        guard let binary else { return nil }
        let name = (binary as NSString).lastPathComponent
        let base = String(name.prefix { !$0.isNumber && $0 != "." })
        guard interpreters.contains(base) else { return binary }
        var rest = arguments.dropFirst()
        while let argument = rest.first {
            rest = rest.dropFirst()
            if argument == "-m", let module = rest.first { return "\(binary) -m \(module)" }
            if argument == "-c" || argument == "-e" { return binary }
            if argument.hasPrefix("-") { continue }
            if argument.hasPrefix("/") { return (argument as NSString).standardizingPath }
            guard let workingDirectory else { return argument }
            return ((workingDirectory as NSString).appendingPathComponent(argument) as NSString).standardizingPath
        }
        return binary
    }

    private static func commandLine(_ directory: String) -> [String] {
        guard let data = FileManager.default.contents(atPath: "\(directory)/cmdline") else { return [] }
        return data.split(separator: 0, omittingEmptySubsequences: false).map { String(decoding: $0, as: UTF8.self) }
            .filter { !$0.isEmpty }
    }

    private static func link(_ path: String) -> String? {
        guard var target = try? FileManager.default.destinationOfSymbolicLink(atPath: path) else { return nil }
        if target.hasSuffix(" (deleted)") { target.removeLast(" (deleted)".count) }
        return target
    }
}
