//! The fuzz loop's parts: a small deterministic generator, mutations that know a little of what
//! profiles look like (numbers, separators, repeated lines, MOJO events), and an allocator that
//! counts what the importing thread holds at its peak.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use threadradar_formats::import::ImportFormat;

/// xorshift64*: deterministic for a seed, good enough to pick mutations.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed | 1)
    }
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    /// In `0..n` (`n > 0`).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// What the formats hold in places where a parser must decide: numbers at their edges,
/// separators, markers of the formats' own structure.
const TOKENS: &[&str] = &[
    "0", "-1", "1", "100000000000", "18446744073709551615", "18446744073709551616", "4294967296", "-9223372036854775808", "1e308", "-1e308",
    "1e-308", "NaN", "Infinity", "0.0", "3.5", "null", "true", "[]", "{}", "[", "]", "{", "}", ",", ":", ";", " ", "\n", "\t", "\r\n", "\"", "\\",
    "\\u0000", "\0", "\u{feff}", "é", "\u{10ffff}", "(", ")", " (", ":0)", "tid:", "thread (", "process 1:\"x\";", "P1;T0:1;", "P1;T0:0x7f;",
    "# austin: 3.7.0\n", "# mode: full\n", "# interval: 0\n", "py::", "py::f:/a.py+0x1 (/tmp/perf-1.map)", "python3 12 100.5: 1 cpu-clock:\n",
    "python3 1/2 [000] 1.000001: 1 cpu-clock:\n", "\"stack\":", "\"time\":", "\"timeDeltas\":", "\"weight\":", "\"prefix\":", "\"frame\":",
    "\"func\":", "\"name\":", "\"markers\":", "\"isMainThread\":true", "\"tid\":", "\"pid\":", "\"samples\":", "\"weights\":",
    "\"unit\":\"seconds\"", "\"type\":\"evented\"", "\"startValue\":", "\"Waiting for GIL\"", "\"Has GIL\"", "\"Off CPU\"", "\"endTime\":",
];

/// The most a mutation grows a case to (the mutations compound: a line repeated a thousand
/// times, twice, would be gigabytes).
const MAX_CASE: usize = 1 << 20;

/// One importer and the files its cases start from.
pub struct Target {
    pub name: &'static str,
    pub format: ImportFormat,
    pub seeds: Vec<Vec<u8>>,
}

impl Target {
    /// A case: most often a seed with one to four mutations, sometimes random bytes or tokens.
    pub fn case(&self, rng: &mut Rng) -> Vec<u8> {
        match rng.below(16) {
            0 => (0..rng.below(2048)).map(|_| rng.next() as u8).collect(),
            1 => {
                let mut out = Vec::new();
                for _ in 0..rng.below(200) {
                    out.extend_from_slice(TOKENS[rng.below(TOKENS.len())].as_bytes());
                }
                out
            }
            _ => {
                let mut data = self.seeds[rng.below(self.seeds.len())].clone();
                for _ in 0..1 + rng.below(4) {
                    self.mutate(&mut data, rng);
                }
                data
            }
        }
    }

    fn mutate(&self, data: &mut Vec<u8>, rng: &mut Rng) {
        let len = data.len();
        let at = rng.below(len + 1);
        match rng.below(11) {
            // Flip a few bits.
            0 => {
                for _ in 0..1 + rng.below(8) {
                    if len > 0 {
                        let i = rng.below(len);
                        data[i] ^= 1 << rng.below(8);
                    }
                }
            }
            // A random byte written over one.
            1 if len > 0 => data[rng.below(len)] = rng.next() as u8,
            // A token inserted.
            2 => {
                let t = TOKENS[rng.below(TOKENS.len())].as_bytes();
                data.splice(at..at, t.iter().copied());
            }
            // A range deleted.
            3 => {
                let end = (at + rng.below(256)).min(len);
                data.drain(at..end);
            }
            // A range repeated in place (long lines, deep stacks, many samples).
            4 => {
                let end = (at + 1 + rng.below(512)).min(len);
                let piece = data[at.min(len)..end].to_vec();
                for _ in 0..(1 + rng.below(64)).min(MAX_CASE / piece.len().max(1)) {
                    data.splice(at..at, piece.iter().copied());
                }
            }
            // Cut short.
            5 => data.truncate(at),
            // A number replaced by one at an edge.
            6 => replace_number(data, rng),
            // A piece of another seed spliced in.
            7 => {
                let other = &self.seeds[rng.below(self.seeds.len())];
                if !other.is_empty() {
                    let from = rng.below(other.len());
                    let to = (from + rng.below(1024)).min(other.len());
                    data.splice(at..at, other[from..to].iter().copied());
                }
            }
            // A line duplicated many times, or lines swapped.
            8 => {
                let lines: Vec<&[u8]> = data.split_inclusive(|&b| b == b'\n').collect();
                if !lines.is_empty() {
                    let i = rng.below(lines.len());
                    let copies = (1 + rng.below(1000)).min(MAX_CASE / lines[i].len().max(1));
                    let mut out = Vec::with_capacity(len + lines[i].len() * copies);
                    for (j, l) in lines.iter().enumerate() {
                        out.extend_from_slice(l);
                        if j == i {
                            for _ in 0..copies {
                                out.extend_from_slice(l);
                            }
                        }
                    }
                    *data = out;
                }
            }
            // MOJO: an event byte and a MOJO integer inserted.
            9 => {
                let mut ev = vec![rng.below(14) as u8];
                let n = rng.next() >> rng.below(64);
                ev.extend(mojo_int(n as i64 * if rng.below(2) == 0 { 1 } else { -1 }));
                data.splice(at..at, ev);
            }
            // A JSON array emptied or a value nulled.
            _ => {
                if let Some(p) = data[at.min(len)..].iter().position(|&b| b == b'[' || b == b':') {
                    let p = at + p + 1;
                    let end = data[p..].iter().position(|&b| b == b']' || b == b',' || b == b'}').map_or(p, |e| p + e);
                    data.splice(p..end, if data[p - 1] == b':' { b"null".to_vec() } else { Vec::new() });
                }
            }
        }
    }
}

/// The first run of ASCII digits at or after a random place, replaced by an edge number.
fn replace_number(data: &mut Vec<u8>, rng: &mut Rng) {
    let start = rng.below(data.len() + 1);
    let Some(s) = data[start..].iter().position(u8::is_ascii_digit).map(|p| start + p) else { return };
    let e = data[s..].iter().position(|b| !b.is_ascii_digit()).map_or(data.len(), |p| s + p);
    let n = ["0", "1", "4294967295", "4294967296", "100000000000", "18446744073709551615", "99999999999999999999999", "9007199254740993"][rng.below(8)];
    data.splice(s..e, n.bytes());
}

/// austin's MOJO integer: six bits and a sign in the first byte, then seven per byte.
fn mojo_int(n: i64) -> Vec<u8> {
    let (neg, mut v) = (n < 0, n.unsigned_abs());
    let mut first = (v & 0x3f) as u8 | if neg { 0x40 } else { 0 };
    v >>= 6;
    let mut out = Vec::new();
    if v > 0 {
        first |= 0x80;
    }
    out.push(first);
    while v > 0 {
        let mut b = (v & 0x7f) as u8;
        v >>= 7;
        if v > 0 {
            b |= 0x80;
        }
        out.push(b);
    }
    out
}

/// The system allocator, counting per thread what is held and its peak while measuring.
pub struct Counting;

thread_local! {
    static HELD: Cell<isize> = const { Cell::new(0) };
    static PEAK: Cell<isize> = const { Cell::new(0) };
}

fn add(n: isize) {
    let _ = HELD.try_with(|h| {
        let v = h.get() + n;
        h.set(v);
        let _ = PEAK.try_with(|p| p.set(p.get().max(v)));
    });
}

// SAFETY: every method passes its arguments unchanged to the system allocator, which upholds
// GlobalAlloc's contract; the counting beside it touches only thread-local integers (`try_with`,
// so it neither allocates nor panics, also while a thread's locals are torn down).
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        add(layout.size() as isize);
        // SAFETY: the caller's guarantees for this method are the system allocator's.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        add(-(layout.size() as isize));
        // SAFETY: the caller's guarantees for this method are the system allocator's.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        add(layout.size() as isize);
        // SAFETY: the caller's guarantees for this method are the system allocator's.
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        add(new_size as isize - layout.size() as isize);
        // SAFETY: the caller's guarantees for this method are the system allocator's.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Runs `f` and returns its value and the most bytes this thread held above what it held before.
pub fn measure<T>(f: impl FnOnce() -> T) -> (T, usize) {
    let base = HELD.with(Cell::get);
    PEAK.with(|p| p.set(base));
    let v = f();
    let peak = PEAK.with(Cell::get);
    (v, (peak - base).max(0) as usize)
}
