//! One CPU's `perf_event_open` ring buffer, shared by the scheduler's tracepoints (`sched.rs`) and
//! the lock uprobes (`uprobes.rs`): several events of one CPU write into the first one's buffer
//! (`PERF_EVENT_IOC_SET_OUTPUT`), so the buffer holds them all in time order, and the drain thread
//! copies its records out.

use perf_event_open_sys as sys;
use std::fs;
use std::sync::atomic::{AtomicU64, Ordering};

/// Pages of ring buffer per CPU (a power of two), plus the header page.
pub const RING_PAGES: usize = 128;

/// One CPU's ring buffer and the events that write into it.
pub struct Ring {
    pub fds: Vec<i32>,
    base: *mut u8,
    len: usize,
}

// SAFETY: a `Ring` is the sole owner of its mapping and descriptors (it is not `Clone`, and
// `base` is never handed out), and the mapping is process-wide memory, not tied to the thread that
// made it; moving the `Ring` moves the only access to it. It is not `Sync`: only the thread that
// owns it (the drain thread) reads the buffer and writes `data_tail`.
unsafe impl Send for Ring {}

impl Drop for Ring {
    fn drop(&mut self) {
        // SAFETY: `base`/`len` are exactly the mapping `Ring::new` made, unmapped once, here, and
        // no pointer into it outlives the `Ring` (`for_each` keeps none across calls). The fds
        // were handed to `Ring::new` to own and are closed only here.
        unsafe {
            libc::munmap(self.base as *mut libc::c_void, self.len);
            for &fd in &self.fds {
                libc::close(fd);
            }
        }
    }
}

pub fn page_size() -> usize {
    // SAFETY: sysconf takes a constant and touches no memory of ours.
    unsafe { libc::sysconf(libc::_SC_PAGESIZE) as usize }
}

/// Closes descriptors that no `Ring` owns yet (a failure path).
pub fn close_all(fds: &[i32]) {
    for &fd in fds {
        // SAFETY: the caller opened `fd` and hands it over to be closed once, here.
        unsafe { libc::close(fd) };
    }
}

/// Calls `perf_event_open` with `attr`; the returned fd is the caller's.
pub fn open(attr: &mut sys::bindings::perf_event_attr, pid: i32, cpu: i32) -> Result<i32, std::io::Error> {
    attr.size = std::mem::size_of::<sys::bindings::perf_event_attr>() as u32;
    // SAFETY: `attr` is a fully initialised perf_event_attr whose `size` is its own size, borrowed
    // mutably for the call only (the kernel may write back its expected size); any pointer in it
    // (a uprobe's path) is the caller's and outlives the call; group -1 = no group.
    let fd = unsafe { sys::perf_event_open(attr, pid, cpu, -1, sys::bindings::PERF_FLAG_FD_CLOEXEC as libc::c_ulong) };
    if fd < 0 {
        Err(std::io::Error::last_os_error())
    } else {
        Ok(fd)
    }
}

impl Ring {
    /// Maps a buffer for `fds[0]` and points every other event of `fds` (of the same CPU) at it.
    /// Takes the descriptors: they are closed on failure too.
    pub fn new(fds: Vec<i32>) -> Result<Ring, std::io::Error> {
        if fds.is_empty() {
            return Err(std::io::Error::other("no events to map"));
        }
        let len = (RING_PAGES + 1) * page_size();
        // SAFETY: a new shared mapping at an address the kernel chooses (null hint), so no
        // existing memory is replaced; `fds[0]` is a perf fd the caller opened, and `len` is one
        // metadata page plus a power of two (RING_PAGES) data pages, as perf_event_open(2) requires.
        let base = unsafe { libc::mmap(std::ptr::null_mut(), len, libc::PROT_READ | libc::PROT_WRITE, libc::MAP_SHARED, fds[0], 0) };
        if base == libc::MAP_FAILED {
            let e = std::io::Error::last_os_error();
            close_all(&fds);
            return Err(e);
        }
        let ring = Ring { fds, base: base as *mut u8, len };
        for &fd in &ring.fds[1..] {
            // SAFETY: an ioctl on our own perf fd whose argument is another fd (by value, no
            // pointer); both are events of the same CPU, as PERF_EVENT_IOC_SET_OUTPUT requires.
            if unsafe { sys::ioctls::SET_OUTPUT(fd, ring.fds[0]) } < 0 {
                // Dropping `ring` unmaps and closes everything.
                return Err(std::io::Error::last_os_error());
            }
        }
        Ok(ring)
    }

    /// Enables (or disables) every event of the ring.
    pub fn enable(&self, on: bool) {
        for &fd in &self.fds {
            // SAFETY: an ioctl with no pointer argument on an event fd the ring owns and keeps
            // open while it lives.
            unsafe {
                if on {
                    sys::ioctls::ENABLE(fd, 0)
                } else {
                    sys::ioctls::DISABLE(fd, 0)
                }
            };
        }
    }

    /// Hands every record published since the last call to `f` (its type and its bytes, header
    /// included) and gives the space back to the kernel.
    pub fn for_each(&self, mut f: impl FnMut(u32, &[u8])) {
        let page = page_size();
        let meta = self.base as *mut sys::bindings::perf_event_mmap_page;
        // SAFETY: the mapping is `(RING_PAGES + 1) * page` bytes from `base`, so `base + page` is
        // in it: the first byte of the data area, which is `RING_PAGES * page` bytes long.
        let data = unsafe { self.base.add(page) };
        let size = (RING_PAGES * page) as u64;
        // SAFETY: `data_head` and `data_tail` are naturally aligned u64s in the metadata page
        // (mapped, page-aligned, alive while `self` is). The kernel writes `data_head` with a
        // release store after the records and reads `data_tail` concurrently, so they are
        // accessed only as atomics: an acquire load of the head orders the record reads after it
        // (the smp_rmb perf_event_open(2) asks for), a release store of the tail orders them before
        // the kernel may reuse the space (its smp_mb). The drain thread is the only user-space writer.
        let (head_at, tail_at) = unsafe {
            (&*(std::ptr::addr_of!((*meta).data_head) as *const AtomicU64), &*(std::ptr::addr_of!((*meta).data_tail) as *const AtomicU64))
        };
        let head = head_at.load(Ordering::Acquire);
        let mut tail = tail_at.load(Ordering::Relaxed);
        let mut rec = Vec::with_capacity(256);
        // Every byte read below is at `at(off) < size` in the data area, and at an offset in
        // `tail..head`: published by the kernel (acquire above) and not rewritten by it until the
        // tail moves past it (release below).
        let at = |off: u64| (off % size) as usize;
        while tail < head {
            let mut hdr = [0u8; 8];
            for (k, b) in hdr.iter_mut().enumerate() {
                // SAFETY: in bounds and published, as said above (`tail + 8 <= head` is not known
                // yet, but the kernel writes whole records, so a header at `tail < head` is whole).
                *b = unsafe { *data.add(at(tail + k as u64)) };
            }
            let typ = u32::from_ne_bytes(hdr[0..4].try_into().unwrap());
            let len = u16::from_ne_bytes(hdr[6..8].try_into().unwrap()) as u64;
            if len < 8 || tail + len > head {
                break;
            }
            rec.clear();
            for k in 0..len {
                // SAFETY: in bounds and published: `tail + k < tail + len <= head`.
                rec.push(unsafe { *data.add(at(tail + k)) });
            }
            f(typ, &rec);
            tail += len;
        }
        // Hands the space back to the kernel once every record in it has been copied out.
        tail_at.store(tail, Ordering::Release);
    }
}

/// What every event of a ring shares: created disabled (enabled when every CPU's is open), stamped
/// on CLOCK_MONOTONIC (the run's clock), and waking the reader when a quarter of the ring is full.
pub fn ring_event(attr: &mut sys::bindings::perf_event_attr) {
    attr.set_disabled(1);
    attr.set_use_clockid(1);
    attr.clockid = libc::CLOCK_MONOTONIC;
    attr.set_watermark(1);
    attr.wakeup_watermark = (RING_PAGES * page_size() / 4) as u32;
}

/// A sample record's bytes, read at the offsets its event's `sample_type` lays out.
pub struct Fields<'a>(&'a [u8]);

impl Fields<'_> {
    pub fn u32_at(&self, o: usize) -> Option<u32> {
        self.0.get(o..o + 4).map(|b| u32::from_ne_bytes(b.try_into().unwrap()))
    }
    pub fn u64_at(&self, o: usize) -> Option<u64> {
        self.0.get(o..o + 8).map(|b| u64::from_ne_bytes(b.try_into().unwrap()))
    }
}

/// One record of a ring, as every reader takes it: a lost-events record adds its count to `lost`;
/// a sample gives its fields; any other kind is passed over (`None`).
pub fn sample<'a>(typ: u32, rec: &'a [u8], lost: &AtomicU64) -> Option<Fields<'a>> {
    let fields = Fields(rec);
    if typ == sys::bindings::PERF_RECORD_LOST {
        if let Some(n) = fields.u64_at(16) {
            lost.fetch_add(n, Ordering::Relaxed);
        }
        return None;
    }
    (typ == sys::bindings::PERF_RECORD_SAMPLE).then_some(fields)
}

pub fn online_cpus() -> Vec<i32> {
    let text = fs::read_to_string("/sys/devices/system/cpu/online").unwrap_or_else(|_| "0".into());
    let mut out = Vec::new();
    for part in text.trim().split(',') {
        match part.split_once('-') {
            Some((a, b)) => {
                if let (Ok(a), Ok(b)) = (a.parse::<i32>(), b.parse::<i32>()) {
                    out.extend(a..=b);
                }
            }
            None => out.extend(part.parse::<i32>().ok()),
        }
    }
    out
}
