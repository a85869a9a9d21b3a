// swift-tools-version:6.0
import PackageDescription

let strictSettings: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
    .enableUpcomingFeature("ExistentialAny"),
]

let package = Package(
    name: "swift-ble",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "DBus", targets: ["DBus"]),
        .library(name: "DBusTestSupport", targets: ["DBusTestSupport"]),
        .library(name: "BlueZ", targets: ["BlueZ"]),
        .library(name: "BLE", targets: ["BLE"]),
        .library(name: "BLESimulator", targets: ["BLESimulator"]),
        .executable(name: "ble", targets: ["ble"]),
        .executable(name: "ble-sim", targets: ["ble-sim"]),
    ],
    targets: [
        .systemLibrary(
            name: "CDBus",
            path: "Sources/CDBus",
            pkgConfig: "dbus-1",
            providers: [.apt(["libdbus-1-dev"])]
        ),
        .target(name: "DBus", dependencies: ["CDBus"], swiftSettings: strictSettings),
        .target(name: "DBusTestSupport", dependencies: ["CDBus", "DBus"], swiftSettings: strictSettings),
        .target(name: "BlueZ", dependencies: ["DBus"], swiftSettings: strictSettings),
        .target(name: "BLE", dependencies: ["DBus", "BlueZ"], swiftSettings: strictSettings),
        .target(
            name: "BLESimulator", dependencies: ["DBus", "BlueZ", "DBusTestSupport"], swiftSettings: strictSettings),
        .executableTarget(
            name: "dbus-demo",
            dependencies: ["DBus", "DBusTestSupport"],
            path: "Sources/dbus-demo",
            swiftSettings: strictSettings
        ),
        .target(
            name: "BLECommandLine", dependencies: ["BLE", "BlueZ", "DBus", "BLESimulator", "DBusTestSupport"],
            swiftSettings: strictSettings),
        .executableTarget(
            name: "ble",
            dependencies: ["BLECommandLine"],
            path: "Sources/ble",
            swiftSettings: strictSettings
        ),
        .executableTarget(
            name: "ble-sim",
            dependencies: ["BLECommandLine"],
            path: "Sources/ble-sim",
            swiftSettings: strictSettings
        ),
        .executableTarget(
            name: "ble-bench",
            dependencies: ["BLE", "DBus", "BlueZ"],
            path: "Benchmarks/ble-bench",
            swiftSettings: strictSettings
        ),
        .target(
            name: "DocSnippets", dependencies: ["BLE", "BLESimulator", "DBusTestSupport"], path: "DocsSource/Snippets",
            swiftSettings: strictSettings),
        .testTarget(
            name: "DocSnippetsTests", dependencies: ["DocSnippets", "BLE", "BLESimulator", "DBusTestSupport"],
            swiftSettings: strictSettings),
        .testTarget(
            name: "DBusTests",
            dependencies: ["DBus", "DBusTestSupport"],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "BLETests", dependencies: ["BLE", "BLESimulator", "DBusTestSupport"], swiftSettings: strictSettings),
        .testTarget(
            name: "BLECommandLineTests", dependencies: ["BLECommandLine", "BLE", "BLESimulator", "DBusTestSupport"],
            swiftSettings: strictSettings),
        .testTarget(name: "BlueZTests", dependencies: ["BlueZ", "DBus"], swiftSettings: strictSettings),
        .testTarget(
            name: "RealBlueZTests", dependencies: ["BLE", "BLESimulator", "BlueZ", "DBus", "DBusTestSupport"],
            exclude: ["Traces"], swiftSettings: strictSettings),
        .testTarget(
            name: "BLESimulatorTests", dependencies: ["BLESimulator", "BlueZ", "DBus", "DBusTestSupport"],
            swiftSettings: strictSettings),
    ]
)
