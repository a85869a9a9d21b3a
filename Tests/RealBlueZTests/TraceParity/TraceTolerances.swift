import Foundation

/// The checked-in list of known differences between the real daemon's trace and the
/// simulator's (Tests/RealBlueZTests/Traces/tolerances.txt; the kinds are described in
/// Traces/README.md). Every entry carries its reason; an entry that no longer matches anything
/// is itself a failure, so the list cannot rot.
///
/// One entry per line, `#` starts a comment:
///
///     <kind> [<window>] <regular expression> :: <reason>
///
/// - `real-only`: a line the real trace may have without the simulator's having it.
/// - `sim-only`: a line the simulator's trace may have without the real one having it.
/// - `moves <window>`: a line whose place differs from run to run: it must still occur, as
///   often in both traces, and match there, but may stand elsewhere: within `<n>` lines of its
///   place in the other trace, or (`group:<name>`) anywhere among the lines of that group's
///   entries.
/// - `optional [<window>]`: a line the real daemon may send or not: copies one trace has and
///   the other lacks are excused; those both have are compared (displaced within the window,
///   if one is given).
struct TraceTolerances {
    /// How far a displaced line may stand from its place in the other trace.
    enum Window: Equatable, CustomStringConvertible {
        /// Within this many lines of the diff.
        case lines(Int)
        /// Anywhere, as long as every line between the two places belongs to the group.
        case group(String)

        init?(_ token: String) {
            if token.hasPrefix("group:"), token.count > 6 {
                self = .group(String(token.dropFirst(6)))
            } else if let count = Int(token), count > 0 {
                self = .lines(count)
            } else {
                return nil
            }
        }

        var description: String {
            switch self {
            case .lines(let count): "\(count)"
            case .group(let name): "group:\(name)"
            }
        }
    }

    /// One known difference.
    struct Entry: CustomStringConvertible {
        enum Kind: String {
            case realOnly = "real-only"
            case simOnly = "sim-only"
            case moves
            case optional
        }
        let kind: Kind
        let window: Window?
        let pattern: String
        let regex: Regex<AnyRegexOutput>
        let reason: String

        func matches(_ line: String) -> Bool { line.contains(regex) }

        var description: String {
            "\(kind.rawValue)\(window.map { " \($0)" } ?? "") \(pattern) :: \(reason)"
        }
    }

    let entries: [Entry]

    /// Parses the list; throws on a line that is no entry (a missing reason, a `moves` without
    /// its window, the retired `varies` included).
    init(parsing text: String) throws {
        var entries: [Entry] = []
        for (number, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = raw.trimmingCharacters(in: .whitespaces)
            if line.isEmpty || line.hasPrefix("#") { continue }
            let parts = line.components(separatedBy: " :: ")
            var head = parts[0].split(separator: " ", maxSplits: 1).map(String.init)
            let kind = head.first.flatMap(Entry.Kind.init(rawValue:))
            var window: Window?
            if kind == .moves || kind == .optional, head.count == 2 {
                let rest = head[1].split(separator: " ", maxSplits: 1).map(String.init)
                if rest.count == 2, let parsed = Window(rest[0]) {
                    window = parsed
                    head[1] = rest[1]
                }
            }
            guard parts.count == 2, head.count == 2, let kind, kind != .moves || window != nil,
                !parts[1].trimmingCharacters(in: .whitespaces).isEmpty
            else {
                throw StageError(
                    description: "tolerances line \(number + 1): not `<kind> [<window>] <regex> :: <reason>`: \(line)")
            }
            let pattern = head[1].trimmingCharacters(in: .whitespaces)
            entries.append(
                Entry(kind: kind, window: window, pattern: pattern, regex: try Regex(pattern), reason: parts[1]))
        }
        self.entries = entries
    }

    /// The first entry of `kind` that excuses `line`.
    func excuse(_ line: String, _ kind: Entry.Kind) -> Entry? {
        entries.first { $0.kind == kind && $0.matches(line) }
    }

    /// The first `moves` or `optional` entry that matches `line` (the one that governs it).
    func variation(_ line: String) -> Entry? {
        entries.first { ($0.kind == .moves || $0.kind == .optional) && $0.matches(line) }
    }
}
