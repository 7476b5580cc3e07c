import Foundation

/// Who is calling, as the service works it out from the bus's peer credentials, never from anything the caller
/// sends: the kernel-verified UID (`UnixUserID`) and process (`ProcessID`) the bus daemon reports, then what
/// `/proc/<pid>` says about that process.
///
/// The app id (``appID``) is what the store's grants are keyed on and what `wearhouse apps` lists:
///
/// - `uid<N>:<unit>` for a systemd service (`uid0:heart-monitor.service`), from `/proc/<pid>/cgroup`; a Flatpak app
///   is `uid<N>:flatpak:<app id>`, from the sandbox's `/.flatpak-info` (or its scope's name in the cgroup);
/// - `uid<N>:<script>` for a program run by an interpreter (`uid1000:/home/ann/bin/today.py`), the script's path
///   from the command line resolved against `/proc/<pid>/cwd`;
/// - `uid<N>:<executable>` otherwise (`uid1000:/usr/bin/busctl`), from `/proc/<pid>/exe`;
/// - `uid<N>` when the kernel shows none of these (the service lacks `CAP_SYS_PTRACE`, which the shipped unit gives
///   it, to read another user's links). The command line's first word is never used: a caller chooses it
///   (`exec -a`).
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
        if let info = try? String(contentsOfFile: "\(directory)/root/.flatpak-info", encoding: .utf8),
            let id = flatpakID(fromInfo: info)
        {
            identity.unit = "flatpak:" + id
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

    /// The application id in a Flatpak sandbox's `/.flatpak-info` (`name=` in its `[Application]` group), which
    /// Flatpak writes and the app cannot change.
    static func flatpakID(fromInfo text: String) -> String? {
        var group = ""
        for line in text.split(separator: "\n") {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.hasPrefix("[") {
                group = trimmed
            } else if group == "[Application]", trimmed.hasPrefix("name=") {
                let id = trimmed.dropFirst("name=".count)
                let allowed = id.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "._-".contains($0)) }
                return !id.isEmpty && id.count <= 255 && allowed ? String(id) : nil
            }
        }
        return nil
    }

    /// Interpreters whose first non-option argument is the program that runs.
    static let interpreters: [String] = [
        "python", "perl", "ruby", "node", "nodejs", "bash", "sh", "dash", "zsh", "gjs", "lua", "php", "tclsh",
    ]

    /// The script an interpreter runs, or the executable; `nil` without the executable (the command line alone
    /// names whatever the caller wants).
    static func program(executable: String?, arguments: [String], workingDirectory: String?) -> String? {
        guard let binary = executable else { return nil }
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
            guard let workingDirectory else { return binary }
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
