import BLE
import Foundation

// snippet.begin pairing-handler
/// Asks the user for the passkey the peripheral shows (this device has a keypad, no display).
struct KeypadPairing: PairingHandler {
    let capability = PairingCapability.keyboardOnly
    let askUser: @Sendable (PeripheralID) async -> UInt32?

    func passkey(for peripheral: PeripheralID) async -> UInt32? {
        await askUser(peripheral)  // cancelled if BlueZ gives up first
    }
}
// snippet.end

/// The code of the "Pairing and bonding" article.
enum Pairing {
    /// Connects, pairs with a passkey the "user" types, and returns whether it is bonded; then
    /// forgets the bond again when `forget` is set.
    static func pairWithPasskey(
        bus: Bus, id: PeripheralID, typed passkey: UInt32, forget: Bool
    ) async throws(BLEError) -> (paired: Bool, afterForget: Bool) {
        // snippet.begin pair
        var options = CentralOptions()
        options.pairingHandler = KeypadPairing { _ in passkey }  // e.g. from a text field
        let central = try await Central(bus: bus, options: options)
        let peripheral = try await central.connect(id, timeout: .seconds(10))
        if await !peripheral.isPaired {
            do {
                try await peripheral.pair(timeout: .seconds(60))
            } catch {
                // authenticationFailed: a wrong passkey, or refused; dbusErrorName says which.
                print("not paired: \(error.code) \(error.dbusErrorName ?? "-")")
                throw error
            }
        }
        // snippet.end
        let paired = await peripheral.isPaired
        if forget {
            // snippet.begin forget
            try await central.forget(peripheral.id)  // the bond, the cache, the link
            // snippet.end
        }
        let afterForget = await central.knownPeripherals().contains { $0.id == id && $0.isPaired }
        await central.close()
        return (paired, afterForget)
    }

    /// Connects to a peripheral that asks for a bond by itself (a Security Request right after
    /// connecting) and returns once it is paired, with the default handler answering.
    static func bondRequestedByPeripheral(bus: Bus, id: PeripheralID) async throws(BLEError) -> Bool {
        // snippet.begin peer-pairing
        let central = try await Central(bus: bus)  // JustWorksPairing: accepts Just Works
        let peripheral = try await central.connect(id, timeout: .seconds(10))
        let events = peripheral.events  // subscribed before reading isPaired: no change is missed
        if await !peripheral.isPaired {
            for await event in events where event == .pairingChanged(isPaired: true) { break }
        }
        // snippet.end
        let paired = await peripheral.isPaired
        await central.close()
        return paired
    }
}
