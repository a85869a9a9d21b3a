import Foundation

/// Where output goes and how it looks: colours only on a terminal and only when `NO_COLOR` is
/// unset (https://no-color.org); progress indicators only when standard error is a terminal.
enum Terminal {
    /// Whether standard output is a terminal.
    static let outputIsTerminal = isatty(STDOUT_FILENO) == 1
    /// Whether standard error is a terminal (progress indicators go there).
    static let errorIsTerminal = isatty(STDERR_FILENO) == 1
    /// Whether to colour standard output.
    static let colours = outputIsTerminal && coloursAllowed
    /// Whether to colour standard error.
    static let errorColours = errorIsTerminal && coloursAllowed

    private static var coloursAllowed: Bool {
        let environment = ProcessInfo.processInfo.environment
        return (environment["NO_COLOR"] ?? "").isEmpty && environment["TERM"] != "dumb"
    }

    static func bold(_ text: String) -> String { paint(text, "1") }
    static func dim(_ text: String) -> String { paint(text, "2") }
    static func green(_ text: String) -> String { paint(text, "32") }
    static func cyan(_ text: String) -> String { paint(text, "36") }
    static func yellow(_ text: String) -> String { paint(text, "33") }

    private static func paint(_ text: String, _ code: String, enabled: Bool = colours) -> String {
        enabled ? "\u{1B}[\(code)m\(text)\u{1B}[0m" : text
    }

    /// A line on standard output, flushed at once so pipes see streamed values as they come.
    static func line(_ text: String) {
        write(text + "\n", to: STDOUT_FILENO)
    }

    /// A narrated step (the demo).
    static func step(_ text: String) { line("\(green("▸")) \(text)") }
    /// A detail under a step.
    static func detail(_ text: String) { line("    \(text)") }

    /// A one-line error on standard error: `ble read: error: <message>`.
    static func error(_ text: String, prefix: String = "ble") {
        let label = paint("error:", "31", enabled: errorColours)
        write("\(prefix): \(label) \(text)\n", to: STDERR_FILENO)
    }

    /// A note on standard error (hints, progress that is not an error).
    static func note(_ text: String) {
        write(text + "\n", to: STDERR_FILENO)
    }

    /// Writes all of `text`, unbuffered (retrying short writes and interruptions).
    static func write(_ text: String, to descriptor: Int32) {
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            let written = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
            if written < 0 {
                if errno == EINTR { continue }
                return
            }
            bytes = bytes.dropFirst(written)
        }
    }

    /// Columns and rows of the terminal on standard output, if it is one.
    static func size() -> (columns: Int, rows: Int)? {
        var size = winsize()
        guard ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 else { return nil }
        return (Int(size.ws_col), Int(size.ws_row))
    }
}
