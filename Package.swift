// swift-tools-version:6.0
// SPDX-License-Identifier: Apache-2.0
// qiblad — a Qibla compass service for Linux devices.
//
// Shape (arrows point inwards only; ARCHITECTURE.md draws it):
//   QiblaCore            pure math, no I/O (Sources/QiblaCore)
//   QiblaInterface       the D-Bus interface as a typed table, generated from dbus/ (Sources/Interface)
//   QiblaDaemon          the daemon's model and policy, pure, one-way data flow (Sources/Daemon)
//   QiblaPlaces          towns by name: folding, ranking, the well-known names; pure (Sources/Places)
//   QiblaPlatform        the only code that calls the C library: clocks, threads, fds, files, processes (Sources/Platform)
//   adapters             one module per outside world (Sources/Adapters/*, Sources/CLibraries/*)
//   QiblaSimulator       fake IIO devices driven by QiblaCore (Sources/Simulator)
//   qiblad / qiblactl    executables: wiring only
import PackageDescription

let strict: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
]

/// A distribution's build (Debian's source package, an APKBUILD): QIBLAD_DISTRIBUTION_DEPENDENCIES names
/// a directory holding the three packages below as swift-argument-parser/, swift-log/ and swift-system/
/// (unpacked releases), so the build needs no network, and links the Swift runtime dynamically from the
/// distribution's own package (ARCHITECTURE.md, "Distribution builds").
let distributionDependencies = Context.environment["QIBLAD_DISTRIBUTION_DEPENDENCIES"]

func dependency(_ name: String, from version: Version) -> Package.Dependency {
    if let directory = distributionDependencies { return .package(path: directory + "/" + name) }
    return .package(url: "https://github.com/apple/" + name, from: version)
}

/// Release builds link the Swift runtime statically so the daemon has no toolchain dependency on a phone.
/// FoundationEssentials (used by swift-argument-parser) needs its two shim archives named explicitly
/// when linked statically this way (Swift 6.3). Distribution builds link it dynamically.
let staticStdlib: [LinkerSetting] = distributionDependencies != nil ? [] : [
    .unsafeFlags(["-static-stdlib", "-Xlinker", "-l_FoundationCollections", "-Xlinker", "-l_FoundationCShims",
                  "-Xlinker", "--no-export-dynamic"],
                 .when(configuration: .release)),
]

let package = Package(
    name: "qiblad",
    products: [
        .executable(name: "qiblad", targets: ["qiblad"]),
        .executable(name: "qiblactl", targets: ["qiblactl"]),
        .executable(name: "qibla-sim", targets: ["qibla-sim"]),
        .executable(name: "qibla-bench", targets: ["qibla-bench"]),
        .library(name: "QiblaCore", targets: ["QiblaCore"]),
        // For clients in this repository (clients/qibla-compass): the typed interface table, and
        // the test harness (private dbus-daemon, child processes) their integration tests share.
        .library(name: "QiblaInterface", targets: ["QiblaInterface"]),
        .library(name: "QiblaTestSupport", targets: ["TestSupport"]),
        // The place search qiblactl and the app share: pure, and its libgeonames adapter.
        .library(name: "QiblaPlaces", targets: ["QiblaPlaces"]),
        .library(name: "QiblaGeonames", targets: ["QiblaGeonames"]),
    ],
    dependencies: [
        dependency("swift-argument-parser", from: "1.5.0"),
        dependency("swift-log", from: "1.6.0"),
        dependency("swift-system", from: "1.4.0"),
    ],
    targets: [
        // MARK: Pure math
        .target(name: "QiblaCore", dependencies: ["CMath"], path: "Sources/QiblaCore", swiftSettings: strict),

        // MARK: The interface and the daemon's model (pure)
        .target(name: "QiblaInterface", path: "Sources/Interface", swiftSettings: strict),
        .target(name: "QiblaDaemon", dependencies: ["QiblaCore", "QiblaInterface"], path: "Sources/Daemon",
                swiftSettings: strict),
        .target(name: "QiblaPlaces", dependencies: ["QiblaCore"], path: "Sources/Places", swiftSettings: strict),

        // MARK: C libraries (one shim each)
        .systemLibrary(
            name: "CDBus", path: "Sources/CLibraries/CDBus", pkgConfig: "dbus-1",
            providers: [.apt(["libdbus-1-dev"])]),
        .systemLibrary(
            name: "CGPS", path: "Sources/CLibraries/CGPS", pkgConfig: "libgps",
            providers: [.apt(["libgps-dev"])]),

        .systemLibrary(name: "CLinux", path: "Sources/CLibraries/CLinux"),
        .systemLibrary(name: "CMath", path: "Sources/CLibraries/CMath"),

        // MARK: Platform (the only code that calls the C library directly)
        .target(
            name: "QiblaPlatform",
            dependencies: ["CLinux", .product(name: "SystemPackage", package: "swift-system")],
            path: "Sources/Platform",
            swiftSettings: strict),

        // MARK: Adapters (thin I/O around QiblaCore)
        .target(
            name: "QiblaEventLoop",
            dependencies: ["QiblaPlatform", .product(name: "SystemPackage", package: "swift-system")],
            path: "Sources/Adapters/EventLoop",
            swiftSettings: strict),
        .target(
            name: "QiblaDBus",
            dependencies: ["CDBus", "QiblaEventLoop", "QiblaPlatform"],
            path: "Sources/Adapters/DBus",
            swiftSettings: strict),
        .target(
            name: "QiblaGPSD",
            dependencies: [
                "CGPS", "QiblaCore", "QiblaEventLoop", "QiblaPlatform",
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Sources/Adapters/GPSD",
            swiftSettings: strict),
        .target(
            name: "QiblaIIO",
            dependencies: [
                "QiblaCore", "QiblaEventLoop", "QiblaIIOFormat", "QiblaPlatform",
                .product(name: "SystemPackage", package: "swift-system"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Sources/Adapters/IIO",
            swiftSettings: strict),
        .target(
            name: "QiblaIIOFormat",
            dependencies: [],
            path: "Sources/Adapters/IIOFormat",
            swiftSettings: strict),
        .target(
            name: "QiblaSensorLog",
            dependencies: ["QiblaCore"],
            path: "Sources/Adapters/SensorLog",
            swiftSettings: strict),
        .target(
            name: "QiblaState",
            dependencies: [
                "QiblaCore", "QiblaPlatform",
                .product(name: "SystemPackage", package: "swift-system"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Sources/Adapters/State",
            swiftSettings: strict),

        .target(
            name: "QiblaGeoClue",
            dependencies: [
                "QiblaCore", "QiblaDBus", "QiblaEventLoop",
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Sources/Adapters/GeoClue",
            swiftSettings: strict),

        .target(
            name: "QiblaSensorProxy",
            dependencies: [
                "QiblaDBus", "QiblaEventLoop",
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Sources/Adapters/SensorProxy",
            swiftSettings: strict),

        .target(
            name: "QiblaGeonames",
            // libgeonames (Debian's libgeonames0) is loaded at run time, not linked (Geonames.swift).
            dependencies: ["QiblaPlaces", "QiblaPlatform", .product(name: "SystemPackage", package: "swift-system")],
            path: "Sources/Adapters/Geonames",
            swiftSettings: strict),

        .target(
            name: "QiblaConfiguration",
            dependencies: [
                "QiblaCore", "QiblaDaemon", "QiblaGPSD", "QiblaGeoClue", "QiblaIIO", "QiblaState",
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Sources/Adapters/Configuration",
            swiftSettings: strict),

        // MARK: Simulator (test asset and demo engine)
        .target(
            name: "QiblaSimulator",
            dependencies: [
                "QiblaCore", "QiblaIIOFormat", "QiblaPlatform",
                .product(name: "SystemPackage", package: "swift-system"),
            ],
            path: "Sources/Simulator",
            swiftSettings: strict),

        // MARK: Executables (wiring only)
        .executableTarget(
            name: "qiblad",
            dependencies: [
                "QiblaCore", "QiblaInterface", "QiblaDaemon", "QiblaConfiguration",
                "QiblaEventLoop", "QiblaDBus", "QiblaGPSD", "QiblaGeoClue", "QiblaIIO", "QiblaSensorProxy", "QiblaState",
                "QiblaSensorLog",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "SystemPackage", package: "swift-system"),
            ],
            path: "Sources/qiblad",
            swiftSettings: strict, linkerSettings: staticStdlib),
        .executableTarget(
            name: "qiblactl",
            dependencies: [
                "QiblaCore", "QiblaInterface", "QiblaDBus", "QiblaEventLoop", "QiblaPlatform", "QiblaPlaces", "QiblaGeonames",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "Sources/qiblactl",
            swiftSettings: strict, linkerSettings: staticStdlib),
        .executableTarget(
            name: "qibla-sim",
            dependencies: [
                "QiblaCore", "QiblaInterface", "QiblaSimulator", "QiblaPlatform", "QiblaDaemon", "QiblaSensorLog", "QiblaState",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "Sources/qibla-sim",
            swiftSettings: strict),
        .executableTarget(
            name: "qibla-bench",
            dependencies: [
                "QiblaCore", "QiblaPlatform", "QiblaDaemon", "QiblaInterface",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "Sources/qibla-bench",
            swiftSettings: strict),

        // MARK: Tests
        // Counts a thread's heap allocations (its malloc stands in front of glibc's in the test executable).
        .target(name: "CAllocationCounter", path: "Tests/CAllocationCounter"),
        .target(
            name: "TestSupport",
            dependencies: [.product(name: "SystemPackage", package: "swift-system")],
            path: "Tests/TestSupport",
            swiftSettings: strict),
        .testTarget(
            name: "QiblaCoreTests", dependencies: ["QiblaCore", "QiblaSimulator", "TestSupport"],
            exclude: ["Vectors"], swiftSettings: strict),
        .testTarget(
            name: "QiblaDaemonTests", dependencies: ["QiblaDaemon", "QiblaInterface", "QiblaCore", "TestSupport"],
            swiftSettings: strict),
        .testTarget(
            name: "QiblaConfigurationTests",
            dependencies: ["QiblaConfiguration", "QiblaDaemon", "QiblaGPSD", "QiblaGeoClue", "QiblaIIO", "QiblaState", "QiblaCore", "QiblaSimulator"],
            swiftSettings: strict),
        .testTarget(
            name: "QiblaIIOTests",
            dependencies: ["QiblaIIO", "QiblaIIOFormat", "QiblaSimulator", "QiblaCore", "TestSupport", "CAllocationCounter"],
            swiftSettings: strict),
        .testTarget(name: "QiblaIIOFormatTests", dependencies: ["QiblaIIOFormat"], swiftSettings: strict),
        .testTarget(name: "QiblaPlacesTests", dependencies: ["QiblaPlaces"], swiftSettings: strict),
        .testTarget(name: "QiblaGeonamesTests", dependencies: ["QiblaGeonames", "QiblaPlaces", "QiblaCore", "QiblaPlatform"], swiftSettings: strict),
        .testTarget(
            name: "ReplayTests", dependencies: ["QiblaSensorLog", "QiblaDaemon", "QiblaInterface", "QiblaCore", "TestSupport"],
            swiftSettings: strict),
        .testTarget(
            name: "QiblaStateTests", dependencies: ["QiblaState", "QiblaCore", "TestSupport"],
            swiftSettings: strict),
        .testTarget(
            name: "QiblaGPSDTests", dependencies: ["QiblaGPSD", "QiblaEventLoop", "TestSupport"],
            exclude: ["Logs"], swiftSettings: strict),
        .testTarget(
            name: "QiblaGeoClueTests",
            dependencies: ["QiblaGeoClue", "QiblaDBus", "QiblaEventLoop", "QiblaCore", "TestSupport",
                           .product(name: "Logging", package: "swift-log")],
            swiftSettings: strict),
        .testTarget(
            name: "QiblaSensorProxyTests", dependencies: ["QiblaSensorProxy", "QiblaDBus"], swiftSettings: strict),
        .testTarget(
            name: "QiblaDBusTests", dependencies: ["QiblaDBus", "QiblaEventLoop", "TestSupport"],
            swiftSettings: strict),
        .testTarget(
            name: "QiblaPlatformTests",
            dependencies: ["QiblaPlatform", "TestSupport", .product(name: "SystemPackage", package: "swift-system")],
            swiftSettings: strict),
        .testTarget(
            name: "IntegrationTests",
            dependencies: ["QiblaCore", "QiblaDaemon", "QiblaDBus", "QiblaInterface", "QiblaPlatform", "QiblaSimulator", "TestSupport", "qiblad", "qiblactl", "qibla-sim"],
            exclude: ["Logs"], swiftSettings: strict),
    ]
)
