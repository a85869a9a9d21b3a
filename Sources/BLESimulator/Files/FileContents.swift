import Foundation
import Glibc

/// Reads a whole file for the command-line tools, with the reason in words when it cannot.
///
/// Foundation's `Data(contentsOf:)` reports failures as its internal error domains
/// ("Error Domain=NSCocoaErrorDomain Code=260 …") and refuses character devices such as
/// `/dev/null` as "permission denied"; people reading a tool's error need the file and the
/// reason, nothing else. Plain POSIX calls give both.
public enum FileContents {
    /// The contents of the file at `path`.
    ///
    /// - Throws: ``FileReadError`` naming the file and the reason (no such file, permission
    ///   denied, a directory, …).
    public static func read(_ path: String) throws(FileReadError) -> Data {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw FileReadError(path: path, errno: errno) }
        defer { close(fd) }
        var status = stat()
        if fstat(fd, &status) == 0, status.st_mode & S_IFMT == S_IFDIR {
            throw FileReadError(path: path, errno: EISDIR)
        }
        var data = Data()
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if count == 0 { return data }
            if count < 0 {
                if errno == EINTR { continue }
                throw FileReadError(path: path, errno: errno)
            }
            data.append(contentsOf: chunk[..<count])
        }
    }
}

/// A file that could not be read: which, and why, in words.
public struct FileReadError: Error, Sendable, CustomStringConvertible {
    /// The file as named.
    public let path: String
    /// Why, e.g. "no such file" or "permission denied".
    public let reason: String

    init(path: String, errno code: Int32) {
        self.path = path
        switch code {
        case ENOENT: reason = "no such file"
        case EACCES, EPERM: reason = "permission denied"
        case EISDIR: reason = "it is a directory"
        case ENOTDIR: reason = "a part of the path is not a directory"
        case ELOOP: reason = "too many symbolic links"
        default: reason = String(cString: strerror(code)).lowercased()
        }
    }

    /// "cannot read PATH: REASON".
    public var description: String { "cannot read \(path): \(reason)" }
}
