/// Places an application's services in the adapter's attribute database, as
/// `database_add_app` does: each service takes one contiguous handle range; inside it come,
/// per characteristic, the declaration, the value, the CCC descriptor (for notify/indicate),
/// the Extended Properties descriptor (for reliable-write/writable-auxiliaries), then the
/// application's descriptors.
///
/// A requested service handle places the service there; a requested characteristic or
/// descriptor handle must be the one the layout gives it (what bluetoothd wrote back at an
/// earlier registration). Anything else fails with "Failed to create entry in database".
struct HandleAllocator: Sendable {
    /// Handles below this belong to bluetoothd's own GAP and GATT services.
    static let firstApplicationHandle: UInt16 = 0x0010

    /// Ranges already taken on the adapter.
    private(set) var used: [ClosedRange<UInt16>]

    init(used: [ClosedRange<UInt16>] = []) {
        self.used = used
    }

    /// Assigns every handle of `services` and marks their ranges as used.
    mutating func place(_ services: inout [RegisteredService]) throws(ApplicationRejection) {
        for index in services.indices {
            let count = Self.handleCount(services[index])
            let start = services[index].handle == 0 ? try freeStart(count: count) : services[index].handle
            let end = Int(start) + count - 1
            guard end <= Int(UInt16.max), !overlaps(start...UInt16(end)) else { throw .databaseEntry }
            try layOut(&services[index], start: start)
            used.append(start...UInt16(end))
        }
    }

    /// The number of attributes a service occupies.
    static func handleCount(_ service: RegisteredService) -> Int {
        var count = 1
        for characteristic in service.characteristics {
            count += 2 + characteristic.descriptors.count
            if characteristic.canNotify || characteristic.canIndicate { count += 1 }
            if characteristic.hasExtendedProperties { count += 1 }
        }
        return count
    }

    private func overlaps(_ range: ClosedRange<UInt16>) -> Bool {
        used.contains { $0.overlaps(range) }
    }

    /// The first gap of `count` handles at or after ``firstApplicationHandle``.
    private func freeStart(count: Int) throws(ApplicationRejection) -> UInt16 {
        var candidate = Int(Self.firstApplicationHandle)
        for range in used.sorted(by: { $0.lowerBound < $1.lowerBound }) {
            if candidate + count - 1 < Int(range.lowerBound) { break }
            candidate = max(candidate, Int(range.upperBound) + 1)
        }
        guard candidate + count - 1 <= Int(UInt16.max) else { throw .databaseEntry }
        return UInt16(candidate)
    }

    private func layOut(_ service: inout RegisteredService, start: UInt16) throws(ApplicationRejection) {
        service.handle = start
        var next = Int(start) + 1
        for c in service.characteristics.indices {
            let value = UInt16(next + 1)
            try check(service.characteristics[c].handle, equals: value)
            service.characteristics[c].handle = value
            next += 2
            let characteristic = service.characteristics[c]
            if characteristic.canNotify || characteristic.canIndicate {
                service.characteristics[c].cccHandle = UInt16(next)
                next += 1
            }
            if characteristic.hasExtendedProperties { next += 1 }
            for d in characteristic.descriptors.indices {
                try check(characteristic.descriptors[d].handle, equals: UInt16(next))
                service.characteristics[c].descriptors[d].handle = UInt16(next)
                next += 1
            }
        }
        service.endHandle = UInt16(next - 1)
    }

    private func check(_ requested: UInt16, equals placed: UInt16) throws(ApplicationRejection) {
        guard requested == 0 || requested == placed else { throw .databaseEntry }
    }
}
