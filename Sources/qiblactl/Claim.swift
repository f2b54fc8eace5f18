// SPDX-License-Identifier: Apache-2.0
import ArgumentParser
import QiblaDBus
import QiblaInterface
import QiblaPlatform

/// `qiblactl claim -- COMMAND [ARGUMENT…]`: holds a compass claim while COMMAND runs.
///
/// qiblad keeps the sensors on only while a client holding a claim is on the bus, and drops a
/// claim the moment its client leaves: `busctl call … ClaimCompass` from a script claims and is
/// released as soon as busctl exits. This command stays on the bus for COMMAND's lifetime.
struct Claim: ParsableCommand {
    static var configuration: CommandConfiguration {
        CommandConfiguration(
            abstract: tr("Hold a compass claim while a command runs, then release it."),
            discussion: paragraphs(
                tr("qiblad reads its sensors only while some client holds a compass claim, and drops a claim when its client leaves the bus. A claim made with busctl from a script therefore ends as soon as busctl exits. This command holds the claim for as long as COMMAND runs, then releases it and exits with COMMAND's status (127 when it cannot be started, 128 + the signal number when a signal ended it)."),
                tr("Example: read the heading twice, a second apart, with the sensors on:") + "\n  qiblactl claim -- sh -c 'sleep 1; qiblactl status; sleep 1; qiblactl status'",
                tr("Other ways to hold a claim: qiblactl monitor (follows the properties) and qiblactl waybar (a status-bar module)."))) }

    @OptionGroup var bus: BusOptions
    @Argument(parsing: .postTerminator, help: ArgumentHelp(tr("The command and its arguments, after --."))) var command: [String] = []

    func validate() throws {
        guard !command.isEmpty else {
            throw ValidationError("give the command after --: qiblactl claim -- COMMAND [ARGUMENT…]")
        }
    }

    func run() throws {
        let connection = try bus.connect()
        _ = try QibladClient.call(connection, QiblaMethod.claimCompass.rawValue)
        let child: SpawnedProcess
        do {
            child = try SpawnedProcess.spawn(command)
        } catch {
            _ = try? QibladClient.call(connection, QiblaMethod.releaseCompass.rawValue)
            printError("qiblactl: cannot start \(command[0]): \(error)")
            throw ExitCode(127)
        }
        let termination: SpawnedProcess.Termination
        do {
            termination = try child.wait()
        } catch {
            throw fail("lost the command \(command[0]): \(error)", status: .failure)
        }
        _ = try? QibladClient.call(connection, QiblaMethod.releaseCompass.rawValue)
        let status = termination.shellStatus
        if status != 0 { throw ExitCode(status) }
    }
}
