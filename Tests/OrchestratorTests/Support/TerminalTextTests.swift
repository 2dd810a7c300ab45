import OrchestrateModel
import Testing

/// Text from outside printed on a terminal or in a log line cannot act on the terminal, and a log value cannot start
/// a line of its own.
@Suite("Terminal text")
struct TerminalTextTests {
    @Test("printed text keeps its lines and tabs; a carriage return, an escape sequence and an override are shown")
    func escaped() {
        #expect(TerminalText.escaped("plain text, ünïcödé") == "plain text, ünïcödé")
        #expect(TerminalText.escaped("two\nlines\tand a tab") == "two\nlines\tand a tab")
        #expect(
            TerminalText.escaped("\u{1B}[2Jcleared\rhidden\u{202E}txt.exe\u{85}")
                == #"\u001B[2Jcleared\rhidden\u202Etxt.exe\u0085"#)
    }

    @Test("a log value is one line: its line feeds and tabs are escaped as well, in the same pass")
    func line() {
        #expect(TerminalText.line("plain value") == "plain value")
        #expect(TerminalText.line("first\nsecond\tthird\r\n") == #"first\nsecond\tthird\r\n"#)
        #expect(TerminalText.line("\u{1B}]0;title\u{07}\n") == #"\u001B]0;title\u0007\n"#)
    }

    @Test("a name may hold any character but a control one or an override, wherever it sits among others")
    func firstControl() {
        #expect(TerminalText.firstControl(in: "Module.Suite/test(named:)/File.swift:12:3") == nil)
        // Characters whose bytes begin as a control's do (U+00A0 with 0xC2, U+2019 with 0xE2) are not one.
        #expect(TerminalText.firstControl(in: "caf\u{E9} \u{A0}l\u{2019}\u{6F22}\u{1F600}") == nil)
        #expect(TerminalText.firstControl(in: "a\u{2019}b\tc") == "\t")
        // Every character in the first planes, between others whose bytes start no control (so that the byte check
        // alone decides): refused exactly when it is a control or an override.
        for value in UInt32(0)...0x2_FFFF {
            guard let scalar = Unicode.Scalar(value) else { continue }
            let refused =
                scalar.properties.generalCategory == .control || (0x202A...0x202E).contains(value)
                || (0x2066...0x2069).contains(value) || value == 0x200E || value == 0x200F
            let found = TerminalText.firstControl(in: "a\u{E9}" + String(Character(scalar)) + "\u{6F22}z")
            if found != (refused ? scalar : nil) {
                Issue.record("U+\(String(value, radix: 16)): \(String(describing: found))")
                return
            }
        }
    }
}
