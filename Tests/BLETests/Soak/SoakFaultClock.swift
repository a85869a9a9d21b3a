import DBus
import Foundation

/// Which operations a fault could have reached. Every chaos action moves a peripheral's
/// clock (a fault for it, a drop of its link) or every clock (a power cycle, a bluetoothd
/// restart). An operation is untouched when its peripheral's clock has not moved since the
/// peripheral's last connect that no fault touched either, and no fault for it was pending
/// when it began: its link is the one that connect brought up, and nothing has hit it since.
/// A fault that acts late (a delay, a reply held back) can strike after a later connect (a
/// delayed Disconnect drops the next link; a delayed write lands over a later one), so its
/// peripheral stays touched for the rest of the chaos; the quiet round covers it after.
final class SoakFaultClock: Sendable {
    private struct State {
        var global = 0
        var local: [Int: Int] = [:]
        /// Peripherals a fault that acts late was meant for.
        var unsettled: Set<Int> = []
        /// The clock when the peripheral last connected untouched.
        var cleanSince: [Int: Int] = [:]
    }

    private let state = PosixMutex(State())

    /// A chaos action reached peripheral `index` (nil: every peripheral); `lasting` when it
    /// may act late.
    func touch(_ index: Int?, lasting: Bool = false) {
        state.withLock { state in
            if let index { state.local[index, default: 0] += 1 } else { state.global += 1 }
            if let index, lasting { state.unsettled.insert(index) }
        }
    }

    func now(_ index: Int) -> Int { state.withLock { $0.global + ($0.local[index] ?? 0) } }

    /// Peripheral `index` connected, untouched since `clock`.
    func connected(_ index: Int, untouchedSince clock: Int) {
        state.withLock { state in
            state.cleanSince[index] = state.global + (state.local[index] ?? 0) == clock ? clock : nil
        }
    }

    /// Whether nothing touched peripheral `index` since its last untouched connect.
    func isClean(_ index: Int) -> Bool {
        state.withLock { state in
            !state.unsettled.contains(index) && state.cleanSince[index] == state.global + (state.local[index] ?? 0)
        }
    }
}
