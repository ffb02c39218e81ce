//! Open documents: their current text, kept in step with `didChange` (full or incremental sync),
//! and LSP positions (UTF-16 code units by default) converted to and from byte offsets.

use tower_lsp_server::lsp_types::{Position, Range, TextDocumentContentChangeEvent};

/// The editor's current text of one document.
#[derive(Clone, Debug)]
pub struct Document {
    pub version: i32,
    text: String,
    /// Byte offset of the start of each line.
    line_starts: Vec<usize>,
}

impl Document {
    pub fn new(version: i32, text: String) -> Document {
        let line_starts = line_starts(&text);
        Document { version, text, line_starts }
    }

    pub fn text(&self) -> &str {
        &self.text
    }

    pub fn line_count(&self) -> u32 {
        self.line_starts.len() as u32
    }

    /// The text of a 0-based line without its line break; `None` past the end.
    pub fn line(&self, line: u32) -> Option<&str> {
        let start = *self.line_starts.get(line as usize)?;
        let end = self.line_starts.get(line as usize + 1).copied().unwrap_or(self.text.len());
        Some(self.text[start..end].trim_end_matches(['\n', '\r']))
    }

    /// The position just after the last character of a line (UTF-16), `None` past the end.
    pub fn line_end(&self, line: u32) -> Option<Position> {
        let text = self.line(line)?;
        Some(Position::new(line, text.encode_utf16().count() as u32))
    }

    /// Applies the changes of one `didChange` in order. A range past the end is clamped to the
    /// end, as the protocol asks.
    pub fn apply(&mut self, version: i32, changes: Vec<TextDocumentContentChangeEvent>) {
        for change in changes {
            match change.range {
                None => self.text = change.text,
                Some(range) => {
                    let start = self.offset(range.start);
                    let end = self.offset(range.end).max(start);
                    self.text.replace_range(start..end, &change.text);
                }
            }
            self.line_starts = line_starts(&self.text);
        }
        self.version = version;
    }

    /// Byte offset of a position, clamped to the line's end and to the end of the text.
    pub fn offset(&self, pos: Position) -> usize {
        let Some(&start) = self.line_starts.get(pos.line as usize) else { return self.text.len() };
        let line = self.line(pos.line).unwrap_or("");
        let mut units = 0u32;
        for (i, ch) in line.char_indices() {
            if units >= pos.character {
                return start + i;
            }
            units += ch.len_utf16() as u32;
        }
        start + line.len()
    }

    /// Whether a position is inside the document.
    pub fn contains(&self, pos: Position) -> bool {
        self.line_end(pos.line).is_some_and(|end| pos.character <= end.character)
    }
}

/// Whether line `line` is within `range` (inclusive of both ends' lines).
pub fn line_in(range: &Range, line: u32) -> bool {
    range.start.line <= line && line <= range.end.line
}

fn line_starts(text: &str) -> Vec<usize> {
    let mut v = vec![0];
    v.extend(text.match_indices('\n').map(|(i, _)| i + 1));
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    fn change(l0: u32, c0: u32, l1: u32, c1: u32, text: &str) -> TextDocumentContentChangeEvent {
        TextDocumentContentChangeEvent { range: Some(Range::new(Position::new(l0, c0), Position::new(l1, c1))), range_length: None, text: text.into() }
    }

    #[test]
    fn incremental_changes_with_utf16_positions() {
        let mut d = Document::new(1, "a = 'é𝄞'\ndef f():\n    pass\n".into());
        // Insert two lines above `def f`.
        d.apply(2, vec![change(1, 0, 1, 0, "# one\n# two\n")]);
        assert_eq!(d.line(3), Some("def f():"));
        // Replace the 𝄞 (two UTF-16 units, after `a = 'é`) with x.
        d.apply(3, vec![change(0, 6, 0, 8, "x")]);
        assert_eq!(d.line(0), Some("a = 'éx'"));
        // Out of range positions are clamped, not a panic.
        d.apply(4, vec![change(99, 5, 120, 0, "\n# end")]);
        assert!(d.text().ends_with("# end"));
        assert_eq!(d.line_end(0), Some(Position::new(0, 8)));
        assert_eq!(d.line(999), None);
        d.apply(5, vec![TextDocumentContentChangeEvent { range: None, range_length: None, text: "x".into() }]);
        assert_eq!((d.text(), d.version, d.line_count()), ("x", 5, 1));
    }
}
