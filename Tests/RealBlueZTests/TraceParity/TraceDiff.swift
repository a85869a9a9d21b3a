/// A line diff of two traces (longest common subsequence), printed like `diff -u`: ` ` both,
/// `-` only in the reference (the real daemon's), `+` only in the other (the simulator's, or a
/// new real recording).
struct TraceDiff {
    enum Line: Equatable {
        case both(String)
        case onlyReference(String)
        case onlyOther(String)
    }

    let lines: [Line]

    init(reference: [String], other: [String]) {
        let (n, m) = (reference.count, other.count)
        // common[i][j]: the longest common subsequence of reference[i...] and other[j...].
        var common = [[Int]](repeating: [Int](repeating: 0, count: m + 1), count: n + 1)
        for i in stride(from: n - 1, through: 0, by: -1) {
            for j in stride(from: m - 1, through: 0, by: -1) {
                common[i][j] =
                    reference[i] == other[j] ? common[i + 1][j + 1] + 1 : max(common[i + 1][j], common[i][j + 1])
            }
        }
        var lines: [Line] = []
        var (i, j) = (0, 0)
        while i < n || j < m {
            if i < n, j < m, reference[i] == other[j] {
                lines.append(.both(reference[i]))
                (i, j) = (i + 1, j + 1)
            } else if j < m, i == n || common[i][j + 1] >= common[i + 1][j] {
                lines.append(.onlyOther(other[j]))
                j += 1
            } else {
                lines.append(.onlyReference(reference[i]))
                i += 1
            }
        }
        self.lines = lines
    }

    /// The diff around the lines `isShown` picks, with `context` common lines either side;
    /// `marks` adds a note after a picked line (the tolerance that excused it, say).
    func render(context: Int = 3, isShown: (Line) -> Bool, note: (Line) -> String? = { _ in nil }) -> String {
        let shown = lines.indices.filter { isShown(lines[$0]) }
        var visible = Set<Int>()
        for index in shown { visible.formUnion(max(0, index - context)...min(lines.count - 1, index + context)) }
        var out: [String] = []
        var previous = -1
        for index in visible.sorted() {
            if index != previous + 1 { out.append("@@ line \(index + 1)") }
            previous = index
            let text: String
            switch lines[index] {
            case .both(let line): text = "  " + line
            case .onlyReference(let line): text = "- " + line
            case .onlyOther(let line): text = "+ " + line
            }
            out.append(note(lines[index]).map { "\(text)    [\($0)]" } ?? text)
        }
        return out.joined(separator: "\n")
    }
}
