import DBusTestSupport
import Foundation
import Testing

@testable import DBus

/// The I/O thread remembers which method a call resolved to; these calls go to the same method
/// again after the exported tree changed under it, and must reach what is exported now.
@Suite struct ResolvedMethodsTests {
    static let path = fixed { try ObjectPath("/org/example/answer") }
    static let interface = fixed { try InterfaceName("org.example.Answer") }
    static let member = fixed { try MemberName("Get") }

    static func fixed<T>(_ make: () throws -> T) -> T {
        do { return try make() } catch { preconditionFailure("\(error)") }
    }

    static func answering(_ text: String, in signature: Signature = .empty) -> ExportedInterface {
        ExportedInterface(
            interface,
            methods: [.immediate(member, in: signature, out: fixed { try Signature("s") }) { _ in [.string(text)] }])
    }

    static func ask(_ client: Connection, _ service: Connection, at path: ObjectPath = path) async throws -> String {
        let reply = try await client.call(
            destination: service.uniqueName, path: path, interface: interface, member: member)
        return try reply.argument(0, as: String.self)
    }

    @Test func aReexportedMethodAnswersWithItsNewHandler() async throws {
        try await withServiceAndClient { _, service, client in
            try service.export([Self.answering("first")], at: Self.path)
            for _ in 0..<3 { #expect(try await Self.ask(client, service) == "first") }
            try service.export([Self.answering("second")], at: Self.path)
            #expect(try await Self.ask(client, service) == "second")
        }
    }

    @Test func anUnexportedObjectIsUnknownAfterCallsReachedIt() async throws {
        try await withServiceAndClient { _, service, client in
            try service.export([Self.answering("here")], at: Self.path)
            #expect(try await Self.ask(client, service) == "here")
            service.unexport(Self.path)
            let error = await #expect(throws: DBusError.self) { try await Self.ask(client, service) }
            #expect(error?.name == DBusError.StandardName.unknownObject)
        }
    }

    @Test func aMethodWhoseSignatureChangedRefusesTheOldArguments() async throws {
        try await withServiceAndClient { _, service, client in
            try service.export([Self.answering("none")], at: Self.path)
            #expect(try await Self.ask(client, service) == "none")
            try service.export([Self.answering("one", in: Self.fixed { try Signature("s") })], at: Self.path)
            let error = await #expect(throws: DBusError.self) { try await Self.ask(client, service) }
            #expect(error?.name == DBusError.StandardName.invalidArgs)
        }
    }

    /// More methods than the cache holds, called round-robin: each still reaches its own.
    @Test func manyMethodsEachReachTheirOwnHandler() async throws {
        try await withServiceAndClient { _, service, client in
            let count = ResolvedMethods.capacity * 2 + 3
            let paths = try (0..<count).map { try ObjectPath("/org/example/answer\($0)") }
            for (index, path) in paths.enumerated() {
                try service.export([Self.answering("answer \(index)")], at: path)
            }
            for _ in 0..<2 {
                for (index, path) in paths.enumerated() {
                    #expect(try await Self.ask(client, service, at: path) == "answer \(index)")
                }
            }
        }
    }

    /// A property's `Set` answered by its own setter resolves by its arguments: each call must
    /// reach the setter of the property it names, with the value it carries.
    @Test func setsOfSetterPropertiesReachTheirOwnSetterWithTheirValue() async throws {
        try await withServiceAndClient { _, service, client in
            let received = PosixMutex<[String]>([])
            let property = { (name: String) in
                ExportedProperty(
                    name, value: .string(""), access: .readwrite,
                    deferredSet: { value, reply in
                        if case .string(let text) = value { received.withLock { $0.append("\(name)=\(text)") } }
                        reply.succeed()
                    })
            }
            try service.export(
                [ExportedInterface(Self.interface, properties: [property("A"), property("B")])], at: Self.path)
            for (name, text) in [("A", "1"), ("A", "2"), ("B", "3"), ("A", "4")] {
                _ = try await client.call(
                    destination: service.uniqueName, path: Self.path, interface: .properties,
                    member: Self.fixed { try MemberName("Set") },
                    arguments: [.string(Self.interface.rawValue), .string(name), .variant(.string(text))])
            }
            #expect(received.withLock { $0 } == ["A=1", "A=2", "B=3", "A=4"])
        }
    }
}
