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

    @Test("varies lines leave both traces; strict comparison ignores the other kinds")
    func variesAndStrict() throws {
        let tolerances = try TraceTolerances(
            parsing: "varies ^signal X$ :: timing\nreal-only ^signal Y$ :: plugin")
        let other = ["call A", "reply A"]
        #expect(TraceComparison(reference: Self.reference, other: other, tolerances: tolerances).agrees)
        let strict = TraceComparison(reference: Self.reference, other: other, tolerances: tolerances, strict: true)
        #expect(strict.unexcused == [.onlyReference("signal Y")])
    }

    @Test(
        "an entry without a reason, or of an unknown kind, is an error",
        arguments: [
            "real-only ^signal Y$", "real-only ^signal Y$ ::  ", "sometimes ^x$ :: why",
        ])
    func malformedEntries(line: String) {
        #expect(throws: StageError.self) { try TraceTolerances(parsing: line) }
    }
}
