//! Open documents: their current text, kept in step with `didChange` (full or incremental sync),
//! and LSP positions (UTF-16 code units by default) converted to and from byte offsets.

use threadradar_profiler::source::TextEdit;
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
    /// end, as the protocol asks. Returns the edits for an incremental re-parse, or `None` when
    /// the whole text was replaced.
    pub fn apply(&mut self, version: i32, changes: Vec<TextDocumentContentChangeEvent>) -> Option<Vec<TextEdit>> {
        let mut edits = Some(Vec::with_capacity(changes.len()));
        for change in changes {
            match change.range {
                None => {
                    self.text = change.text;
                    edits = None;
                }
                Some(range) => {
                    let start = self.offset(range.start);
                    let end = self.offset(range.end).max(start);
                    let point = |d: &Document, at: usize| {
                        let row = d.line_starts.partition_point(|&s| s <= at).saturating_sub(1);
                        (row, at - d.line_starts[row])
                    };
                    let (start_point, old_end) = (point(self, start), point(self, end));
                    let new_end = match change.text.rfind('\n') {
                        None => (start_point.0, start_point.1 + change.text.len()),
                        Some(last) => (start_point.0 + change.text.matches('\n').count(), change.text.len() - last - 1),
                    };
                    self.text.replace_range(start..end, &change.text);
                    if let Some(e) = edits.as_mut() {
                        e.push(TextEdit { start_byte: start, old_end_byte: end, new_end_byte: start + change.text.len(), start: start_point, old_end, new_end });
                    }
                }
            }
            self.line_starts = line_starts(&self.text);
        }
        self.version = version;
        edits
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
/// `1 240`: thousands grouped with a space, as the lens reads.
pub fn count(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push(' ');
        }
        out.push(c);
    }
    out
}

/// `2 ms`, `41 ms`, `0.40 ms`, `3.1 s`: a lens's durations.
pub fn duration(s: f64) -> String {
    if s >= 1.0 {
        format!("{s:.1} s")
    } else if s >= 0.01 {
        format!("{:.0} ms", s * 1e3)
    } else if s >= 0.001 {
        format!("{:.1} ms", s * 1e3).replace(".0 ms", " ms")
    } else {
        format!("{:.2} ms", s * 1e3)
    }
}

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
    fn edits_keep_an_incremental_parse_equal_to_a_fresh_one() {
        use threadradar_profiler::source::{ParsedSource, SourceIndex};
        let mut d = Document::new(1, "s = 'é𝄞'\nclass A:\n    def f(self):\n        pass\n\ndef g():\n    return 1\n".into());
        let mut parsed = ParsedSource::parse(d.text());
        let steps = vec![
            vec![change(0, 0, 0, 0, "# top\n# more\n")],                    // lines above everything
            vec![change(2, 6, 2, 8, "'𝄞𝄞𝄞'")],                               // inside a line with wide characters
            vec![change(4, 8, 4, 9, "renamed"), change(7, 4, 7, 5, "h")],     // two renames in one didChange
            vec![change(3, 0, 5, 0, "class B:\n    def k(self): pass\n")],  // a multi-line replacement
            vec![change(99, 0, 99, 0, "\ndef tail():\n    pass\n")],         // past the end: clamped
        ];
        for (i, step) in steps.into_iter().enumerate() {
            let edits = d.apply(i as i32 + 2, step).expect("ranged changes give edits");
            for e in &edits {
                parsed.edit(e);
            }
            parsed.reparse(d.text());
            assert_eq!(parsed.index(d.text()), SourceIndex::parse(d.text()), "step {i}: {}", d.text());
        }
        let names: Vec<String> = SourceIndex::parse(d.text()).defs.into_iter().map(|d| d.qualname).collect();
        assert!(names.contains(&"B.k".to_string()) && names.contains(&"h".to_string()) && names.contains(&"tail".to_string()), "{names:?}");
        assert!(d.apply(9, vec![TextDocumentContentChangeEvent { range: None, range_length: None, text: "x = 1\n".into() }]).is_none());
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
