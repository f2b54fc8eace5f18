// SPDX-License-Identifier: Apache-2.0
import QiblaPlatform
import SystemPackage

/// Reads a UTF-8 text file (at most 1 MiB): nil when it does not exist, a message on any other problem.
public func readTextFile(_ path: String) -> Result<String?, TextFileError> {
    do {
        guard let bytes = try FileSystem.readFile(path) else { return .success(nil) }
        guard let text = String(validating: bytes, as: UTF8.self) else { return .failure(TextFileError(message: "not UTF-8 text")) }
        return .success(text)
    } catch {
        return .failure(TextFileError(message: "\(error)"))
    }
}

/// Why a text file could not be read.
public struct TextFileError: Error, Sendable, CustomStringConvertible {
    public var message: String
    public init(message: String) { self.message = message }
    public var description: String { message }
}
