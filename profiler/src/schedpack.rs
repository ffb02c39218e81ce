//! The scheduler's switches and wake-ups as a run file's chunks store them (`sched_packed`):
//! times as differences from the previous event of the same table, and tids as indexes into a
//! table of the tids met so far, which each chunk extends. A busy program switches thousands of
//! times a second, and spelled out (`[t_ns, prev_tid, prev_state, next_tid]` with a ten-digit time
//! and six-digit tids) those events were most of a `--sched` run's file; the packed form is about
//! half of it (docs/benchmarks.md). Readers take both forms (`switches`/`wakeups` as before).
//!
//! The packing state runs across the chunks of one file, so a reader unpacks them in order, as it
//! folds every other table.

use crate::run::{SchedSwitch, SchedWakeup};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// One chunk's scheduler events, packed.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PackedSched {
    /// Tids met for the first time in this chunk, appended to the file's tid table (an event's
    /// tid `i` is the table's `i`th entry).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tids: Vec<u32>,
    /// `[dt_ns, prev, prev_state, next]`: `dt_ns` from the previous switch of the file (the first
    /// from the run's t = 0); `prev`/`next` index the tid table.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub switches: Vec<(i64, u32, u8, u32)>,
    /// `[dt_ns, waker, wakee]`, the same way.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub wakeups: Vec<(i64, u32, u32)>,
}

impl PackedSched {
    pub fn is_empty(&self) -> bool {
        self.tids.is_empty() && self.switches.is_empty() && self.wakeups.is_empty()
    }
}

/// Packs the events of one file, chunk after chunk.
#[derive(Clone, Debug, Default)]
pub struct Packer {
    index: HashMap<u32, u32>,
    switch_t: u64,
    wakeup_t: u64,
}

impl Packer {
    fn id(&mut self, tid: u32, new: &mut Vec<u32>) -> u32 {
        let next = self.index.len() as u32;
        *self.index.entry(tid).or_insert_with(|| {
            new.push(tid);
            next
        })
    }

    /// The next chunk's events, packed after the ones packed before.
    pub fn pack(&mut self, switches: &[SchedSwitch], wakeups: &[SchedWakeup]) -> PackedSched {
        let mut p = PackedSched::default();
        for s in switches {
            let dt = s.t as i64 - self.switch_t as i64;
            self.switch_t = s.t;
            let (a, b) = (self.id(s.prev_tid, &mut p.tids), self.id(s.next_tid, &mut p.tids));
            p.switches.push((dt, a, s.prev_state, b));
        }
        for w in wakeups {
            let dt = w.t as i64 - self.wakeup_t as i64;
            self.wakeup_t = w.t;
            let (a, b) = (self.id(w.waker_tid, &mut p.tids), self.id(w.wakee_tid, &mut p.tids));
            p.wakeups.push((dt, a, b));
        }
        p
    }
}

/// Unpacks the events of one file, chunk after chunk.
#[derive(Clone, Debug, Default)]
pub struct Unpacker {
    tids: Vec<u32>,
    switch_t: u64,
    wakeup_t: u64,
}

impl Unpacker {
    fn tid(&self, i: u32) -> Result<u32, String> {
        self.tids.get(i as usize).copied().ok_or_else(|| format!("a scheduler event names tid {i} of a table of {}", self.tids.len()))
    }

    fn step(t: &mut u64, dt: i64) -> Result<u64, String> {
        *t = t.checked_add_signed(dt).ok_or_else(|| format!("a scheduler event's time difference {dt} leaves the run's clock"))?;
        Ok(*t)
    }

    /// Appends the chunk's events to the run's tables; an event that names a tid the table does
    /// not have, or a time before the run's start, is an error (one sentence).
    pub fn unpack(&mut self, p: PackedSched, switches: &mut Vec<SchedSwitch>, wakeups: &mut Vec<SchedWakeup>) -> Result<(), String> {
        self.tids.extend(p.tids);
        for (dt, a, prev_state, b) in p.switches {
            let t = Self::step(&mut self.switch_t, dt)?;
            switches.push(SchedSwitch { t, prev_tid: self.tid(a)?, prev_state, next_tid: self.tid(b)? });
        }
        for (dt, a, b) in p.wakeups {
            let t = Self::step(&mut self.wakeup_t, dt)?;
            wakeups.push(SchedWakeup { t, waker_tid: self.tid(a)?, wakee_tid: self.tid(b)? });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packs_across_chunks_and_back() {
        let sw = [
            SchedSwitch { t: 1_000_000_123, prev_tid: 4242, prev_state: b'S', next_tid: 0 },
            SchedSwitch { t: 1_000_050_000, prev_tid: 0, prev_state: b'R', next_tid: 4243 },
            // Out of order by a little (two CPUs' buffers): a negative difference.
            SchedSwitch { t: 1_000_040_000, prev_tid: 4243, prev_state: b'R', next_tid: 4242 },
        ];
        let wk = [SchedWakeup { t: 999_999_000, waker_tid: 4243, wakee_tid: 4242 }, SchedWakeup { t: 1_000_060_000, waker_tid: 0, wakee_tid: 4243 }];
        let mut packer = Packer::default();
        let a = packer.pack(&sw[..2], &wk[..1]);
        let b = packer.pack(&sw[2..], &wk[1..]);
        assert_eq!(a.tids, [4242, 0, 4243]);
        assert!(b.tids.is_empty(), "tids met before are not repeated");
        assert_eq!(b.switches, [(-10_000, 2, b'R', 0)]);
        let text = serde_json::to_string(&a).unwrap();
        assert_eq!(text, r#"{"tids":[4242,0,4243],"switches":[[1000000123,0,83,1],[49877,1,82,2]],"wakeups":[[999999000,2,0]]}"#);
        let (mut s, mut w) = (Vec::new(), Vec::new());
        let mut un = Unpacker::default();
        un.unpack(serde_json::from_str(&text).unwrap(), &mut s, &mut w).unwrap();
        un.unpack(b, &mut s, &mut w).unwrap();
        assert_eq!((s.as_slice(), w.as_slice()), (&sw[..], &wk[..]));
    }

    #[test]
    fn bad_packed_events_are_one_sentence() {
        let mut un = Unpacker::default();
        let p = PackedSched { tids: vec![7], switches: vec![(5, 0, b'S', 3)], wakeups: vec![] };
        let e = un.unpack(p, &mut Vec::new(), &mut Vec::new()).unwrap_err();
        assert!(e.contains("tid 3 of a table of 1"), "{e}");
        let p = PackedSched { tids: vec![], switches: vec![], wakeups: vec![(-6, 0, 0)] };
        assert!(un.unpack(p, &mut Vec::new(), &mut Vec::new()).unwrap_err().contains("leaves the run's clock"));
    }
}
