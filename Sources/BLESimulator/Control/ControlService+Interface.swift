import DBus
import Foundation

extension ControlService {
    /// `org.swiftble.Simulator1`: each method's exact signature and the command it runs. The
    /// connection refuses calls with other argument types (`InvalidArgs`) before they get here.
    func interface(simulator: Simulator) -> ExportedInterface {
        let commands = ControlCommands(simulator: simulator, service: self)
        let methods: [ExportedMethod] = [
            Self.method("AddPeripheral", in: "s") { call throws(DBusError) in
                try commands.addPeripheral(json: try call.argument(0))
                return []
            },
            Self.method("RemovePeripheral", in: "s") { call throws(DBusError) in
                try commands.removePeripheral(address: try call.argument(0))
                return []
            },
            Self.method("UpdatePeripheral", in: "ss") { call throws(DBusError) in
                try commands.updatePeripheral(address: try call.argument(0), json: try call.argument(1))
                return []
            },
            Self.method("Notify", in: "ssay", out: "u") { call throws(DBusError) in
                let delivered = try commands.notify(
                    address: try call.argument(0), characteristic: try call.argument(1), value: try call.argument(2))
                return [.uint32(delivered)]
            },
            Self.method("StartNotifications", in: "ssuuu") { call throws(DBusError) in
                try commands.startNotifications(
                    address: try call.argument(0), characteristic: try call.argument(1), count: try call.argument(2),
                    intervalMicroseconds: try call.argument(3), size: try call.argument(4))
                return []
            },
            Self.method("InjectFault", in: "s") { call throws(DBusError) in
                try commands.injectFault(json: try call.argument(0))
                return []
            },
            Self.method("ClearFaults") { _ throws(DBusError) in
                try commands.clearFaults()
                return []
            },
            Self.method("DropLink", in: "su") { call throws(DBusError) in
                try commands.dropLink(address: try call.argument(0), afterMilliseconds: try call.argument(1))
                return []
            },
            Self.method("RequestSecurity", in: "ss", out: "u") { call throws(DBusError) in
                let started = try commands.requestSecurity(address: try call.argument(0), level: try call.argument(1))
                return [.uint32(started)]
            },
            Self.method("SetPowered", in: "ub") { call throws(DBusError) in
                try commands.setPowered(adapter: try call.argument(0), on: try call.argument(1))
                return []
            },
            Self.method("Restart") { _ throws(DBusError) in
                try await commands.restart()
                return []
            },
            Self.method("Value", in: "ss", out: "ay") { call throws(DBusError) in
                [.bytes(try commands.value(address: try call.argument(0), characteristic: try call.argument(1)))]
            },
            Self.method("Statistics", out: "a{sv}") { _ throws(DBusError) in
                [try commands.statistics()]
            },
        ]
        return ExportedInterface(SimulatorControlInterface.interface, methods: methods)
    }

    /// A method answered on its own task, with every failure turned into a named error reply.
    private static func method(
        _ name: String, in inSignature: String = "", out outSignature: String = "",
        _ body: @escaping @Sendable (DBusMessage) async throws(DBusError) -> [DBusValue]
    ) -> ExportedMethod {
        ExportedMethod(
            ControlNameLiteral.member(name), in: ControlNameLiteral.signature(inSignature),
            out: ControlNameLiteral.signature(outSignature)
        ) { call in
            do {
                return try await body(call)
            } catch {
                throw SimulatorControlError.reply(for: error)
            }
        }
    }
}
