import BlueZ
import DBus

/// A published PSM, as Core Bluetooth's `publishL2CAPChannel(withEncryption:)`: the PSM
/// the kernel assigned (tell centrals, e.g. in a GATT characteristic) and the channels
/// centrals open to it. From ``PeripheralManager/publishL2CAPChannel(encrypted:psm:options:)``.
public final class L2CAPPublication: Sendable, CustomStringConvertible {
    /// The PSM centrals open channels to.
    public let psm: UInt16
    /// Whether a channel requires an encrypted link.
    public let encrypted: Bool
    /// The channels centrals opened, each naming its ``L2CAPChannel/central``; ends when the
    /// PSM is unpublished. Holds 16 channels for a slow app; one that does not fit is closed.
    public let channels: AsyncStream<L2CAPChannel>

    private let continuation: AsyncStream<L2CAPChannel>.Continuation
    private let listener: L2CAPListener
    private let transport: any L2CAPTransport
    private let watched = PosixMutex<WatchedSocket?>(nil)

    init(
        _ listener: L2CAPListener, encrypted: Bool, adapter: String, transport: any L2CAPTransport,
        options: L2CAPChannelOptions, diagnostics: BLEDiagnostics?
    ) {
        psm = listener.psm
        self.encrypted = encrypted
        self.listener = listener
        self.transport = transport
        let (channels, continuation) = AsyncStream.makeStream(
            of: L2CAPChannel.self, bufferingPolicy: .bufferingOldest(16))
        self.channels = channels
        self.continuation = continuation
        diagnostics.track(continuation)
        let accept: @Sendable () -> Void = { [continuation] in
            while true {
                let accepted: L2CAPSocket?
                do { accepted = try transport.accept(listener) } catch { return }
                guard let accepted else { return }
                let central = try? CentralID(adapter: adapter, address: accepted.peer.address.description)
                let channel = L2CAPChannel(accepted, central: central, options: options, diagnostics: diagnostics)
                if case .dropped(let unwanted) = continuation.yield(channel) { unwanted.close() }
            }
        }
        let socket = WatchedSocket(listener.descriptor, diagnostics: diagnostics, onReadable: accept, onWritable: {})
        watched.withLock { $0 = socket }
        socket.watchReadable(true)
    }

    /// Stops accepting; channels already accepted stay open.
    func stop() {
        guard let socket = watched.withLock({ $0.take() }) else { return }
        transport.stopListening(listener)
        socket.cancel()
        continuation.finish()
    }

    deinit { stop() }

    /// `PSM 0x0080`
    public var description: String { "PSM 0x" + String(psm, radix: 16) + (encrypted ? " (encrypted)" : "") }
}
