import Foundation

/// Exit codes of the tool, distinct per kind of failure.
enum ExitCode {
    static let success: Int32 = 0
    static let failure: Int32 = 1
    static let usage: Int32 = 2
    static let bluetoothUnavailable: Int32 = 3
    static let notFound: Int32 = 4
    static let timeout: Int32 = 5
}

/// Output helpers: colours only on a terminal.
enum Terminal {
    static let isTTY = isatty(STDOUT_FILENO) == 1

    static func bold(_ text: String) -> String { isTTY ? "\u{1B}[1m\(text)\u{1B}[0m" : text }
    static func dim(_ text: String) -> String { isTTY ? "\u{1B}[2m\(text)\u{1B}[0m" : text }
    static func green(_ text: String) -> String { isTTY ? "\u{1B}[32m\(text)\u{1B}[0m" : text }

    static func step(_ text: String) { print("\(green("▸")) \(text)") }
    static func detail(_ text: String) { print("    \(text)") }

    static func error(_ text: String) {
        FileHandle.standardError.write(Data("ble: \(text)\n".utf8))
    }
}
