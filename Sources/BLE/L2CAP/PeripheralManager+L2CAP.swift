import BlueZ
import DBus

extension PeripheralManager {
    /// Publishes an L2CAP PSM that centrals open LE credit-based channels to, as Core
    /// Bluetooth's `publishL2CAPChannel(withEncryption:)`.
    ///
    /// ```swift
    /// let publication = try await manager.publishL2CAPChannel()
    /// // tell centrals publication.psm, e.g. in a characteristic's value
    /// for await channel in publication.channels {
    ///     Task { for await sdu in channel.incoming { try await channel.send(sdu) } }  // echo
    /// }
    /// ```
    ///
    /// The kernel carries the channels (BlueZ has no D-Bus API for L2CAP);
    /// ``PeripheralManagerOptions/l2capTransport`` says whose sockets are used.
    ///
    /// - Parameters:
    ///   - encrypted: whether a channel requires an encrypted link (the central pairs first).
    ///   - psm: a fixed PSM (0x0001–0x00FF; below 0x0080 needs `CAP_NET_BIND_SERVICE`), or nil
    ///     for one the kernel assigns from 0x0080–0x00FF.
    ///   - options: receive MTU, buffering and the sends' deadline of accepted channels.
    /// - Throws: ``BLEError/Code/invalidArguments`` for a PSM out of range;
    ///   ``BLEError/Code/alreadyExists`` for a PSM already published; ``BLEError/Code/notFound``
    ///   while bluetoothd does not report the adapter's address; ``BLEError/Code/notPermitted``;
    ///   ``BLEError/Code/notSupported`` on a kernel without Bluetooth.
    public func publishL2CAPChannel(
        encrypted: Bool = false, psm: UInt16? = nil, options: L2CAPChannelOptions = L2CAPChannelOptions()
    ) throws(BLEError) -> L2CAPPublication {
        if let psm {
            guard L2CAPPSM.validRange.contains(psm) else {
                throw BLEError(
                    .invalidArguments, message: "PSM 0x\(String(psm, radix: 16)) is not an LE PSM (0x0001–0x00FF)")
            }
            guard l2capPublications[psm] == nil else {
                throw BLEError(.alreadyExists, message: "PSM 0x\(String(psm, radix: 16)) is already published")
            }
        }
        guard let local = session.adapterEndpoint(at: adapterPath) else {
            throw BLEError(.notFound, message: "bluetoothd does not report \(adapterName)'s address")
        }
        let transport = self.options.l2capTransport
        let request = L2CAPListenRequest(
            local: local, psm: psm, security: encrypted ? .medium : .low, receiveMTU: options.receiveMTU)
        let listener: L2CAPListener
        do { listener = try transport.listen(request) } catch { throw BLEError(error) }
        let publication = L2CAPPublication(
            listener, encrypted: encrypted, adapter: adapterName, transport: transport, options: options,
            diagnostics: session.diagnostics)
        l2capPublications[publication.psm] = publication
        return publication
    }

    /// Unpublishes a PSM: no more channels are accepted on it and its
    /// ``L2CAPPublication/channels`` ends; channels already open stay open.
    public func unpublishL2CAPChannel(_ psm: UInt16) {
        l2capPublications.removeValue(forKey: psm)?.stop()
    }

    /// The PSMs published now, in increasing order.
    public var publishedL2CAPChannels: [UInt16] { l2capPublications.keys.sorted() }

    /// Unpublishes every PSM (at ``close()``).
    func unpublishAllL2CAPChannels() {
        for publication in l2capPublications.values { publication.stop() }
        l2capPublications.removeAll()
    }
}
