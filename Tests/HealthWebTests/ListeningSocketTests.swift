import Glibc
import Testing

@testable import HealthWeb

/// The listening socket after a failed start: libmicrohttpd 0.9.75 may have closed it already, and its number may
/// by then be another file's, which must stay open.
@Suite struct ListeningSocketTests {
    @Test func aSocketStillOpenIsClosed() throws {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        try #require(socket >= 0)
        let identity = try #require(HTTPServer.identity(of: socket))
        HTTPServer.closeIfStillOpen(socket, identity)
        // The number may name another thread's new file by now, but not this socket.
        let now = HTTPServer.identity(of: socket)
        #expect(now == nil || now! != identity)
    }

    /// The socket's number taken over by a pipe (`dup2` replaces it in one step, as another thread's `pipe` would
    /// after libmicrohttpd's close): the pipe stays open.
    @Test func anotherFileUnderTheSameNumberIsLeftOpen() throws {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        try #require(socket >= 0)
        let identity = HTTPServer.identity(of: socket)
        var ends: [Int32] = [-1, -1]
        try #require(pipe(&ends) == 0)
        defer { for end in ends { close(end) } }
        try #require(dup2(ends[0], socket) == socket)
        HTTPServer.closeIfStillOpen(socket, identity)
        #expect(fcntl(socket, F_GETFD) >= 0, "the pipe under the socket's number was closed")
        close(socket)
    }
}
