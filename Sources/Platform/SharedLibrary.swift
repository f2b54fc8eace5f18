// SPDX-License-Identifier: Apache-2.0

/// A shared library loaded while the process runs (`dlopen(3)`), for a library only some
/// commands need: qiblactl loads libgeonames for its name commands alone, so its other commands
/// (the long-running `monitor` and `waybar` among them) map neither it nor GLib and GIO.
/// Never unloaded: what it registered (GLib types, resources) stays valid.
public struct SharedLibrary: @unchecked Sendable {
    private let handle: UnsafeMutableRawPointer

    /// Why a library or a symbol could not be had: `dlerror(3)`'s words.
    public struct LoadError: Error, CustomStringConvertible, Sendable {
        public let description: String
    }

    /// Loads `name` (a soname such as "libgeonames.so.0", searched as the dynamic linker searches)
    /// with every symbol bound now (`RTLD_NOW`), so a missing one fails here, not mid-call.
    public init(_ name: String) throws(LoadError) {
        switch Syscalls.dynamicOpen(name) {
        case .success(let handle): self.handle = handle
        case .failure(let error): throw error
        }
    }

    /// The address of `symbol` in the library or the libraries it depends on (`dlsym(3)`).
    public func symbol(_ symbol: String) throws(LoadError) -> UnsafeMutableRawPointer {
        switch Syscalls.dynamicSymbol(handle, symbol) {
        case .success(let address): return address
        case .failure(let error): throw error
        }
    }
}
