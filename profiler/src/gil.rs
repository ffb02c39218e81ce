//! Who holds the GIL, read at the moment of our choosing.
//!
//! py-spy reads the GIL holder at the start of its stack walk, after its own pass over
//! `/proc`; the sampler reads each thread's kernel state separately. For threads that compute in
//! bursts of microseconds between waits, two reads a few hundred microseconds apart disagree (a
//! thread "holds the GIL" while the kernel says it sleeps). So the sampler reads the holder itself,
//! right before the kernel state, from the address py-spy located:
//!
//! - CPython 3.7–3.11: `_PyRuntime.gilstate.tstate_current`, the holder's `PyThreadState *`
//!   (NULL while nobody holds the GIL);
//! - CPython 3.12+: the GIL's `_gil_runtime_state`: `last_holder` (a `PyThreadState *`) counts
//!   only while `locked` is set.
//!
//! The holder's Python thread id is a field of its `PyThreadState`, at an offset that depends on
//! the version. Rather than carry every layout, the probe finds it: it looks for one of the
//! process's known Python thread ids (`pthread_t` values, distinctive addresses) among the first
//! words of the structure, and keeps the offset once two readings agree.

use remoteprocess::ProcessMemory;

/// How far into a `PyThreadState` to look for the thread id.
const SCAN_WORDS: usize = 64;

#[derive(Debug)]
pub struct GilProbe {
    addr: usize,
    modern: bool,
    /// Offset of `thread_id` in `PyThreadState`, once established.
    offset: Option<usize>,
    candidate: Option<usize>,
}

impl GilProbe {
    /// A probe for a process, from the address py-spy found; `None` when py-spy found none.
    pub fn new(threadstate_address: usize, major: u64, minor: u64) -> Option<GilProbe> {
        if threadstate_address == 0 || major < 3 || (major == 3 && minor < 7) {
            return None;
        }
        Some(GilProbe { addr: threadstate_address, modern: major > 3 || minor >= 12, offset: None, candidate: None })
    }

    /// The Python thread id of the GIL holder: `Ok(None)` when nobody holds it, `Err(())` when the
    /// probe cannot tell (yet); `known` are the Python ids of the process's threads.
    pub fn holder<P: ProcessMemory>(&mut self, process: &P, known: &[u64]) -> Result<Option<u64>, ()> {
        let tstate = if self.modern {
            let mut buf = [0u8; 24];
            process.read(self.addr, &mut buf).map_err(|_| ())?;
            let last_holder = usize::from_ne_bytes(buf[8..16].try_into().unwrap());
            let locked = i32::from_ne_bytes(buf[16..20].try_into().unwrap());
            if locked == 0 {
                return Ok(None);
            }
            last_holder
        } else {
            let mut buf = [0u8; 8];
            process.read(self.addr, &mut buf).map_err(|_| ())?;
            usize::from_ne_bytes(buf)
        };
        if tstate == 0 {
            return Ok(None);
        }
        if let Some(off) = self.offset {
            let mut buf = [0u8; 8];
            process.read(tstate + off, &mut buf).map_err(|_| ())?;
            let id = u64::from_ne_bytes(buf);
            return if known.contains(&id) { Ok(Some(id)) } else { Err(()) };
        }
        let mut buf = vec![0u8; SCAN_WORDS * 8];
        process.read(tstate, &mut buf).map_err(|_| ())?;
        let found = (0..SCAN_WORDS).find(|&w| {
            let v = u64::from_ne_bytes(buf[w * 8..w * 8 + 8].try_into().unwrap());
            v != 0 && known.contains(&v)
        });
        let Some(w) = found else { return Err(()) };
        let off = w * 8;
        // Trust an offset once it has been seen twice.
        if self.candidate == Some(off) {
            self.offset = Some(off);
        }
        self.candidate = Some(off);
        Ok(Some(u64::from_ne_bytes(buf[off..off + 8].try_into().unwrap())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::RefCell;
    use std::collections::HashMap;

    /// A fake address space.
    struct Mem(RefCell<HashMap<usize, u8>>);
    impl Mem {
        fn put(&self, addr: usize, bytes: &[u8]) {
            for (i, b) in bytes.iter().enumerate() {
                self.0.borrow_mut().insert(addr + i, *b);
            }
        }
    }
    impl ProcessMemory for Mem {
        fn read(&self, addr: usize, buf: &mut [u8]) -> Result<(), remoteprocess::Error> {
            for (i, b) in buf.iter_mut().enumerate() {
                *b = *self.0.borrow().get(&(addr + i)).unwrap_or(&0);
            }
            Ok(())
        }
    }

    #[test]
    fn finds_the_holder_and_learns_the_offset() {
        let mem = Mem(RefCell::new(HashMap::new()));
        let tstate_current = 0x1000;
        let (ts_a, ts_b) = (0x2000usize, 0x3000usize);
        let (id_a, id_b) = (0x7f00_1234_5000u64, 0x7f00_1234_9000u64);
        mem.put(ts_a + 0x98, &id_a.to_ne_bytes());
        mem.put(ts_b + 0x98, &id_b.to_ne_bytes());
        let mut probe = GilProbe::new(tstate_current, 3, 11).unwrap();
        let known = [id_a, id_b];
        assert_eq!(probe.holder(&mem, &known), Ok(None), "NULL: nobody holds the GIL");
        mem.put(tstate_current, &ts_a.to_ne_bytes());
        assert_eq!(probe.holder(&mem, &known), Ok(Some(id_a)));
        mem.put(tstate_current, &ts_b.to_ne_bytes());
        assert_eq!(probe.holder(&mem, &known), Ok(Some(id_b)));
        assert_eq!(probe.offset, Some(0x98));
        assert_eq!(probe.holder(&mem, &[id_a]), Err(()), "an unknown holder is not guessed");
    }

    #[test]
    fn modern_layout_needs_the_lock_flag() {
        let mem = Mem(RefCell::new(HashMap::new()));
        let gil = 0x5000;
        let ts = 0x6000usize;
        let id = 0x7f99_0000_1000u64;
        mem.put(ts + 0x48, &id.to_ne_bytes());
        mem.put(gil + 8, &ts.to_ne_bytes());
        let mut probe = GilProbe::new(gil, 3, 12).unwrap();
        assert_eq!(probe.holder(&mem, &[id]), Ok(None), "last holder, but unlocked");
        mem.put(gil + 16, &1i32.to_ne_bytes());
        assert_eq!(probe.holder(&mem, &[id]), Ok(Some(id)));
        assert!(GilProbe::new(gil, 3, 6).is_none());
    }
}
