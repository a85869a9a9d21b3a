/// The verdict on two traces under the tolerance list: the differences no entry excuses,
/// printed as a diff, and the entries that excused nothing.
///
/// No line leaves the comparison unchecked: an `optional` line is set aside only where the
/// other trace lacks it; a line that may move (a `moves` entry's, or an `optional` one's with a
/// window) is taken out of the diff and paired with its counterpart in the other trace (the
/// same line, or one its entry's pattern also matches) within the entry's window, counted in
/// the lines that stay in place; unpaired, it is a difference like any other.
struct TraceComparison {
    let diff: TraceDiff
    let tolerances: TraceTolerances
    /// Whether only `moves` and `optional` entries applied.
    let strict: Bool
    /// Differences no entry excuses (displaced lines with no counterpart in their window last).
    let unexcused: [TraceDiff.Line]
    /// Entries that matched nothing: stale, to be removed. `real-only` and `sim-only` ones
    /// must excuse a difference (not checked when `strict`); `moves` and `optional` ones must
    /// match a line of either trace or of a kept variant.
    let unused: [TraceTolerances.Entry]
    /// Lines that may move and found no counterpart within their window.
    let unpaired: [TraceDiff.Line]

    /// Compares `other` (the simulator's trace) with `reference` (the real daemon's); only
    /// `moves` and `optional` entries apply when `strict` (a new real recording against the
    /// checked-in one). `variants` are other recordings of the real daemon, kept because each
    /// shows a variation the list allows that `reference` lacks: a `moves` or `optional`
    /// entry matching a line of one is not stale. (Variations can exclude each other, a
    /// property announced late on its own or folded into an earlier signal, so no single
    /// recording can show them all.)
    init(
        reference: [String], other: [String], tolerances: TraceTolerances, strict: Bool = false,
        variants: [[String]] = []
    ) {
        let referenceLines = Self.split(Self.withoutLacking(reference, in: other, tolerances), tolerances)
        let otherLines = Self.split(Self.withoutLacking(other, in: reference, tolerances), tolerances)
        let diff = TraceDiff(reference: referenceLines.steady, other: otherLines.steady)
        // Places count the lines both traces have in place: lines one side alone has (excused
        // or not) do not stretch a window.
        let (referenceCommon, otherCommon) = Self.commonPrefixes(diff)
        let unpaired = Self.pair(
            referenceLines.moving.map { $0.placed(referenceCommon[$0.anchor]) },
            otherLines.moving.map { $0.placed(otherCommon[$0.anchor]) }, tolerances)
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
        self.unpaired = unpaired
        self.unexcused = unexcused + unpaired
        self.unused = tolerances.entries.filter { entry in
            switch entry.kind {
            case .realOnly, .simOnly: !strict && !used.contains(entry.description)
            case .moves, .optional:
                !([reference, other] + variants).contains { trace in trace.contains(where: entry.matches) }
            }
        }
    }

    /// `lines` without the copies of `optional` lines that `counterpart` lacks (it has fewer).
    private static func withoutLacking(
        _ lines: [String], in counterpart: [String], _ tolerances: TraceTolerances
    ) -> [String] {
        var available: [String: Int] = [:]
        for line in counterpart { available[line, default: 0] += 1 }
        return lines.filter { line in
            guard tolerances.variation(line)?.kind == .optional else { return true }
            guard let count = available[line], count > 0 else { return false }
            available[line] = count - 1
            return true
        }
    }

    /// A line that may move, with its place: how many lines that stay in place come before it.
    private struct Moving {
        let text: String
        let anchor: Int
        let entry: TraceTolerances.Entry
        let window: TraceTolerances.Window

        /// The same line, its place counted in `anchor` common lines instead.
        func placed(_ anchor: Int) -> Moving { Moving(text: text, anchor: anchor, entry: entry, window: window) }
    }

    /// For each side, how many common lines come before each of its lines in place (and after
    /// the last).
    private static func commonPrefixes(_ diff: TraceDiff) -> ([Int], [Int]) {
        var reference = [0]
        var other = [0]
        var common = 0
        for line in diff.lines {
            switch line {
            case .both:
                common += 1
                reference.append(common)
                other.append(common)
            case .onlyReference: reference.append(common)
            case .onlyOther: other.append(common)
            }
        }
        return (reference, other)
    }

    /// The lines that stay in place, and those that may move.
    private static func split(_ lines: [String], _ tolerances: TraceTolerances) -> (steady: [String], moving: [Moving])
    {
        var steady: [String] = []
        var moving: [Moving] = []
        for line in lines {
            if let entry = tolerances.variation(line), let window = entry.window {
                moving.append(Moving(text: line, anchor: steady.count, entry: entry, window: window))
            } else {
                steady.append(line)
            }
        }
        return (steady, moving)
    }

    /// Pairs the reference's moving lines with the other trace's (the same line first, then a
    /// variant the entry allows; the nearest); returns those of either side left unpaired.
    private static func pair(_ reference: [Moving], _ other: [Moving], _ tolerances: TraceTolerances)
        -> [TraceDiff.Line]
    {
        var free = Array(other.indices)
        var unpaired: [TraceDiff.Line] = []
        for line in reference {
            let candidates = free.filter { index in
                let counterpart = other[index]
                guard counterpart.text == line.text || line.entry.matches(counterpart.text) else { return false }
                switch line.window {
                case .lines(let count):
                    return abs(counterpart.anchor - line.anchor) <= count
                case .group:
                    // Only the group's own lines between the two places: no line in place between.
                    return counterpart.anchor == line.anchor
                        && (reference + other).filter { $0.anchor == line.anchor }.allSatisfy {
                            $0.window == line.window
                        }
                }
            }
            let best = candidates.min { a, b in
                let (sameA, sameB) = (other[a].text == line.text, other[b].text == line.text)
                return sameA != sameB ? sameA : abs(other[a].anchor - line.anchor) < abs(other[b].anchor - line.anchor)
            }
            if let best { free.removeAll { $0 == best } } else { unpaired.append(.onlyReference(line.text)) }
        }
        return unpaired + free.map { .onlyOther(other[$0].text) }
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
    /// the displaced lines without a counterpart, and the stale entries.
    func report(reference: String, other: String) -> String {
        var parts: [String] = []
        let inPlace = unexcused.count - unpaired.count
        if inPlace > 0 {
            parts.append("\(inPlace) differences no tolerance excuses (- \(reference), + \(other)):")
            parts.append(
                diff.render(
                    isShown: { line in self.unexcused.contains(line) },
                    note: { line in
                        strict ? nil : Self.excuse(line, tolerances).map { "tolerated: \($0.reason)" }
                    }))
        }
        if !unpaired.isEmpty {
            parts.append(
                "lines that may move but have no counterpart within their window (- \(reference), + \(other)):")
            parts.append(
                contentsOf: unpaired.map { line in
                    if case .onlyReference(let text) = line { return "- " + text }
                    return "+ " + line.text
                })
        }
        if !unused.isEmpty {
            parts.append("tolerances that matched nothing (remove them):")
            parts.append(contentsOf: unused.map { "  \($0)" })
        }
        return parts.joined(separator: "\n")
    }
}

extension TraceDiff.Line {
    /// The line's text, whichever side it is on.
    var text: String {
        switch self {
        case .both(let text), .onlyReference(let text), .onlyOther(let text): text
        }
    }
}
