// swift-tools-version:6.0
// SPDX-License-Identifier: Apache-2.0
// Qibla Compass — the GTK 4 / libadwaita app on qiblad (issue 24). A package of its own, so the
// daemon's build, dependencies and CI time stay as they are; it uses the daemon's typed interface
// table (QiblaInterface) and QiblaCore's formatting through the root package.
//
//   CompassModel     what the screen shows, from qiblad's properties: pure, no GTK, unit-tested
//   CGtk, CAdwaita   the C libraries (pkg-config gtk4, libadwaita-1)
//   towns by name    the root package's QiblaPlaces (the search, pure) and QiblaGeonames
//                    (libgeonames' 24,361 towns), shared with qiblactl
//   qibla-compass    the app: GTK widgets, cairo drawing and GDBus, wiring only
import PackageDescription

let strict: [SwiftSetting] = [.swiftLanguageMode(.v6)]

/// Release builds carry the Swift runtime inside the binary, as qiblad's do: a phone needs GTK and
/// libadwaita from its distribution, not a Swift toolchain.
/// A distribution's build (QIBLAD_DISTRIBUTION_DEPENDENCIES set, as in the root package) links it dynamically.
let staticStdlib: [LinkerSetting] = Context.environment["QIBLAD_DISTRIBUTION_DEPENDENCIES"] != nil ? []
    : [.unsafeFlags(["-static-stdlib"], .when(configuration: .release))]

let package = Package(
    name: "qibla-compass",
    products: [
        .executable(name: "qibla-compass", targets: ["qibla-compass"]),
    ],
    dependencies: [
        .package(name: "qiblad", path: "../.."),
    ],
    targets: [
        .systemLibrary(name: "CIntl"),
        .target(
            name: "CompassModel",
            dependencies: [
                "CIntl",
                .product(name: "QiblaCore", package: "qiblad"),
                .product(name: "QiblaInterface", package: "qiblad"),
                .product(name: "QiblaPlaces", package: "qiblad"),
            ],
            swiftSettings: strict),
        .systemLibrary(name: "CGtk", pkgConfig: "gtk4", providers: [.apt(["libgtk-4-dev"])]),
        .systemLibrary(name: "CAdwaita", pkgConfig: "libadwaita-1", providers: [.apt(["libadwaita-1-dev"])]),
        .executableTarget(
            name: "qibla-compass",
            dependencies: [
                "CompassModel", "CGtk", "CAdwaita",
                .product(name: "QiblaCore", package: "qiblad"),
                .product(name: "QiblaPlaces", package: "qiblad"),
                .product(name: "QiblaGeonames", package: "qiblad"),
                .product(name: "QiblaInterface", package: "qiblad"),
            ],
            swiftSettings: strict, linkerSettings: staticStdlib),
        .testTarget(
            name: "CompassModelTests",
            dependencies: ["CompassModel", .product(name: "QiblaInterface", package: "qiblad"), .product(name: "QiblaPlaces", package: "qiblad")],
            swiftSettings: strict),
        // The app against a real qiblad on a private bus, on a headless X server (Xvfb); reads the
        // screenshots' pixels through GdkTexture.
        .testTarget(
            name: "CompassAppTests",
            dependencies: [
                "CGtk", "qibla-compass",
                .product(name: "QiblaCore", package: "qiblad"),
                .product(name: "QiblaTestSupport", package: "qiblad"),
            ],
            swiftSettings: strict),
    ]
)
