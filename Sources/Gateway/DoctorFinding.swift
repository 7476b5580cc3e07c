/// One result of `wearhouse doctor`: what was checked, how it stands, and what to do about it.
public struct DoctorFinding: Equatable, Sendable {
    public enum Severity: String, CaseIterable, Comparable, Sendable {
        case ok, warning, error

        public static func < (lhs: Severity, rhs: Severity) -> Bool {
            lhs.rank < rhs.rank
        }

        private var rank: Int {
            switch self {
            case .ok: 0
            case .warning: 1
            case .error: 2
            }
        }
    }

    /// Which check: `configuration`, `bus`, `bluetoothd`, `adapter`, `rfkill`, `udev`, `kernel`, `controller`,
    /// `store`, `permissions`.
    public var check: String
    public var severity: Severity
    /// What was found, as a sentence.
    public var summary: String
    /// What to do about it, as a sentence (`nil` when nothing needs doing).
    public var fix: String?

    public init(_ check: String, _ severity: Severity, _ summary: String, fix: String? = nil) {
        self.check = check
        self.severity = severity
        self.summary = summary
        self.fix = fix
    }

    static func ok(_ check: String, _ summary: String) -> DoctorFinding {
        DoctorFinding(check, .ok, summary)
    }

    static func warning(_ check: String, _ summary: String, fix: String) -> DoctorFinding {
        DoctorFinding(check, .warning, summary, fix: fix)
    }

    static func error(_ check: String, _ summary: String, fix: String) -> DoctorFinding {
        DoctorFinding(check, .error, summary, fix: fix)
    }
}
