internal import Glibc

/// libpq, opened at run time (`dlopen("libpq.so.5")`), never linked.
///
/// Linking libpq pulls in its TLS, Kerberos and LDAP libraries, which cost a service writing to SQLite about 5 MB
/// of resident memory for nothing (BENCHMARKS.md, scenario service). So the PostgreSQL engine calls libpq through
/// this table of function pointers, looked up with `dlsym` on first use; when libpq is missing, opening a
/// PostgreSQL store fails with ``PostgresError`` saying so, and nothing else changes.
public enum PostgresLibrary {
    /// The libpq version installed, e.g. `15.18`, or `nil` when libpq is not installed.
    public static var version: String? {
        guard case .success(let functions) = PQ.loaded else { return nil }
        let version = Int(functions.libVersion())
        return "\(version / 10000).\(version % 10000)"
    }
}

/// The libpq functions the engine calls, with their C signatures over opaque pointers (`PGconn *`, `PGresult *`).
struct PQ: @unchecked Sendable {
    // @unchecked Sendable: plain C function pointers, set once when the library is loaded and never changed.
    typealias Connection = OpaquePointer
    typealias Result = OpaquePointer

    /// A notice callback (`PQnoticeProcessor`).
    typealias NoticeProcessor = @convention(c) (UnsafeMutableRawPointer?, UnsafePointer<CChar>?) -> Void

    /// `PQconnectdb`
    let connectdb: @convention(c) (UnsafePointer<CChar>?) -> Connection?
    /// `PQstatus`
    let status: @convention(c) (Connection?) -> Int32
    /// `PQerrorMessage`
    let errorMessage: @convention(c) (Connection?) -> UnsafeMutablePointer<CChar>?
    /// `PQfinish`
    let finish: @convention(c) (Connection?) -> Void
    /// `PQexec`
    let exec: @convention(c) (Connection?, UnsafePointer<CChar>?) -> Result?
    /// `PQprepare`
    let prepare:
        @convention(c) (Connection?, UnsafePointer<CChar>?, UnsafePointer<CChar>?, Int32, UnsafePointer<UInt32>?) ->
            Result?
    /// `PQexecPrepared`
    let execPrepared:
        @convention(c) (
            Connection?, UnsafePointer<CChar>?, Int32, UnsafePointer<UnsafePointer<CChar>?>?, UnsafePointer<Int32>?,
            UnsafePointer<Int32>?, Int32
        ) -> Result?
    /// `PQresultStatus`
    let resultStatus: @convention(c) (Result?) -> Int32
    /// `PQntuples`
    let ntuples: @convention(c) (Result?) -> Int32
    /// `PQgetvalue`
    let getvalue: @convention(c) (Result?, Int32, Int32) -> UnsafeMutablePointer<CChar>?
    /// `PQgetisnull`
    let getisnull: @convention(c) (Result?, Int32, Int32) -> Int32
    /// `PQgetlength`
    let getlength: @convention(c) (Result?, Int32, Int32) -> Int32
    /// `PQclear`
    let clear: @convention(c) (Result?) -> Void
    /// `PQcmdTuples`
    let cmdTuples: @convention(c) (Result?) -> UnsafeMutablePointer<CChar>?
    /// `PQresultErrorField`
    let resultErrorField: @convention(c) (Result?, Int32) -> UnsafeMutablePointer<CChar>?
    /// `PQresultErrorMessage`
    let resultErrorMessage: @convention(c) (Result?) -> UnsafeMutablePointer<CChar>?
    /// `PQputCopyData`
    let putCopyData: @convention(c) (Connection?, UnsafePointer<CChar>?, Int32) -> Int32
    /// `PQputCopyEnd`
    let putCopyEnd: @convention(c) (Connection?, UnsafePointer<CChar>?) -> Int32
    /// `PQgetResult`
    let getResult: @convention(c) (Connection?) -> Result?
    /// `PQescapeIdentifier`
    let escapeIdentifier: @convention(c) (Connection?, UnsafePointer<CChar>?, Int) -> UnsafeMutablePointer<CChar>?
    /// `PQfreemem`
    let freemem: @convention(c) (UnsafeMutableRawPointer?) -> Void
    /// `PQlibVersion`
    let libVersion: @convention(c) () -> Int32
    /// `PQserverVersion`
    let serverVersion: @convention(c) (Connection?) -> Int32
    /// `PQsetNoticeProcessor`
    let setNoticeProcessor:
        @convention(c) (Connection?, NoticeProcessor?, UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer?

    /// Looks every function up; `nil` when one is missing (its name is added to `missing`).
    init?(_ lookup: (String) -> UnsafeMutableRawPointer?, missing: inout [String]) {
        func load<Function>(_ name: String, _ type: Function.Type) -> Function? {
            guard let pointer = lookup(name) else { return nil }
            return unsafeBitCast(pointer, to: type)
        }
        let connectdb = load("PQconnectdb", (@convention(c) (UnsafePointer<CChar>?) -> Connection?).self)
        let status = load("PQstatus", (@convention(c) (Connection?) -> Int32).self)
        let errorMessage = load("PQerrorMessage", (@convention(c) (Connection?) -> UnsafeMutablePointer<CChar>?).self)
        let finish = load("PQfinish", (@convention(c) (Connection?) -> Void).self)
        let exec = load("PQexec", (@convention(c) (Connection?, UnsafePointer<CChar>?) -> Result?).self)
        let prepare = load(
            "PQprepare",
            (@convention(c) (Connection?, UnsafePointer<CChar>?, UnsafePointer<CChar>?, Int32, UnsafePointer<UInt32>?)
                -> Result?).self)
        let execPrepared = load(
            "PQexecPrepared",
            (@convention(c) (
                Connection?, UnsafePointer<CChar>?, Int32, UnsafePointer<UnsafePointer<CChar>?>?, UnsafePointer<Int32>?,
                UnsafePointer<Int32>?, Int32
            ) -> Result?).self)
        let resultStatus = load("PQresultStatus", (@convention(c) (Result?) -> Int32).self)
        let ntuples = load("PQntuples", (@convention(c) (Result?) -> Int32).self)
        let getvalue = load("PQgetvalue", (@convention(c) (Result?, Int32, Int32) -> UnsafeMutablePointer<CChar>?).self)
        let getisnull = load("PQgetisnull", (@convention(c) (Result?, Int32, Int32) -> Int32).self)
        let getlength = load("PQgetlength", (@convention(c) (Result?, Int32, Int32) -> Int32).self)
        let clear = load("PQclear", (@convention(c) (Result?) -> Void).self)
        let cmdTuples = load("PQcmdTuples", (@convention(c) (Result?) -> UnsafeMutablePointer<CChar>?).self)
        let resultErrorField = load(
            "PQresultErrorField", (@convention(c) (Result?, Int32) -> UnsafeMutablePointer<CChar>?).self)
        let resultErrorMessage = load(
            "PQresultErrorMessage", (@convention(c) (Result?) -> UnsafeMutablePointer<CChar>?).self)
        let putCopyData = load(
            "PQputCopyData", (@convention(c) (Connection?, UnsafePointer<CChar>?, Int32) -> Int32).self)
        let putCopyEnd = load("PQputCopyEnd", (@convention(c) (Connection?, UnsafePointer<CChar>?) -> Int32).self)
        let getResult = load("PQgetResult", (@convention(c) (Connection?) -> Result?).self)
        let escapeIdentifier = load(
            "PQescapeIdentifier",
            (@convention(c) (Connection?, UnsafePointer<CChar>?, Int) -> UnsafeMutablePointer<CChar>?).self)
        let freemem = load("PQfreemem", (@convention(c) (UnsafeMutableRawPointer?) -> Void).self)
        let libVersion = load("PQlibVersion", (@convention(c) () -> Int32).self)
        let serverVersion = load("PQserverVersion", (@convention(c) (Connection?) -> Int32).self)
        let setNoticeProcessor = load(
            "PQsetNoticeProcessor",
            (@convention(c) (Connection?, NoticeProcessor?, UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer?).self)
        let absent: [String?] = [
            connectdb == nil ? "PQconnectdb" : nil,
            status == nil ? "PQstatus" : nil,
            errorMessage == nil ? "PQerrorMessage" : nil,
            finish == nil ? "PQfinish" : nil,
            exec == nil ? "PQexec" : nil,
            prepare == nil ? "PQprepare" : nil,
            execPrepared == nil ? "PQexecPrepared" : nil,
            resultStatus == nil ? "PQresultStatus" : nil,
            ntuples == nil ? "PQntuples" : nil,
            getvalue == nil ? "PQgetvalue" : nil,
            getisnull == nil ? "PQgetisnull" : nil,
            getlength == nil ? "PQgetlength" : nil,
            clear == nil ? "PQclear" : nil,
            cmdTuples == nil ? "PQcmdTuples" : nil,
            resultErrorField == nil ? "PQresultErrorField" : nil,
            resultErrorMessage == nil ? "PQresultErrorMessage" : nil,
            putCopyData == nil ? "PQputCopyData" : nil,
            putCopyEnd == nil ? "PQputCopyEnd" : nil,
            getResult == nil ? "PQgetResult" : nil,
            escapeIdentifier == nil ? "PQescapeIdentifier" : nil,
            freemem == nil ? "PQfreemem" : nil,
            libVersion == nil ? "PQlibVersion" : nil,
            serverVersion == nil ? "PQserverVersion" : nil,
            setNoticeProcessor == nil ? "PQsetNoticeProcessor" : nil,
        ]
        missing = absent.compactMap { $0 }
        guard missing.isEmpty, let connectdb, let status, let errorMessage, let finish, let exec, let prepare,
            let execPrepared, let resultStatus, let ntuples, let getvalue, let getisnull, let getlength, let clear,
            let cmdTuples, let resultErrorField, let resultErrorMessage, let putCopyData, let putCopyEnd, let getResult,
            let escapeIdentifier, let freemem, let libVersion, let serverVersion, let setNoticeProcessor
        else { return nil }
        self.connectdb = connectdb
        self.status = status
        self.errorMessage = errorMessage
        self.finish = finish
        self.exec = exec
        self.prepare = prepare
        self.execPrepared = execPrepared
        self.resultStatus = resultStatus
        self.ntuples = ntuples
        self.getvalue = getvalue
        self.getisnull = getisnull
        self.getlength = getlength
        self.clear = clear
        self.cmdTuples = cmdTuples
        self.resultErrorField = resultErrorField
        self.resultErrorMessage = resultErrorMessage
        self.putCopyData = putCopyData
        self.putCopyEnd = putCopyEnd
        self.getResult = getResult
        self.escapeIdentifier = escapeIdentifier
        self.freemem = freemem
        self.libVersion = libVersion
        self.serverVersion = serverVersion
        self.setNoticeProcessor = setNoticeProcessor
    }

    // ConnStatusType and ExecStatusType values used here (libpq-fe.h).
    static let connectionOK: Int32 = 0
    static let commandOK: Int32 = 1
    static let tuplesOK: Int32 = 2
    static let copyIn: Int32 = 4
    /// `PG_DIAG_SQLSTATE`.
    static let fieldSQLState = Int32(UInt8(ascii: "C"))
    /// `PG_DIAG_MESSAGE_PRIMARY`.
    static let fieldMessage = Int32(UInt8(ascii: "M"))

    /// The library, loaded once per process; the failure says what is missing.
    static let loaded: Swift.Result<PQ, PostgresError> = load()

    static func load() -> Swift.Result<PQ, PostgresError> {
        guard let handle = dlopen("libpq.so.5", RTLD_NOW | RTLD_LOCAL) else {
            let reason = dlerror().map { String(cString: $0) } ?? "not found"
            return .failure(
                PostgresError(
                    code: .libraryMissing,
                    message: "libpq (libpq.so.5) is not installed; install Debian's libpq5 package (\(reason))"))
        }
        // The handle stays open for the life of the process: the function pointers point into it.
        var missing: [String] = []
        guard let functions = PQ({ dlsym(handle, $0) }, missing: &missing) else {
            return .failure(
                PostgresError(
                    code: .libraryMissing,
                    message: "libpq.so.5 lacks \(missing.joined(separator: ", ")); a newer libpq5 is needed"))
        }
        return .success(functions)
    }
}
