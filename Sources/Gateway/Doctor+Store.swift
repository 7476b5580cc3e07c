import Foundation
internal import Glibc
import Health
import PostgresStore
import SQLiteStore
import StoreEngine

extension Doctor {
    /// The name of the service's system user (`Systemd/wearhouse.sysusers`).
    static let serviceUser = "wearhouse"

    // MARK: Store

    /// The store file: there (or its directory, for a first start), a SQLite database, writable, owned by the
    /// service user when it is the service's, and, when this user owns it, opening with an intact schema.
    static func checkStore(url text: String) async -> [DoctorFinding] {
        await inspectStore(url: text).findings
    }

    /// ``checkStore(url:)``, with the enrolled sensors when the store was opened (`nil` when it was not).
    static func inspectStore(url text: String) async -> (findings: [DoctorFinding], sensors: [RegisteredSensor]?) {
        var sensors: [RegisteredSensor]?
        let findings = await storeFindings(url: text, sensors: &sensors)
        return (findings, sensors)
    }

    /// The checks themselves; `sensors` is set when the store opens.
    private static func storeFindings(url text: String, sensors: inout [RegisteredSensor]?) async -> [DoctorFinding] {
        let url: StoreURL
        do throws(StoreURL.ParseError) {
            url = try StoreURL(parsing: text)
        } catch {
            return [.error("store", "\(error)", fix: "Give a path, sqlite:PATH or postgresql://... as [store] url.")]
        }
        let path: String
        switch url {
        case .postgresql(let connection):
            let shown = url.description
            guard PostgresLibrary.version != nil else {
                return [
                    .error(
                        "store", "the store is PostgreSQL (\(shown)) but libpq is not installed",
                        fix: "Install it: apt-get install libpq5.")
                ]
            }
            do {
                // Opening connects, checks the schema and brings it up to date, as the service does at start.
                let store = try PostgresHealthStore(url: connection)
                sensors = try? await store.registeredSensors()
                return [.ok("store", "the PostgreSQL store \(shown) answers and its schema is current")]
            } catch {
                return [
                    .error(
                        "store", "cannot open the PostgreSQL store \(shown): \(error)",
                        fix: "Check that the server runs and the URL's user, database and authentication are right.")
                ]
            }
        case .sqlite(let file):
            path = file
        }
        // FileManager rather than stat(2): which module `struct stat` comes from depends on what else the
        // module imports (Glibc or CDispatch), and MemberImportVisibility then refuses its fields.
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: path) else {
            let directory = (path as NSString).deletingLastPathComponent
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory), isDirectory.boolValue
            else {
                return [
                    .warning(
                        "store", "neither the store \(path) nor its directory exists yet",
                        fix: "Start the service (its StateDirectory= creates \(directory)), or run systemd-tmpfiles "
                            + "--create.")
                ]
            }
            return [.ok("store", "no store at \(path) yet; it is created on the first write")]
        }
        let owner = (attributes[.ownerAccountID] as? NSNumber).map { uid_t($0.uint32Value) } ?? 0
        guard attributes[.type] as? FileAttributeType == .typeRegular else {
            return [.error("store", "\(path) is not a regular file", fix: "Point [store] url at a file.")]
        }
        guard let header = FileManager.default.contents(atPath: path)?.prefix(16) else {
            return [
                .warning(
                    "store", "\(path) is not readable by \(userName(geteuid()))",
                    fix: "Run doctor as root or as the service user (sudo -u wearhouse wearhouse doctor).")
            ]
        }
        if !header.isEmpty, header != Data("SQLite format 3\0".utf8) {
            return [
                .error(
                    "store", "\(path) is not a SQLite database",
                    fix: "Point [store] url at the store, or move the file away.")
            ]
        }
        var findings = checkStoreModes(path)
        if let service = getpwnam(serviceUser), path.hasPrefix("/var/lib/wearhouse/"),
            owner != service.pointee.pw_uid
        {
            findings.append(
                .error(
                    "store", "\(path) is owned by \(userName(owner)), but the service runs as \(serviceUser)",
                    fix: "chown \(serviceUser):\(serviceUser) \(path)*"))
        }
        if access(path, W_OK) != 0 {
            findings.append(
                .warning(
                    "store", "\(path) is not writable by \(userName(geteuid()))",
                    fix: "Only the service writes it; run doctor as the service user to open it."))
            return findings
        }
        // Opening creates -wal, -shm and -access files: only open what this user owns, so that they get the
        // store's owner.
        guard owner == geteuid() else {
            findings.append(
                .ok("store", "\(path) is a SQLite database (not opened: it belongs to \(userName(owner)))"))
            return findings
        }
        do {
            let store = try SQLiteHealthStore(path: path)
            let problems = try await store.integrityCheck()
            sensors = try? await store.registeredSensors()
            if problems == ["ok"] {
                findings.append(.ok("store", "\(path) opens and passes its integrity check"))
            } else {
                findings.append(
                    .error(
                        "store", "\(path) fails its integrity check: " + problems.prefix(3).joined(separator: "; "),
                        fix: "Restore it from a backup, or export what is readable (wearhouse export)."))
            }
        } catch {
            findings.append(
                .error("store", "\(path) does not open: \(error)", fix: "Check the file and the disk it is on."))
        }
        return findings
    }

    /// The store's files that allow more than ``SQLiteStore/SQLiteHealthStore/widestMode`` (group write, or
    /// anything for others): health data other users can read.
    static func checkStoreModes(_ path: String) -> [DoctorFinding] {
        var exposed: [String] = []
        for file in SQLiteHealthStore.files(of: path) {
            guard let attributes = try? FileManager.default.attributesOfItem(atPath: file),
                let mode = (attributes[.posixPermissions] as? NSNumber)?.intValue,
                mode & 0o777 & ~SQLiteHealthStore.widestMode & ~0o100 != 0
            else { continue }
            exposed.append("\(file) (mode \(String(mode & 0o777, radix: 8)))")
        }
        guard !exposed.isEmpty else { return [] }
        return [
            .warning(
                "store", "other users can read health data: " + exposed.joined(separator: ", "),
                fix: "chmod 0600 \(path)* (the service and the commands narrow them when they next open the store "
                    + "as its owner).")
        ]
    }

    // MARK: Permissions

    /// Whether this user may talk to bluetoothd (group `bluetooth` where the distribution restricts it) and
    /// whether the service's user exists.
    static func checkPermissions() -> [DoctorFinding] {
        var findings: [DoctorFinding] = []
        let bluetooth = getgrnam("bluetooth").map { $0.pointee.gr_gid }
        if geteuid() == 0 {
            findings.append(.ok("permissions", "running as root"))
        } else if let bluetooth {
            let count = getgroups(0, nil)
            var groups = [gid_t](repeating: 0, count: Int(max(count, 0)))
            let filled = getgroups(count, &groups)
            if getegid() == bluetooth || groups.prefix(Int(max(filled, 0))).contains(bluetooth) {
                findings.append(.ok("permissions", "\(userName(geteuid())) is in group bluetooth"))
            } else {
                findings.append(
                    .warning(
                        "permissions", "\(userName(geteuid())) is not in group bluetooth",
                        fix: "Some distributions let only that group talk to bluetoothd: sudo usermod -aG bluetooth "
                            + "\(userName(geteuid())), then log in again."))
            }
        }
        guard let service = getpwnam(serviceUser) else {
            findings.append(
                .warning(
                    "permissions", "there is no system user \(serviceUser), so the service cannot start",
                    fix: "Create it: systemd-sysusers (make install puts wearhouse.conf in sysusers.d)."))
            return findings
        }
        if let bluetooth, !isMember(service.pointee.pw_name, primary: service.pointee.pw_gid, of: bluetooth) {
            findings.append(
                .warning(
                    "permissions", "the service user \(serviceUser) is not in group bluetooth",
                    fix: "usermod -aG bluetooth \(serviceUser) (the sysusers file does this on a fresh install)."))
        } else {
            findings.append(.ok("permissions", "the service user \(serviceUser) exists"))
        }
        return findings
    }

    private static func isMember(_ user: UnsafeMutablePointer<CChar>, primary: gid_t, of group: gid_t) -> Bool {
        var count: Int32 = 64
        var groups = [gid_t](repeating: 0, count: Int(count))
        if getgrouplist(user, primary, &groups, &count) < 0 {
            groups = [gid_t](repeating: 0, count: Int(count))
            guard getgrouplist(user, primary, &groups, &count) >= 0 else { return false }
        }
        return groups.prefix(Int(count)).contains(group)
    }

    static func userName(_ uid: uid_t) -> String {
        getpwuid(uid).map { String(cString: $0.pointee.pw_name) } ?? "uid \(uid)"
    }
}
