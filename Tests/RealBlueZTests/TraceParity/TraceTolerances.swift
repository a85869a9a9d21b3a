import Foundation

/// The checked-in list of known differences between the real daemon's trace and the
/// simulator's (Tests/RealBlueZTests/Traces/tolerances.txt). Every entry carries its reason;
/// an entry that no longer matches anything is itself a failure, so the list cannot rot.
///
/// One entry per line, `#` starts a comment:
///
///     <kind> <regular expression> :: <reason>
///
/// - `real-only`: a line the real trace may have without the simulator's having it.
/// - `sim-only`: a line the simulator's trace may have without the real one having it.
/// - `varies`: a line that differs from run to run on the real daemon; left out of every
///   comparison (real against simulator, and real against the checked-in real trace).
struct TraceTolerances {
    /// One known difference.
    struct Entry: CustomStringConvertible {
        enum Kind: String {
            case realOnly = "real-only"
            case simOnly = "sim-only"
            case varies
        }
        let kind: Kind
        let pattern: String
        let regex: Regex<AnyRegexOutput>
        let reason: String

        func matches(_ line: String) -> Bool { line.contains(regex) }

        var description: String { "\(kind.rawValue) \(pattern) :: \(reason)" }
    }

    let entries: [Entry]

    /// Parses the list; throws on a line that is no entry (a missing reason included).
    init(parsing text: String) throws {
        var entries: [Entry] = []
        for (number, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = raw.trimmingCharacters(in: .whitespaces)
            if line.isEmpty || line.hasPrefix("#") { continue }
            let parts = line.components(separatedBy: " :: ")
            let head = parts[0].split(separator: " ", maxSplits: 1).map(String.init)
            guard parts.count == 2, head.count == 2, let kind = Entry.Kind(rawValue: head[0]),
                !parts[1].trimmingCharacters(in: .whitespaces).isEmpty
            else {
                throw StageError(
                    description: "tolerances line \(number + 1): not `<kind> <regex> :: <reason>`: \(line)")
            }
            let pattern = head[1].trimmingCharacters(in: .whitespaces)
            entries.append(Entry(kind: kind, pattern: pattern, regex: try Regex(pattern), reason: parts[1]))
        }
        self.entries = entries
    }

    /// `lines` without those that vary from run to run.
    func steady(_ lines: [String]) -> [String] {
        let varying = entries.filter { $0.kind == .varies }
        return lines.filter { line in !varying.contains { $0.matches(line) } }
    }

    /// The first entry of `kind` that excuses `line`.
    func excuse(_ line: String, _ kind: Entry.Kind) -> Entry? {
        entries.first { $0.kind == kind && $0.matches(line) }
    }
}
