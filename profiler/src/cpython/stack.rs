//! One thread's chain of `_PyInterpreterFrame`s, read with as few system calls as the layout
//! allows, and the rule for when the previous tick's stack may be reused.
//!
//! **Where frames are.** A thread's frames live in its data stack (`_PyStackChunk`s of 16 KiB and
//! more, `tstate->datastack_chunk` the newest), one after the other, the newest at the highest
//! address; a generator's or coroutine's frame lives inside its object. So the walk reads the
//! newest chunk, from its start up to the first frame of the chain that lies in it, in **one**
//! read, and takes every frame in that range from the copy; only frames elsewhere (generators,
//! older chunks after deep recursion) are read on their own, through a small page cache
//! ([`Pages`]). CPython 3.11 and 3.12 publish no `datastack_chunk` offset: their frames come
//! from the page cache alone.
//!
//! **When a stack may be reused.** The whole chain — each frame's address, code object and
//! instruction pointer — is read at every tick (it is in the copy anyway); when all of it is what
//! it was at the previous tick, the previous stack is returned without decoding anything. A
//! frame's address alone says nothing: the data stack reuses addresses as soon as a call returns,
//! so `t1.join()` on one line and `t.join()` on the next put `join`'s frame at the same address
//! with the same code and instruction pointer; only the caller's instruction pointer tells them
//! apart. (The rule before compared the innermost two frames, and the second join was recorded at
//! the first one's line for its whole length.)
//!
//! **Which code objects are read again.** A code object is read once; it is checked again (one
//! read of its header) only where it appears in a frame that was not at the same depth, address
//! and code object at the previous tick — a frame that stayed holds its code object, so the
//! object cannot have been freed and its address reused.

use super::objects::Memory;
use super::offsets::DebugOffsets;
use anyhow::Result;

/// At most this many frames per thread are followed (a torn read must not send the walk around
/// a cycle forever).
pub const MAX_FRAMES: usize = 4096;

/// `_PyInterpreterFrame.owner` from which a frame holds no Python code of its own: 3.12 and 3.13's
/// `FRAME_OWNED_BY_CSTACK` (3), 3.14's `FRAME_OWNED_BY_INTERPRETER` (3) and
/// `FRAME_OWNED_BY_CSTACK` (4), 3.15's `FRAME_OWNED_BY_INTERPRETER` (3, the thread's base frame
/// and the entry shims). 3.11 has no such owner.
const FIRST_NON_PYTHON_OWNER: u8 = 3;

/// Bytes of a `_PyStackChunk` header: `previous`, `size`, `top`.
const CHUNK_HEADER: usize = 24;

/// Largest stretch of a data-stack chunk read in one call (a deeper stretch is read frame by
/// frame through the page cache).
const MAX_CHUNK_READ: usize = 1 << 20;

/// One frame as the walk saw it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RawFrame {
    pub addr: usize,
    /// The code object (tag bits of a 3.14+ `_PyStackRef` cleared), 0 for none.
    pub executable: usize,
    pub instr: usize,
    /// Whether the frame holds Python code (its owner is a thread, generator or frame object).
    pub python: bool,
    /// Free-threaded 3.14+: which copy of the bytecode `instr` points into.
    pub tlbc_index: i32,
}

/// Pages of the target's memory read during one thread's stack walk, for frames outside the
/// chunk copy. A whole page is readable whenever one byte of it is (mappings are page-granular).
#[derive(Default)]
pub struct Pages {
    pub pages: Vec<(usize, Box<[u8]>)>,
    /// System calls made (for the tests and the benchmarks).
    pub reads: usize,
}

impl Pages {
    pub const SIZE: usize = 4096;
    pub const KEPT: usize = 16;

    pub fn read(&mut self, mem: &Memory, addr: usize, len: usize) -> Result<Vec<u8>> {
        if addr == 0 || len == 0 || len > Self::SIZE {
            self.reads += 1;
            return mem.bytes(addr, len);
        }
        // An address read from the target may be anything (a torn read): one whose end wraps
        // is read as asked, and fails.
        let Some(end) = addr.checked_add(len - 1) else {
            self.reads += 1;
            return mem.bytes(addr, len);
        };
        let first = addr & !(Self::SIZE - 1);
        let last = end & !(Self::SIZE - 1);
        if self.pages.len() + 2 > Self::KEPT {
            self.pages.clear();
        }
        for page in [first, last] {
            if !self.pages.iter().any(|(p, _)| *p == page) {
                self.reads += 1;
                match mem.bytes(page, Self::SIZE) {
                    Ok(b) => self.pages.push((page, b.into_boxed_slice())),
                    Err(_) => {
                        self.reads += 1;
                        return mem.bytes(addr, len);
                    }
                }
            }
        }
        let part = |page: usize| &self.pages.iter().find(|(p, _)| *p == page).unwrap().1;
        let mut out = Vec::with_capacity(len);
        if first == last {
            out.extend_from_slice(&part(first)[addr - first..addr - first + len]);
        } else {
            out.extend_from_slice(&part(first)[addr - first..]);
            out.extend_from_slice(&part(last)[..addr + len - last]);
        }
        Ok(out)
    }
}

/// The newest data-stack chunk, copied from its start up to the frames of the chain in it.
struct ChunkCopy {
    start: usize,
    bytes: Vec<u8>,
}

impl ChunkCopy {
    fn get(&self, addr: usize, len: usize) -> Option<&[u8]> {
        let from = addr.checked_sub(self.start)?;
        self.bytes.get(from..from.checked_add(len)?)
    }
}

/// Reads the chain of frames from `frame` (the thread's current frame) outwards. `chunk` is the
/// thread's newest data-stack chunk, `base` its sentinel base frame (3.15), where the chain ends;
/// 0 when the layout does not say. Returns the frames and the number of system calls made.
pub fn read_chain(mem: &Memory, o: &DebugOffsets, (chunk, base): (usize, usize), mut frame: usize) -> (Vec<RawFrame>, usize) {
    // The fields read of each frame end before its locals; the owner byte is among them.
    let head_len = (o.frame_localsplus as usize).max(o.frame_owner as usize + 1);
    let mut pages = Pages::default();
    let mut copy: Option<ChunkCopy> = None;
    let mut reads = 0;
    let mut chain = Vec::new();
    let mut seen = std::collections::HashSet::new();
    while frame != 0 && frame != base && chain.len() < MAX_FRAMES && seen.insert(frame) {
        if copy.is_none() && chunk != 0 && frame > chunk && frame - chunk + head_len <= MAX_CHUNK_READ {
            // The first frame of the chain inside the newest chunk: everything below it in the
            // chunk (its callers that live on the data stack) comes with the same read.
            reads += 1;
            copy = mem.bytes(chunk, frame - chunk + head_len).ok().and_then(|bytes| {
                // The chunk's own size bounds where its frames can be.
                let size = usize::from_ne_bytes(bytes.get(8..16)?.try_into().ok()?);
                (size >= CHUNK_HEADER && frame.checked_add(head_len).zip(chunk.checked_add(size)).is_some_and(|(end, limit)| end <= limit)).then_some(ChunkCopy { start: chunk, bytes })
            });
            if copy.is_none() {
                // Not the chunk it should be: no more tries in this walk.
                copy = Some(ChunkCopy { start: 0, bytes: Vec::new() });
            }
        }
        let from_copy = copy.as_ref().and_then(|c| c.get(frame, head_len)).map(|b| b.to_vec());
        let head = match from_copy {
            Some(h) => h,
            None => match pages.read(mem, frame, head_len) {
                Ok(h) => h,
                Err(_) => break,
            },
        };
        let word = |off: u64| usize::from_ne_bytes(head[off as usize..off as usize + 8].try_into().unwrap());
        let raw_exec = word(o.frame_executable);
        let executable = if o.executable_is_stackref { raw_exec & !3 } else { raw_exec };
        let owner = head[o.frame_owner as usize];
        let tlbc_index = if o.frame_tlbc_index != 0 { i32::from_ne_bytes(head[o.frame_tlbc_index as usize..o.frame_tlbc_index as usize + 4].try_into().unwrap()) } else { 0 };
        chain.push(RawFrame { addr: frame, executable, instr: word(o.frame_instr_ptr), python: owner < FIRST_NON_PYTHON_OWNER, tlbc_index });
        frame = word(o.frame_previous);
    }
    (chain, reads + pages.reads)
}

/// Which frames of `now` stood at the previous tick (`before`) at the same depth from the
/// outermost frame, with the same address and code object: their code objects need no check.
pub fn unchanged_from_bottom(before: &[RawFrame], now: &[RawFrame]) -> Vec<bool> {
    let mut out = vec![false; now.len()];
    for (k, (a, b)) in before.iter().rev().zip(now.iter().rev()).enumerate() {
        if (a.addr, a.executable) != (b.addr, b.executable) {
            break;
        }
        out[now.len() - 1 - k] = true;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(addr: usize, executable: usize, instr: usize) -> RawFrame {
        RawFrame { addr, executable, instr, python: true, tlbc_index: 0 }
    }

    /// The frames that stayed are counted from the outermost one: a new innermost frame at the
    /// same address is not one of them, and nothing above a changed frame is.
    #[test]
    fn unchanged_frames_are_counted_from_the_bottom() {
        let before = [f(300, 3, 30), f(200, 2, 20), f(100, 1, 10)];
        assert_eq!(unchanged_from_bottom(&before, &before), vec![true, true, true]);
        let deeper = [f(400, 4, 40), f(300, 3, 31), f(200, 2, 20), f(100, 1, 10)];
        assert_eq!(unchanged_from_bottom(&before, &deeper), vec![false, true, true, true]);
        let other = [f(300, 3, 30), f(200, 9, 20), f(100, 1, 10)];
        assert_eq!(unchanged_from_bottom(&before, &other), vec![false, false, true]);
    }

    /// Reads through the page cache give the bytes a direct read gives: inside one page, across
    /// a page boundary, after the cache filled up, and larger than a page.
    #[test]
    fn pages_read_what_memory_holds() {
        let data: Vec<u8> = (0..5 * Pages::SIZE).map(|i| (i * 7 % 251) as u8).collect();
        let mem = Memory::new(remoteprocess::Process::new(std::process::id() as remoteprocess::Pid).unwrap());
        let base = data.as_ptr() as usize;
        // The first page boundary inside the buffer.
        let boundary = (base + Pages::SIZE) & !(Pages::SIZE - 1);
        let mut pages = Pages::default();
        let cases = [(boundary + 100, 80), (boundary - 40, 80), (boundary - 80, 80), (boundary + 2 * Pages::SIZE - 1, 2), (base, Pages::SIZE + 10)];
        for _ in 0..2 {
            for &(addr, len) in &cases {
                let got = pages.read(&mem, addr, len).unwrap();
                assert_eq!(got, &data[addr - base..addr - base + len], "{addr:#x}+{len}");
            }
        }
        for i in 0..40 {
            let addr = base + i * 97;
            assert_eq!(pages.read(&mem, addr, 64).unwrap(), &data[addr - base..addr - base + 64]);
        }
        assert!(pages.pages.len() <= Pages::KEPT);
    }
}
