import Testing

/// The comparison machinery on its own, with made-up traces: what a tolerance excuses, what
/// it does not, stale entries, and a list that cannot be parsed.
@Suite("Trace comparison")
struct TraceComparisonTests {
    static let reference = ["call A", "signal X", "reply A", "signal Y"]

    @Test("identical traces agree; a reordered line shows on both sides of the diff")
    func reorderShows() throws {
        let none = try TraceTolerances(parsing: "")
        #expect(TraceComparison(reference: Self.reference, other: Self.reference, tolerances: none).agrees)
        let reordered = ["call A", "reply A", "signal X", "signal Y"]
        let comparison = TraceComparison(reference: Self.reference, other: reordered, tolerances: none)
        #expect(!comparison.agrees)
        let report = comparison.report(reference: "real", other: "sim")
        #expect(report.contains("- signal X") || report.contains("- reply A"))
        #expect(report.contains("+ signal X") || report.contains("+ reply A"))
    }

    @Test("a tolerance excuses its side only, and one that matches nothing is reported")
    func tolerancesAreSidedAndMustMatch() throws {
        let tolerances = try TraceTolerances(
            parsing: """
                # comment
                real-only ^signal Y$ :: the daemon's extra signal
                sim-only ^signal Z$ :: stale: the simulator no longer sends it
                """)
        let comparison = TraceComparison(
            reference: Self.reference, other: ["call A", "signal X", "reply A"], tolerances: tolerances)
        #expect(comparison.unexcused.isEmpty)
        #expect(comparison.unused.map(\.pattern) == ["^signal Z$"])
        let swapped = TraceComparison(
            reference: ["call A", "signal X", "reply A"], other: Self.reference, tolerances: tolerances)
        #expect(swapped.unexcused == [.onlyOther("signal Y")])
    }

    @Test("a moves line may stand elsewhere within its window, but must still occur, once, and match")
    func movesWithinWindow() throws {
        let tolerances = try TraceTolerances(parsing: "moves 2 ^signal X$ :: timing")
        let moved = ["call A", "reply A", "signal X", "signal Y"]
        #expect(TraceComparison(reference: Self.reference, other: moved, tolerances: tolerances).agrees)
        let far = ["call A", "reply A", "signal Y", "call B", "reply B", "signal X"]
        let farReference = ["call A", "signal X", "reply A", "signal Y", "call B", "reply B"]
        #expect(!TraceComparison(reference: farReference, other: far, tolerances: tolerances).agrees, "past its window")
        let missing = TraceComparison(
            reference: Self.reference, other: ["call A", "reply A", "signal Y"], tolerances: tolerances)
        #expect(missing.unexcused == [.onlyReference("signal X")], "it must still occur")
        let twice = ["call A", "signal X", "reply A", "signal X", "signal Y"]
        #expect(!TraceComparison(reference: Self.reference, other: twice, tolerances: tolerances).agrees, "once")
    }

    @Test("a moves line pairs with a variant its pattern allows, not with any other line")
    func movesVariant() throws {
        let tolerances = try TraceTolerances(parsing: "moves 1 ^signal X \\{(a, b|b, a)\\}$ :: key order")
        let reference = ["call A", "signal X {a, b}", "reply A"]
        #expect(
            TraceComparison(
                reference: reference, other: ["call A", "signal X {b, a}", "reply A"], tolerances: tolerances
            ).agrees)
        #expect(
            !TraceComparison(
                reference: reference, other: ["call A", "signal X {a}", "reply A"], tolerances: tolerances
            ).agrees)
    }

    @Test("a group's lines may trade places among themselves, not with other lines")
    func movesInGroup() throws {
        let tolerances = try TraceTolerances(
            parsing:
                "moves group:objects ^added [12]$ :: idle callbacks\nmoves group:objects ^resolved$ :: idle callbacks")
        let reference = ["call C", "added 1", "added 2", "resolved", "reply C"]
        let shuffled = ["call C", "resolved", "added 1", "added 2", "reply C"]
        #expect(TraceComparison(reference: reference, other: shuffled, tolerances: tolerances).agrees)
        let outside = ["resolved", "call C", "added 1", "added 2", "reply C"]
        #expect(!TraceComparison(reference: reference, other: outside, tolerances: tolerances).agrees)
    }

    @Test("an optional line may be absent from either trace; present in both it is compared")
    func optionalLines() throws {
        let tolerances = try TraceTolerances(parsing: "optional ^signal Y.*$ :: the daemon may send it")
        #expect(
            TraceComparison(
                reference: Self.reference, other: ["call A", "signal X", "reply A"], tolerances: tolerances
            ).agrees)
        #expect(
            TraceComparison(
                reference: ["call A", "signal X", "reply A"], other: Self.reference, tolerances: tolerances
            ).agrees)
        let changed = TraceComparison(
            reference: Self.reference + ["signal Y2"], other: Self.reference + ["signal Y3"], tolerances: tolerances)
        #expect(changed.agrees, "each lacks the other's: both excused")
        let altered = ["call A", "signal X", "reply A", "signal Y {b}"]
        let both = TraceComparison(
            reference: ["call A", "signal X", "reply A", "signal Y {b}", "signal Y {a}"],
            other: altered + ["signal Y {a}"],
            tolerances: tolerances)
        #expect(both.agrees)
        let misplaced = TraceComparison(
            reference: Self.reference, other: ["call A", "signal Y", "signal X", "reply A"], tolerances: tolerances)
        #expect(!misplaced.agrees, "present in both, it is compared in place")
    }

    @Test("moves and optional entries that match no line of either trace are stale; strict runs apply them only")
    func staleVariationsAndStrict() throws {
        let tolerances = try TraceTolerances(
            parsing: "moves 2 ^signal X$ :: timing\noptional ^signal Q$ :: gone\nreal-only ^signal Y$ :: plugin")
        let other = ["call A", "reply A", "signal X"]
        let comparison = TraceComparison(reference: Self.reference, other: other, tolerances: tolerances)
        #expect(comparison.unexcused.isEmpty)
        #expect(comparison.unused.map(\.pattern) == ["^signal Q$"])
        let strict = TraceComparison(reference: Self.reference, other: other, tolerances: tolerances, strict: true)
        #expect(strict.unexcused == [.onlyReference("signal Y")])
        #expect(strict.unused.map(\.pattern) == ["^signal Q$"])
        let kept = TraceComparison(
            reference: Self.reference, other: other, tolerances: tolerances, variants: [["call A", "signal Q"]])
        #expect(kept.unused.isEmpty, "a line of a kept variant of the real trace keeps its entry")
        #expect(kept.unexcused.isEmpty)
    }

    @Test(
        "an entry without a reason, of an unknown kind, or a moves without its window is an error",
        arguments: [
            "real-only ^signal Y$", "real-only ^signal Y$ ::  ", "sometimes ^x$ :: why", "varies ^x$ :: retired",
            "moves ^x$ :: no window", "moves 0 ^x$ :: no window",
        ])
    func malformedEntries(line: String) {
        #expect(throws: StageError.self) { try TraceTolerances(parsing: line) }
    }
}
