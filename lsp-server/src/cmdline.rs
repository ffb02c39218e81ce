//! The one way a command line given as one string becomes a program and its arguments, for every
//! path that takes one: `threadradar.record`'s `"command"` string, the `recordCommand` setting
//! written as a string, and `threadradar mcp --record-command`. The editors send such a line as
//! it was typed and the server splits it here.
//!
//! The rules are a POSIX shell's quoting without its expansions (the `shell-words` crate): blanks
//! separate words; `'…'` is literal; in `"…"` a backslash escapes `"`, `\`, `$`, `` ` `` and a
//! line break; outside quotes a backslash escapes the next character (a trailing one is kept); `""` is an empty word; a
//! `#` starting a word begins a comment. No variables, globs, pipes or redirections: the program
//! is started directly, not by a shell.

/// The words of `line`; an unclosed quote is one sentence saying so.
pub fn split(line: &str) -> Result<Vec<String>, String> {
    shell_words::split(line).map_err(|_| {
        format!("cannot split the command line {line:?}: a quote is not closed; close it, or give the words as a list")
    })
}

/// `words` as one line that [`split`] reads back into the same words (for messages).
pub fn join(words: &[String]) -> String {
    shell_words::join(words)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The cases the editors' splitters are checked against too (`cmdline_cases.json`).
    #[test]
    fn the_shared_cases() {
        let cases: Vec<serde_json::Value> = serde_json::from_str(include_str!("cmdline_cases.json")).unwrap();
        assert!(cases.len() >= 10);
        for c in cases {
            let line = c["line"].as_str().unwrap();
            match c.get("words") {
                Some(w) => {
                    let want: Vec<String> = serde_json::from_value(w.clone()).unwrap();
                    assert_eq!(split(line), Ok(want.clone()), "{line:?}");
                    assert_eq!(split(&join(&want)), Ok(want), "join round-trips {line:?}");
                }
                None => {
                    let e = split(line).unwrap_err();
                    assert!(e.starts_with("cannot split the command line") && e.contains("quote"), "{line:?}: {e}");
                }
            }
        }
    }
}
