import BlueZ
import DBus

extension Peripheral {
    /// Opens an LE credit-based L2CAP channel to the peripheral's `psm`, as Core Bluetooth's
    /// `openL2CAPChannel(_:)`: for bulk data (firmware images, files, audio) at several times
    /// GATT's throughput. The peripheral publishes the PSM (often in a GATT characteristic).
    ///
    /// ```swift
    /// let channel = try await peripheral.openL2CAPChannel(psm: 0x0080)
    /// try await channel.send(Data(repeating: 0xA5, count: channel.sendMTU))
    /// for await sdu in channel.incoming { … }
    /// ```
    ///
    /// The channel follows the link: it ends with ``BLEError/Code/disconnected`` when the
    /// peripheral goes. The kernel carries it (BlueZ has no D-Bus API for L2CAP); the
    /// central's ``CentralOptions/l2capTransport`` says whose sockets are used.
    ///
    /// - Parameters:
    ///   - psm: an LE PSM, 0x0001–0x00FF.
    ///   - options: receive MTU, buffering and the sends' deadline. (A peripheral that
    ///     requires encryption refuses the first attempt; the kernel then raises the link's
    ///     security and asks again.)
    ///   - timeout: the deadline, from the call; ``CentralOptions/callTimeout`` when nil.
    /// - Throws: ``BLEError/Code/invalidArguments`` for a PSM out of range;
    ///   ``BLEError/Code/notConnected``; ``BLEError/Code/connectionFailed`` when the
    ///   peripheral refuses (nothing published on the PSM); ``BLEError/Code/notPermitted`` when
    ///   its security is not met; ``BLEError/Code/timeout``; ``BLEError/Code/cancelled``;
    ///   ``BLEError/Code/disconnected`` when the link drops meanwhile;
    ///   ``BLEError/Code/notSupported`` on a kernel without Bluetooth.
    public func openL2CAPChannel(
        psm: UInt16, options: L2CAPChannelOptions = L2CAPChannelOptions(), timeout: Duration? = nil
    ) async throws(BLEError) -> L2CAPChannel {
        let deadline = ContinuousClock.now + (timeout ?? operationTimeout)
        guard L2CAPPSM.validRange.contains(psm) else {
            throw BLEError(
                .invalidArguments, message: "PSM 0x\(String(psm, radix: 16)) is not an LE PSM (0x0001–0x00FF)")
        }
        guard connectionState == .connected else {
            throw BLEError(.notConnected, message: "\(id) is not connected")
        }
        let request = try l2capRequest(psm: psm, options: options)
        let transport = l2capTransport
        let descriptor: FileDescriptor
        do { descriptor = try transport.startConnect(request) } catch { throw BLEError(error) }
        let attempt = L2CAPConnectAttempt(descriptor, diagnostics: session.diagnostics)
        let following = l2capLinks.follow(attempt)
        defer {
            l2capLinks.forget(following)
            attempt.close()
        }
        try await attempt.wait(until: deadline, psm: psm).get()
        guard connectionState == .connected else {
            throw BLEError(.disconnected, message: "the link dropped while the channel was being opened")
        }
        let socket: L2CAPSocket
        do { socket = try transport.finishConnect(descriptor, request) } catch { throw BLEError(error) }
        attempt.handOver()
        let channel = L2CAPChannel(socket, peripheral: id, options: options, diagnostics: session.diagnostics)
        l2capLinks.follow(channel.core)
        return channel
    }

    /// Where the channel goes from and to: this central's adapter, the device's address and type.
    private func l2capRequest(psm: UInt16, options: L2CAPChannelOptions) throws(BLEError) -> L2CAPConnectRequest {
        guard let adapterPath = BlueZPath.adapter(containing: devicePath),
            let local = session.adapterEndpoint(at: adapterPath)
        else {
            throw BLEError(.notFound, message: "bluetoothd does not report the adapter's address")
        }
        let address = id.bluetoothAddress
        let known = session.read {
            $0.properties(at: devicePath, interface: BlueZInterface.device1)?[DeviceProperties.Key.addressType]
        }.flatMap { try? AddressType(dbusValue: $0) }
        let type = known ?? (id.addressType == .random ? .random : .public)
        return L2CAPConnectRequest(
            local: local, peer: L2CAPEndpoint(address: address, addressType: type), psm: psm,
            security: .low, receiveMTU: options.receiveMTU)
    }
}

extension BlueZSession {
    /// The adapter at `path` as an L2CAP endpoint, while the mirror holds its address.
    func adapterEndpoint(at path: ObjectPath) -> L2CAPEndpoint? {
        read { tree -> L2CAPEndpoint? in
            let properties = tree.properties(at: path, interface: BlueZInterface.adapter1)
            guard
                let address = properties?[AdapterProperties.Key.address].flatMap({
                    try? BluetoothAddress(dbusValue: $0)
                })
            else { return nil }
            let type = properties?[AdapterProperties.Key.addressType].flatMap { try? AddressType(dbusValue: $0) }
            return L2CAPEndpoint(address: address, addressType: type ?? .public)
        }
    }
}
