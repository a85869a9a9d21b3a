import BLE
import Foundation

/// The pairing handler of `ble pair`: a keyboard and a display (KeyboardDisplay), answered from
/// the command line (`--passkey`, `--yes`) or, on a terminal, by asking. Without either, what
/// needs the user is refused, with a line saying which option answers it.
struct CommandLinePairing: PairingHandler {
    /// The passkey the device shows, given with `--passkey`.
    var passkey: UInt32?
    /// `--yes`: the number the device shows matches (numeric comparison).
    var confirms: Bool
    /// Whether standard input is a terminal to ask on.
    var interactive: Bool

    var capability: PairingCapability { .keyboardDisplay }

    func passkey(for peripheral: PeripheralID) async -> UInt32? {
        if let passkey { return passkey }
        guard interactive else {
            Terminal.note("\(peripheral.address) shows a passkey: give it with --passkey")
            return nil
        }
        let answer = await Self.ask("passkey shown on \(peripheral.address): ")
        guard let answer, let value = UInt32(answer.trimmingCharacters(in: .whitespaces)), value <= 999_999 else {
            Terminal.note("a passkey is six digits at most")
            return nil
        }
        return value
    }

    func display(passkey: UInt32, entered: UInt16, for peripheral: PeripheralID) async {
        if entered == 0 { Terminal.note("type \(Self.sixDigits(passkey)) on \(peripheral.address)") }
    }

    func confirm(passkey: UInt32, for peripheral: PeripheralID) async -> Bool {
        if confirms { return true }
        guard interactive else {
            Terminal.note("does \(peripheral.address) show \(Self.sixDigits(passkey))? confirm with --yes")
            return false
        }
        let answer = await Self.ask("does \(peripheral.address) show \(Self.sixDigits(passkey))? [y/N] ")
        return ["y", "yes"].contains(answer?.trimmingCharacters(in: .whitespaces).lowercased() ?? "")
    }

    /// Just Works the device starts while the tool pairs it: the user asked for the pairing.
    func authorize(_ peripheral: PeripheralID) async -> Bool { true }

    func cancelled() { Terminal.note("bluetoothd gave up the question") }

    static func sixDigits(_ passkey: UInt32) -> String {
        let digits = String(passkey)
        return String(repeating: "0", count: max(0, 6 - digits.count)) + digits
    }

    /// Asks on standard error and reads a line from standard input on a thread of its own,
    /// so no task of the pool waits for the user.
    private static func ask(_ prompt: String) async -> String? {
        Terminal.write(prompt, to: 2)
        return await withCheckedContinuation { continuation in
            Thread { continuation.resume(returning: readLine()) }.start()
        }
    }
}
