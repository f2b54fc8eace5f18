// SPDX-License-Identifier: Apache-2.0
import QiblaCore
import Testing

/// Command-line coordinates: negative numbers are values, `--` ends the options, and a problem says
/// whether the command line or the value is wrong.
@Suite struct CoordinateWordsTests {
    @Test(arguments: [["-33.9", "18.4"], ["--", "-33.9", "18.4"], ["-33.9", "--", "18.4"], ["-3.39e1", "+18.4"]])
    func negativeNumbersAreValuesBeforeAndAfterTheTerminator(_ words: [String]) throws {
        let position = try CoordinateWords.position(words).get()
        #expect(position.latitudeDegrees == -33.9)
        #expect(position.longitudeDegrees == 18.4)
    }

    @Test func aTerminatorAfterTheTerminatorIsAValue() {
        // `-- -- 1` : the second `--` is a word, and not a number.
        guard case .failure(let problem) = CoordinateWords.position(["--", "--", "1"]) else { Issue.record(); return }
        #expect(!problem.isUsage && problem.message.contains("numbers"))
    }

    @Test(arguments: [(["--jsn", "1", "2"], "unknown option '--jsn'"), (["-x", "1", "2"], "unknown option '-x'"),
                      (["1"], "got 1: 1"), ([], "got none"), (["1", "2", "3"], "got 3")])
    func malformedCommandLinesAreUsageProblems(_ words: [String], _ message: String) {
        guard case .failure(let problem) = CoordinateWords.position(words) else { Issue.record("\(words)"); return }
        #expect(problem.isUsage)
        #expect(problem.message.contains(message), "\(problem.message)")
    }

    @Test(arguments: [(["91", "0"], "latitude"), (["0", "360"], "longitude"), (["nan", "0"], "numbers"),
                      (["0x10", "0"], "numbers"), (["1e", "0"], "numbers")])
    func badValuesAreValueProblems(_ words: [String], _ message: String) {
        guard case .failure(let problem) = CoordinateWords.position(words) else { Issue.record("\(words)"); return }
        #expect(!problem.isUsage)
        #expect(problem.message.contains(message), "\(problem.message)")
    }

    @Test func commaSeparatedTakesNegativeValuesAndNormalisesLongitude() throws {
        let position = try CoordinateWords.position(commaSeparated: "-33.9, 350").get()
        #expect(position.latitudeDegrees == -33.9)
        #expect(position.longitudeDegrees == -10)
        #expect((try? CoordinateWords.position(commaSeparated: "-33.9").get()) == nil)
        #expect((try? CoordinateWords.position(commaSeparated: "1,2,3").get()) == nil)
    }
}
