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
}
