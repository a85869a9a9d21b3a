import Foundation

/// The scan's table on a terminal, redrawn in place: the cursor goes back up over the previous
/// drawing and the screen below it is cleared, so the table updates without scrolling.
struct LiveScanTable {
    private var rows: [String: ScanRow] = [:]
    private var order: [String] = []
    private var drawnLines = 0
    private var lastDraw: ContinuousClock.Instant?
    private let started = ContinuousClock.now
    let adapter: String

    /// Redraws at most this often: advertisements can arrive hundreds of times a second.
    static let minimumInterval = Duration.milliseconds(100)

    init(adapter: String) {
        self.adapter = adapter
        Terminal.write("\u{1B}[?25l", to: STDOUT_FILENO)
    }

    /// Takes a report (a new device or a new RSSI) and redraws if it is time.
    mutating func add(_ row: ScanRow) {
        if rows[row.address] == nil { order.append(row.address) }
        rows[row.address] = row
        let now = ContinuousClock.now
        if let lastDraw, now - lastDraw < Self.minimumInterval { return }
        draw(final: false)
        lastDraw = now
    }

    /// The last drawing, and the cursor back.
    mutating func finish() {
        draw(final: true)
        Terminal.write("\u{1B}[?25h", to: STDOUT_FILENO)
    }

    private mutating func draw(final: Bool) {
        let size = Terminal.size() ?? (columns: 100, rows: 30)
        let elapsed = Describe.seconds(ContinuousClock.now - started)
        let count = order.count == 1 ? "1 device" : "\(order.count) devices"
        let status =
            final
            ? "scanned \(elapsed) on \(adapter): \(count)"
            : "scanning on \(adapter) · \(count) · \(elapsed) · Ctrl-C to stop"
        let lines = Self.lines(
            rows: order.compactMap { rows[$0] }, status: status, columns: size.columns,
            maximumRows: max(1, size.rows - 4))
        var text = drawnLines > 0 ? "\u{1B}[\(drawnLines)F\u{1B}[J" : ""
        text += lines.joined(separator: "\n") + "\n"
        Terminal.write(text, to: STDOUT_FILENO)
        drawnLines = lines.count
    }

    /// The table's lines, each cut to `columns` (a wrapped line would break the redraw), at most
    /// `maximumRows` devices.
    static func lines(rows: [ScanRow], status: String, columns: Int, maximumRows: Int) -> [String] {
        let nameWidth = min(24, max(4, rows.map(\.name.count).max() ?? 0))
        func cells(_ name: String, _ address: String, _ rssi: String, _ services: String, _ manufacturer: String)
            -> String
        {
            let name = name.count > nameWidth ? String(name.prefix(nameWidth - 1)) + "…" : name
            return [pad(name, nameWidth), pad(address, 17), pad(rssi, 4), pad(services, 28), manufacturer]
                .joined(separator: "  ")
        }
        var plain = [cells("NAME", "ADDRESS", "RSSI", "SERVICES", "MANUFACTURER")]
        for row in rows.prefix(maximumRows) {
            plain.append(cells(row.name, row.address, String(row.rssi), row.services, row.manufacturer))
        }
        if rows.count > maximumRows { plain.append("… and \(rows.count - maximumRows) more") }
        plain.append(status)
        let cut = plain.map { line in
            line.count > columns - 1 ? String(line.prefix(max(1, columns - 2))) + "…" : line
        }
        return cut.enumerated().map { index, line in
            index == 0 ? Terminal.bold(line) : index == cut.count - 1 ? Terminal.dim(line) : line
        }
    }
}
