//! austin's binary MOJO format (`austin -b`; versions 1–3, austin 3.x). The file is `MOJ`, the
//! format version as a MOJO integer, then events, each a byte and its fields:
//!
//! | event | fields |
//! |---|---|
//! | 1 metadata | key, value (strings) |
//! | 2 stack (a sample starts) | pid, interpreter id (version ≥ 3), thread id (a hexadecimal string) |
//! | 3 frame (defines a frame) | key, file (string ref), scope (string ref), line; and line end, column, column end (version ≥ 2) |
//! | 4 invalid frame, 7 GC | — |
//! | 8 idle (full mode, `austin -f`: the thread was idle at this sample) | — |
//! | 5 frame ref (the sample's next frame, outermost first) | key |
//! | 6 kernel frame | name (string) |
//! | 9 time, 10 memory (metrics of the sample) | integer (µs, bytes) |
//! | 11 string (defines a string) | key, string |
//! | 12 string ref | key |
//!
//! Strings end with a NUL byte. A MOJO integer is little-endian base 128 whose first byte holds
//! six bits, a sign bit (0x40) and the continuation bit (0x80). Frame and string keys belong to
//! the process that wrote them; string key 1 is austin's `<unknown>`. What the file says is what
//! the text format says, so the run is the same as for austin's text output (`austin.rs`): no
//! thread names, no absolute times, each sample as long as its time metric; in full mode a
//! sample with an idle event is idle, one without computing (austin does not see the GIL).

use super::{quote, Ctx, ImportError, Profile, RawFrame, RawSample};
use std::collections::HashMap;
use std::io::BufRead;
use threadradar_profiler::run::ThreadState;

pub fn looks_like(bytes: &[u8]) -> bool {
    bytes.starts_with(b"MOJ")
}

/// The file's bytes as they are read: only the current string is held.
struct Reader<'a, R> {
    reader: R,
    /// Bytes read so far.
    at: usize,
    ctx: &'a Ctx<'a>,
    buf: Vec<u8>,
}

impl<R: BufRead> Reader<'_, R> {
    fn io(&self, e: std::io::Error) -> ImportError {
        ImportError::Io { path: self.ctx.path.to_path_buf(), source: e }
    }

    fn truncated(&self) -> ImportError {
        ImportError::Truncated { path: self.ctx.path.to_path_buf(), format: self.ctx.format, at: format!("byte {}", self.at) }
    }

    fn error(&self, at: usize, detail: impl Into<String>) -> ImportError {
        ImportError::Parse { path: self.ctx.path.to_path_buf(), format: self.ctx.format, at: format!("byte {at}"), detail: detail.into() }
    }

    /// Whether the file has ended.
    fn at_end(&mut self) -> Result<bool, ImportError> {
        match self.reader.fill_buf() {
            Ok(buf) => Ok(buf.is_empty()),
            Err(e) => Err(self.io(e)),
        }
    }

    fn byte(&mut self) -> Result<u8, ImportError> {
        let b = match self.reader.fill_buf() {
            Ok(buf) => buf.first().copied(),
            Err(e) => return Err(self.io(e)),
        };
        let b = b.ok_or_else(|| self.truncated())?;
        self.reader.consume(1);
        self.at += 1;
        Ok(b)
    }

    fn int(&mut self) -> Result<i64, ImportError> {
        let start = self.at;
        let mut b = self.byte()?;
        let negative = b & 0x40 != 0;
        let mut n = (b & 0x3f) as u64;
        let mut shift = 6;
        while b & 0x80 != 0 {
            b = self.byte()?;
            if shift > 63 {
                return Err(self.error(start, "an integer is longer than 64 bits"));
            }
            n |= ((b & 0x7f) as u64) << shift;
            shift += 7;
        }
        Ok(if negative { (n as i64).wrapping_neg() } else { n as i64 })
    }

    /// A NUL-terminated string, at most `max` bytes long (a longer one is refused once `max` + 1
    /// bytes of it are read, before the rest is).
    fn string(&mut self, max: usize) -> Result<String, ImportError> {
        use std::io::Read;
        let start = self.at;
        self.buf.clear();
        let n = (&mut self.reader).take(max as u64 + 1).read_until(0, &mut self.buf).map_err(|e| ImportError::Io { path: self.ctx.path.to_path_buf(), source: e })?;
        self.at += n;
        if self.buf.last() == Some(&0) {
            self.buf.pop();
            return Ok(String::from_utf8_lossy(&self.buf).into_owned());
        }
        if n > max {
            return Err(ImportError::TooLarge {
                path: self.ctx.path.to_path_buf(),
                what: format!("the string at byte {start} is more than {max} bytes long"),
                limit: format!("{max} bytes"),
                next: super::profile::NOT_A_PROFILE,
            });
        }
        Err(self.truncated())
    }
}

/// The sample being read: austin ends a sample by starting the next (or by the file's end).
struct Current {
    pid: i64,
    thread: usize,
    stack: Option<u32>,
    time_us: Option<u64>,
    /// An idle event (8) came with the sample.
    idle: bool,
}

/// A sample's event (a frame, a metric) outside any sample is not austin's.
fn need_sample<R: BufRead>(r: &Reader<R>, at: usize, event: u8, c: &Option<Current>) -> Result<(), ImportError> {
    match c {
        Some(_) => Ok(()),
        None => Err(r.error(at, format!("event {event} comes before any sample"))),
    }
}

pub fn parse(reader: impl BufRead, ctx: &Ctx) -> Result<Profile, ImportError> {
    let mut r = Reader { reader, at: 0, ctx, buf: Vec::new() };
    let mut magic = [0u8; 3];
    for m in &mut magic {
        *m = r.byte().map_err(|_| r.error(0, "it does not start with MOJ"))?;
    }
    if !looks_like(&magic) {
        return Err(r.error(0, "it does not start with MOJ"));
    }
    let version = r.int()?;
    if !(1..=3).contains(&version) {
        return Err(r.error(3, format!("it is MOJO version {version}; this build reads versions 1 to 3 (austin 3.x): convert it with austin's `mojo2austin` and import the text")));
    }
    let mut p = Profile::new(ctx, "austin (MOJO)");
    let max = ctx.limits.name_bytes;
    let mut mode = String::from("wall");
    let mut strings: HashMap<(i64, i64), String> = HashMap::new();
    let mut frames: HashMap<(i64, i64), u32> = HashMap::new();
    let mut current: Option<Current> = None;
    // austin writes idle events in full mode (`austin -f`), where a sample without one is of a
    // running thread; in other modes there are none and the state is unknown.
    let finish = |p: &mut Profile, c: Option<Current>, full: bool| -> Result<(), ImportError> {
        if let Some(c) = c {
            let state = match (c.idle, full) {
                (true, _) => Some(ThreadState::Idle),
                (false, true) => Some(ThreadState::Computing),
                (false, false) => None,
            };
            p.push_sample(RawSample { thread: c.thread, t_ns: None, duration_ns: c.time_us.map(|us| us.saturating_mul(1000)), stack: c.stack, count: 1, state, gil: false })?;
        }
        Ok(())
    };
    while !r.at_end()? {
        let at = r.at;
        let event = r.byte()?;
        match event {
            1 => {
                let (k, v) = (r.string(max)?, r.string(max)?);
                match k.as_str() {
                    "austin" => p.format = format!("austin {} (MOJO)", v.chars().take(40).collect::<String>()),
                    "interval" => p.interval_ns = v.trim().parse::<u64>().ok().map(|us| us.saturating_mul(1000)),
                    "mode" => mode = v,
                    _ => {}
                }
            }
            2 => {
                let pid = r.int()?;
                if version >= 3 {
                    r.int()?;
                }
                let tid_text = r.string(max)?;
                let tid = u64::from_str_radix(tid_text.trim_start_matches("0x"), 16).map_err(|_| r.error(at, format!("{} is not a thread id", quote(&tid_text))))?;
                finish(&mut p, current.take(), mode == "full")?;
                let thread = p.thread(pid as u32, tid as u32, None)?;
                current = Some(Current { pid, thread, stack: None, time_us: None, idle: false });
            }
            3 => {
                let key = r.int()?;
                let (file, scope, line) = (r.int()?, r.int()?, r.int()?);
                if version >= 2 {
                    r.int()?;
                    r.int()?;
                    r.int()?;
                }
                // Frames are defined while a sample is being written, by its process.
                let pid = current.as_ref().map_or(0, |c| c.pid);
                let string = |key: i64| -> Result<String, ImportError> {
                    if key == 1 {
                        return Ok("<unknown>".into());
                    }
                    strings.get(&(pid, key)).cloned().ok_or_else(|| r.error(at, format!("frame {key} names string {key} before it is defined")))
                };
                let frame = RawFrame { file: string(file)?, name: string(scope)?, line: line.max(0) as u32 };
                let id = p.frame(frame)?;
                if frames.len() >= ctx.limits.frames && !frames.contains_key(&(pid, key)) {
                    let n = ctx.limits.frames;
                    return Err(p.too_large(format!("it defines more than {n} frames"), format!("{n} frames"), super::profile::SPLIT));
                }
                frames.insert((pid, key), id);
            }
            5 => {
                let key = r.int()?;
                need_sample(&r, at, event, &current)?;
                let c = current.as_mut().expect("checked");
                let frame = *frames.get(&(c.pid, key)).ok_or_else(|| r.error(at, format!("frame {key} is used before it is defined")))?;
                c.stack = Some(p.stack_node(c.stack, frame)?);
            }
            6 => {
                r.string(max)?; // a kernel frame (austin -k): not a Python frame
            }
            4 | 7 => need_sample(&r, at, event, &current)?,
            8 => {
                need_sample(&r, at, event, &current)?;
                current.as_mut().expect("checked").idle = true;
            }
            9 => {
                let v = r.int()?;
                need_sample(&r, at, event, &current)?;
                current.as_mut().expect("checked").time_us = Some(v.max(0) as u64);
            }
            10 => {
                r.int()?;
                need_sample(&r, at, event, &current)?;
            }
            11 => {
                let key = r.int()?;
                let s = r.string(max)?;
                let pid = current.as_ref().map_or(0, |c| c.pid);
                // Every frame has a file and a scope: twice the frame limit in strings.
                let n = ctx.limits.frames.saturating_mul(2);
                if strings.len() >= n && !strings.contains_key(&(pid, key)) {
                    return Err(p.too_large(format!("it defines more than {n} strings"), format!("{n} strings"), super::profile::SPLIT));
                }
                strings.insert((pid, key), s);
            }
            12 => {
                r.int()?;
            }
            other => return Err(r.error(at, format!("event {other} is not a MOJO {version} event"))),
        }
    }
    finish(&mut p, current.take(), mode == "full")?;
    p.missing.extend(super::austin::missing(&mode));
    Ok(p)
}
