import Foundation
import Testing

/// The kept variants of the real trace (Traces/variants/) against the checked-in one, as a new
/// recording of the real daemon is compared with it: only `moves` and `optional` entries
/// apply. Each variant is a real run that differed from the checked-in recording, so this
/// shows, without the qemu guest, that the list allows what the real daemon was seen to do.
@Suite("Trace variants")
struct TraceVariantTests {
    @Test("every kept variant of the real trace agrees with the checked-in one under the moves and optional entries")
    func variantsAgree() throws {
        let tolerances = try TraceTolerances(parsing: try String(contentsOf: TraceFiles.tolerances, encoding: .utf8))
        let reference = try #require(TraceFiles.checkedIn())
        let variants = try TraceFiles.variants()
        #expect(!variants.isEmpty, "no variants in \(TraceFiles.variantsDirectory.path)")
        for variant in variants {
            let isReference = variant.lines == reference
            #expect(!isReference, "\(variant.name) is the checked-in recording again")
            let comparison = TraceComparison(
                reference: reference, other: variant.lines, tolerances: tolerances, strict: true,
                variants: variants.map(\.lines))
            #expect(
                comparison.agrees,
                "\(variant.name):\n\(comparison.report(reference: "the checked-in real trace", other: variant.name))")
        }
    }
}
