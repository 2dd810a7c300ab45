import Foundation
import Testing

@testable import Orchestrator

/// `quarantine add --until`: a real day, written `YYYY-MM-DD`, today or later (UTC).
@Suite("A quarantine's last day")
struct QuarantineEndTests {
    @Test("real days from today on are taken; what is no day, or a past one, is one usage error naming it")
    func days() throws {
        let today = "2026-11-27"
        for day in ["2026-11-27", "2026-11-28", "2028-02-29", "2030-12-31"] {
            #expect(try FlakinessCommands.quarantineEnd(day, today: today) == day)
        }
        for text in ["2026-11-26", "2000-01-01"] {
            #expect(throws: UsageError.self) { try FlakinessCommands.quarantineEnd(text, today: today) }
        }
        for text in [
            "2027-02-29", "2026-13-01", "2026-00-10", "2026-11-31", "2026-1-01", "26-11-30", "2026/12/01",
            "2026-12-01x",
            "", "tomorrow", "２０２６-12-01",
        ] {
            #expect(throws: UsageError.self, "\(text)") { try FlakinessCommands.quarantineEnd(text, today: today) }
        }
    }

    @Test("today is the UTC date, whatever the machine's zone")
    func today() {
        // 2026-11-27 23:30 UTC is already the 28th east of Greenwich.
        let late = Date(timeIntervalSince1970: 1_795_822_200)
        #expect(FlakinessCommands.today(late) == "2026-11-27")
    }
}
