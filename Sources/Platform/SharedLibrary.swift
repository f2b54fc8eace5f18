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

    /// The file mapped at `address` (a symbol of a loaded library), as the kernel names it in
    /// `/proc/self/maps` (proc(5)): the real file, links resolved
    /// ("/usr/lib/x86_64-linux-gnu/libgeonames.so.0.0.0"); nil when no file is mapped there. Read
    /// from the maps rather than `dladdr(3)`, which glibc declares only under `_GNU_SOURCE`.
    public static func path(containing address: UnsafeRawPointer) -> String? {
        guard let maps = FileSystem.readText("/proc/self/maps", limit: 16 << 20) else { return nil }
        let target = UInt(bitPattern: address)
        for line in maps.split(separator: "\n") {
            // start-end perms offset dev inode path
            let fields = line.split(separator: " ", maxSplits: 5, omittingEmptySubsequences: true)
            guard fields.count == 6, let dash = fields[0].firstIndex(of: "-"),
                  let start = UInt(fields[0][..<dash], radix: 16), let end = UInt(fields[0][fields[0].index(after: dash)...], radix: 16),
                  start <= target, target < end else { continue }
            let path = fields[5].drop { $0 == " " }
            return path.hasPrefix("/") ? String(path) : nil
        }
        return nil
    }

    /// The address of `symbol` in the library or the libraries it depends on (`dlsym(3)`).
    public func symbol(_ symbol: String) throws(LoadError) -> UnsafeMutableRawPointer {
        switch Syscalls.dynamicSymbol(handle, symbol) {
        case .success(let address): return address
        case .failure(let error): throw error
        }
    }
}
