//! The line-oriented formats (folded stacks, austin's text, perf script) read line by line from a
//! reader: a file is never held whole, only its current line, so a multi-gigabyte perf script
//! costs what the run built from it costs. The same source serves bytes already in memory.

use super::{Ctx, ImportError};
use std::io::{BufRead, Read};

/// The longest line read: 10 000 frames (the depth limit) of several kilobytes each is more than
/// any profiler writes; a longer line is refused before it is held.
pub const MAX_LINE: usize = 64 << 20;

/// Lines of a file, each checked as UTF-8, with their 0-based number; a last line without a line
/// break (a file cut while it was written or copied: every profiler here ends each line it writes
/// with one) is an error that names it rather than a line.
pub struct LineSource<'c, R> {
    reader: R,
    ctx: &'c Ctx<'c>,
    buf: Vec<u8>,
    /// Lines returned so far.
    count: usize,
}

impl<'c, R: BufRead> LineSource<'c, R> {
    pub fn new(reader: R, ctx: &'c Ctx<'c>) -> Self {
        LineSource { reader, ctx, buf: Vec::new(), count: 0 }
    }

    /// How many lines were returned.
    pub fn count(&self) -> usize {
        self.count
    }

    /// The next line without its terminator (`\n` or `\r\n`, as `str::lines` takes them), or
    /// `None` at the end.
    pub fn next_line(&mut self) -> Result<Option<(usize, &str)>, ImportError> {
        self.buf.clear();
        let n = std::io::Read::by_ref(&mut self.reader).take(MAX_LINE as u64 + 1).read_until(b'\n', &mut self.buf).map_err(|e| ImportError::Io { path: self.ctx.path.to_path_buf(), source: e })?;
        if n == 0 {
            return Ok(None);
        }
        let line_no = self.count + 1;
        let ended = self.buf.last() == Some(&b'\n');
        if !ended && self.buf.len() > MAX_LINE {
            return Err(self.ctx.parse_error(line_no, format!("the line is longer than {} MiB", MAX_LINE >> 20)));
        }
        if ended {
            self.buf.pop();
            if self.buf.last() == Some(&b'\r') {
                self.buf.pop();
            }
        }
        let text = match std::str::from_utf8(&self.buf) {
            Ok(t) => t,
            Err(e) if !ended && e.error_len().is_none() => return Err(self.ctx.truncated(format!("line {line_no}, which ends in the middle of a character"))),
            Err(_) => return Err(self.ctx.parse_error(line_no, "it is not UTF-8 text")),
        };
        if !ended && !text.trim().is_empty() {
            return Err(self.ctx.truncated(format!("line {line_no}, which has no line break")));
        }
        self.count += 1;
        Ok(Some((self.count - 1, text)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::import::Limits;
    use std::path::Path;

    fn lines(bytes: &[u8]) -> Result<Vec<String>, String> {
        let ctx = Ctx { path: Path::new("x"), format: "collapsed stacks", limits: Limits::default() };
        let mut src = LineSource::new(bytes, &ctx);
        let mut out = Vec::new();
        loop {
            match src.next_line() {
                Ok(Some((i, l))) => out.push(format!("{i}:{l}")),
                Ok(None) => return Ok(out),
                Err(e) => return Err(e.to_string()),
            }
        }
    }

    #[test]
    fn lines_as_str_lines_takes_them_and_a_cut_last_line_is_named() {
        assert_eq!(lines(b"a 1\r\nb 2\n\nc 3\n").unwrap(), ["0:a 1", "1:b 2", "2:", "3:c 3"]);
        assert_eq!(lines(b"a 1\n  ").unwrap(), ["0:a 1", "1:  "]);
        assert!(lines(b"a 1\nb 2").unwrap_err().contains("line 2, which has no line break"));
        assert!(lines(b"a 1\n\xc3").unwrap_err().contains("line 2, which ends in the middle of a character"));
        assert!(lines(b"a \xff 1\n").unwrap_err().contains("not UTF-8"));
    }
}
