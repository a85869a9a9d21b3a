import DBus
import Foundation
import Synchronization

/// How a central wrote, as bluetoothd forwards it.
public enum WriteRequestType: Sendable, Hashable {
    /// ATT Write Request: the central waits for the answer.
    case request
    /// ATT Write Command (or any write to a `write-without-response` characteristic):
    /// bluetoothd expects no answer, and ``PeripheralRequest/respond(with:)-(Data)`` does nothing.
    case command
    /// A prepared (queued, reliable or long) write of an `authorizationRequired` attribute,
    /// sent for authorization only: answer with success to accept or an error to refuse; the
    /// value arrives again in a ``request`` when the central executes the queue.
    case reliable
}

/// A read or write from a remote central that the app answers, as Core Bluetooth's
/// `CBATTRequest`: ``respond(with:)-(Data)`` with the value (reads) or success (writes), or
/// ``respond(with:)-(ATTError)`` with an ATT error.
///
/// Only the first answer counts. A request left unanswered is answered with
/// ``ATTError/unlikely`` after ``PeripheralManagerOptions/requestTimeout`` (4.5 s by
/// default), just before bluetoothd's own 5 s deadline would send the central the same error.
public final class PeripheralRequest: Sendable, CustomStringConvertible {
    /// A read or a write.
    public enum Kind: Sendable, Hashable {
        /// The central reads ``PeripheralRequest/offset`` onwards.
        case read
        /// The central writes ``PeripheralRequest/value`` at ``PeripheralRequest/offset``.
        case write
    }

    /// Read or write.
    public let kind: Kind
    /// The central asking, from the `device` bluetoothd names (nil if it named none).
    public let central: CentralID?
    /// The service of the attribute.
    public let service: BluetoothUUID
    /// The characteristic (for a descriptor, the one it belongs to).
    public let characteristic: BluetoothUUID
    /// The descriptor, when the request is for one.
    public let descriptor: BluetoothUUID?
    /// Where in the value the read starts or the write goes.
    public let offset: Int
    /// The central's ATT MTU (23 when bluetoothd did not say).
    public let mtu: Int
    /// The bytes written (empty for reads).
    public let value: Data
    /// How the central wrote (`nil` for reads).
    public let writeType: WriteRequestType?

    private let reply: MethodReply?
    private let answered = Atomic<Bool>(false)
    private let timer = PosixMutex<Task<Void, Never>?>(nil)

    init(
        kind: Kind, central: CentralID?, attribute: PublishedAttribute, options: RequestOptions, value: Data,
        writeType: WriteRequestType?, reply: MethodReply?
    ) {
        self.kind = kind
        self.central = central
        self.service = attribute.service
        self.characteristic = attribute.characteristic
        self.descriptor = attribute.descriptor
        self.offset = Int(options.offset)
        self.mtu = Int(options.mtu ?? 23)
        self.value = value
        self.writeType = writeType
        self.reply = reply
    }

    /// Whether bluetoothd waits for an answer (not for a ``WriteRequestType/command``).
    public var expectsResponse: Bool { reply != nil }

    /// Whether an answer was given (by the app or by the timeout).
    public var isAnswered: Bool { answered.load(ordering: .acquiring) }

    /// Answers: the value for a read (from ``offset`` on), success for a write (`value` is
    /// ignored). Returns false when the request was already answered (or timed out).
    @discardableResult
    public func respond(with value: Data = Data()) -> Bool {
        answer { reply in reply.succeed(kind == .read ? [.bytes(value)] : []) }
    }

    /// Answers with an ATT error (see ``ATTError`` for the codes bluetoothd carries).
    /// Returns false when the request was already answered (or timed out).
    @discardableResult
    public func respond(with error: ATTError) -> Bool {
        answer { reply in reply.fail(error.reply) }
    }

    /// `read 2A37 from hci0/11:22:33:44:55:66 offset 0` (no payload).
    public var description: String {
        let target = descriptor.map { "\($0) of \(characteristic)" } ?? "\(characteristic)"
        let verb = kind == .read ? "read" : "write \(value.count) bytes to"
        return "\(verb) \(target) from \(central?.description ?? "?") offset \(offset)"
    }

    /// Answers with ``ATTError/unlikely`` after `timeout` unless answered before.
    func arm(timeout: Duration) {
        guard reply != nil else { return }
        let task = Task { [weak self] in
            do { try await Task.sleep(for: timeout) } catch { return }
            self?.respond(with: .unlikely)
        }
        timer.withLock { $0 = task }
    }

    private func answer(_ send: (MethodReply) -> Void) -> Bool {
        guard answered.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged
        else { return false }
        timer.withLock { $0.take() }?.cancel()
        if let reply { send(reply) }
        return true
    }
}
