import DBusTestSupport
import Foundation
import Testing

@testable import DBus

#if canImport(FoundationXML)
    import FoundationXML
#endif

/// `org.freedesktop.DBus.Introspectable.Introspect`, parsed as XML.
@Suite struct IntrospectionTests {
    /// The parts of an introspection document the tests look at.
    final class Document: NSObject, XMLParserDelegate {
        struct Method: Equatable {
            var arguments: [String] = []
        }

        private(set) var interfaces:
            [String: (methods: [String: Method], signals: [String: [String]], properties: [String: [String: String]])] =
                [:]
        private(set) var children: [String] = []
        private(set) var rootNodes = 0
        private var depth = 0
        private var currentInterface: String?
        private var currentMethod: String?
        private var currentSignal: String?

        static func parse(_ text: String) throws -> Document {
            let document = Document()
            let parser = XMLParser(data: Data(text.utf8))
            parser.delegate = document
            guard parser.parse() else {
                throw DBusError(
                    .invalidValue, message: "not well-formed XML: \(String(describing: parser.parserError))")
            }
            return document
        }

        func parser(
            _ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?,
            attributes: [String: String] = [:]
        ) {
            depth += 1
            switch name {
            case "node" where depth == 1: rootNodes += 1
            case "node": children.append(attributes["name"] ?? "")
            case "interface":
                let interfaceName = attributes["name"] ?? ""
                currentInterface = interfaceName
                interfaces[interfaceName] = ([:], [:], [:])
            case "method":
                currentMethod = attributes["name"]
                if let interface = currentInterface, let method = currentMethod {
                    interfaces[interface]?.methods[method] = Method()
                }
            case "signal":
                currentSignal = attributes["name"]
                if let interface = currentInterface, let signal = currentSignal {
                    interfaces[interface]?.signals[signal] = []
                }
            case "arg":
                let text =
                    "\(attributes["direction"] ?? "")\(attributes["direction"] == nil ? "" : ":")\(attributes["type"] ?? "")"
                if let interface = currentInterface, let method = currentMethod {
                    interfaces[interface]?.methods[method]?.arguments.append(text)
                } else if let interface = currentInterface, let signal = currentSignal {
                    interfaces[interface]?.signals[signal]?.append(text)
                }
            case "property":
                if let interface = currentInterface, let property = attributes["name"] {
                    interfaces[interface]?.properties[property] = attributes
                }
            default: break
            }
        }

        func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
            depth -= 1
            switch name {
            case "interface": currentInterface = nil
            case "method": currentMethod = nil
            case "signal": currentSignal = nil
            default: break
            }
        }
    }

    private func introspect(_ path: ObjectPath, on service: Connection, from client: Connection) async throws -> String
    {
        let reply = try await client.call(
            destination: service.uniqueName, path: path, interface: .introspectable, member: try member("Introspect"))
        #expect(reply.signature == "s")
        return try reply.argument(0)
    }

    private func exportThing(on service: Connection) throws {
        try service.export(
            [
                ExportedInterface(
                    try interface("org.example.Thing"),
                    methods: [
                        .immediate(try member("Add"), in: try signature("ii"), out: try signature("x")) { _ in
                            [.int64(0)]
                        },
                        ExportedMethod(try member("Describe"), out: try signature("a{sv}")) { _ in
                            [.dictionary(key: .string, value: .variant, [])]
                        },
                    ],
                    properties: [
                        ExportedProperty("Level", value: .uint16(1), access: .readwrite),
                        ExportedProperty("Tag<&>", value: .string("x"), changeSignal: .invalidates),
                    ],
                    signals: [SignalDescription(try member("Changed"), signature: try signature("sv"))])
            ], at: try path("/org/example/thing"))
        try service.export(
            [ExportedInterface(try interface("org.example.Part"))], at: try path("/org/example/thing/part0"))
        try service.export(
            [ExportedInterface(try interface("org.example.Part"))], at: try path("/org/example/thing/part1"))
    }

    @Test func anObjectListsItsInterfacesMethodsPropertiesAndChildren() async throws {
        try await withServiceAndClient { _, service, client in
            try exportThing(on: service)
            let document = try Document.parse(
                try await introspect(try path("/org/example/thing"), on: service, from: client))
            #expect(document.rootNodes == 1)
            #expect(
                Set(document.interfaces.keys)
                    == ["org.freedesktop.DBus.Introspectable", "org.freedesktop.DBus.Properties", "org.example.Thing"])
            let thing = try #require(document.interfaces["org.example.Thing"])
            #expect(thing.methods["Add"]?.arguments == ["in:i", "in:i", "out:x"])
            #expect(thing.methods["Describe"]?.arguments == ["out:a{sv}"])
            #expect(thing.signals["Changed"] == ["s", "v"])
            #expect(thing.properties["Level"]?["type"] == "q")
            #expect(thing.properties["Level"]?["access"] == "readwrite")
            #expect(thing.properties["Tag<&>"]?["access"] == "read", "names are escaped, and read back intact")
            #expect(document.interfaces["org.freedesktop.DBus.Introspectable"]?.methods["Introspect"] != nil)
            #expect(
                document.interfaces["org.freedesktop.DBus.Properties"]?.methods.keys.sorted() == [
                    "Get", "GetAll", "Set",
                ])
            #expect(document.children.sorted() == ["part0", "part1"])
        }
    }

    @Test func pathsAboveObjectsListTheWayDown() async throws {
        try await withServiceAndClient { _, service, client in
            try exportThing(on: service)
            service.addObjectManager(at: try path("/org/example"))
            let root = try Document.parse(try await introspect(.root, on: service, from: client))
            #expect(root.children == ["org"])
            let example = try Document.parse(try await introspect(try path("/org/example"), on: service, from: client))
            #expect(example.children == ["thing"])
            #expect(example.interfaces["org.freedesktop.DBus.ObjectManager"]?.methods["GetManagedObjects"] != nil)
            let leaf = try Document.parse(
                try await introspect(try path("/org/example/thing/part0"), on: service, from: client))
            #expect(leaf.children.isEmpty)
            #expect(leaf.interfaces["org.example.Part"] != nil)
            let error = await expectDBusError {
                try await introspect(try path("/org/nothing"), on: service, from: client)
            }
            #expect(error?.name == DBusError.StandardName.unknownObject)
        }
    }
}
