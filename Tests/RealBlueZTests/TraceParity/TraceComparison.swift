/// The verdict on two traces under the tolerance list: the differences no entry excuses,
/// printed as a diff, and the entries that excused nothing.
struct TraceComparison {
    let diff: TraceDiff
    let tolerances: TraceTolerances
    /// Whether only `varies` entries applied.
    let strict: Bool
    /// Differences no entry excuses.
    let unexcused: [TraceDiff.Line]
    /// Entries (other than `varies`) that matched no difference: stale, to be removed.
    let unused: [TraceTolerances.Entry]

    /// Compares `other` (the simulator's trace) with `reference` (the real daemon's); only
    /// `varies` entries apply when `strict` (a new real recording against the checked-in one).
    init(reference: [String], other: [String], tolerances: TraceTolerances, strict: Bool = false) {
        let diff = TraceDiff(reference: tolerances.steady(reference), other: tolerances.steady(other))
        var used = Set<String>()
        var unexcused: [TraceDiff.Line] = []
        for line in diff.lines {
            if case .both = line { continue }
            if !strict, let entry = Self.excuse(line, tolerances) {
                used.insert(entry.description)
            } else {
                unexcused.append(line)
            }
        }
        self.diff = diff
        self.tolerances = tolerances
        self.strict = strict
        self.unexcused = unexcused
        self.unused =
            strict ? [] : tolerances.entries.filter { $0.kind != .varies && !used.contains($0.description) }
    }

    private static func excuse(_ line: TraceDiff.Line, _ tolerances: TraceTolerances) -> TraceTolerances.Entry? {
        switch line {
        case .both: nil
        case .onlyReference(let text): tolerances.excuse(text, .realOnly)
        case .onlyOther(let text): tolerances.excuse(text, .simOnly)
        }
    }

    var agrees: Bool { unexcused.isEmpty && unused.isEmpty }

    /// The unexcused differences with their context, excused ones marked with their reason,
    /// and the stale entries.
    func report(reference: String, other: String) -> String {
        var parts: [String] = []
        if !unexcused.isEmpty {
            parts.append("\(unexcused.count) differences no tolerance excuses (- \(reference), + \(other)):")
            parts.append(
                diff.render(
                    isShown: { line in self.unexcused.contains(line) },
                    note: { line in
                        strict ? nil : Self.excuse(line, tolerances).map { "tolerated: \($0.reason)" }
                    }))
        }
        if !unused.isEmpty {
            parts.append("tolerances that matched nothing (remove them):")
            parts.append(contentsOf: unused.map { "  \($0)" })
        }
        return parts.joined(separator: "\n")
    }
}
