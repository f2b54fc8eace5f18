// SPDX-License-Identifier: Apache-2.0
import SystemPackage

/// The process environment (environ(7)).
public enum Environment {
    /// All variables, read from `environ` now.
    public static var current: [String: String] { Syscalls.environmentVariables() }

    /// This process's real user id (`getuid(2)`).
    public static var userID: UInt32 { Syscalls.userID() }

    /// One variable (`getenv(3)`), or nil when unset.
    public static func value(_ name: String) -> String? { Syscalls.environmentVariable(name) }

    /// Sets a variable for this process and children spawned later (`setenv(3)`, overwriting).
    /// Not thread-safe in C: call before starting threads.
    public static func set(_ name: String, _ value: String) throws(Errno) {
        try Syscalls.setEnvironmentVariable(name, value)
    }

    /// Removes a variable (`unsetenv(3)`). Not thread-safe in C: call before starting threads.
    public static func unset(_ name: String) throws(Errno) { try Syscalls.unsetEnvironmentVariable(name) }
}
