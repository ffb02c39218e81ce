//! Thread states from CPython 3.15's gecko markers (`Lib/profiling/sampling/gecko_collector.py`).
//!
//! At every sample the collector reads each thread's status flags (has the GIL, on the CPU, has
//! requested the GIL) and keeps, per flag, when its current value began. When a value changes at
//! a sample, the interval marker of the old value is written from its start to that sample's
//! time (`Has GIL` / `No GIL`, `On CPU` / `Off CPU`; `Waiting for GIL` only while requested), and
//! at the end every open one is closed at the profile's last sample time. So a marker holds the
//! samples from its start up to, not including, its end, where the next value began; a marker
//! that ends at the profile's last time holds that time too unless another of its kind begins
//! there. (Only for `Waiting for GIL`, which has no opposite marker, is the last sample
//! ambiguous: it counts as waiting unless the thread holds the GIL then.)
//!
//! The state, like the run model's (`profiler/src/run.rs`): waiting for the GIL when requested
//! and not held; computing when holding the GIL or on the CPU; idle when off the CPU without the
//! GIL — which is CPython's own idea of idle (`--skip-idle`), and includes blocking I/O, which a
//! recording counts as computing. The GIL holder is kept too.

use super::gecko::MarkerTable;
use threadradar_profiler::run::ThreadState;

/// One kind of marker: spans `(start, end, value)` in ns, sorted by start.
#[derive(Default)]
struct Kind(Vec<(u64, u64, bool)>);

impl Kind {
    /// The value of the span holding `t`, if one does.
    fn at(&self, t: u64, profile_end: u64) -> Option<bool> {
        let i = self.0.partition_point(|s| s.0 <= t);
        let &(start, end, value) = self.0.get(i.checked_sub(1)?)?;
        (t < end || (t == end && (start == end || end == profile_end))).then_some(value)
    }
}

/// A thread's state markers.
pub(super) struct StateMarkers {
    gil: Kind,
    cpu: Kind,
    waiting: Kind,
    profile_end: u64,
}

/// Milliseconds as the importer's nanoseconds (the same rounding as the sample times, so a
/// marker and a sample written from one float meet exactly).
pub(super) fn ms_to_ns(ms: f64) -> u64 {
    (ms.max(0.0) * 1e6).round() as u64
}

impl StateMarkers {
    /// The thread's markers; `None` when it has none of the state markers. `string` resolves a
    /// marker's name; `profile_end` is the last sample time of the whole profile, in ns.
    pub fn read<'a>(m: &'a MarkerTable, string: impl Fn(usize) -> Option<&'a str>, profile_end: u64) -> Option<StateMarkers> {
        let mut out = StateMarkers { gil: Kind::default(), cpu: Kind::default(), waiting: Kind::default(), profile_end };
        for ((n, s), e) in m.name.iter().zip(m.start_time.iter()).zip(m.end_time.iter()) {
            let (Some(name), Some(s), Some(e)) = (n.get().and_then(&string), s.get(), e.get()) else { continue };
            let (kind, value) = match name {
                "Has GIL" => (&mut out.gil, true),
                "No GIL" => (&mut out.gil, false),
                "On CPU" => (&mut out.cpu, true),
                "Off CPU" => (&mut out.cpu, false),
                "Waiting for GIL" => (&mut out.waiting, true),
                _ => continue,
            };
            kind.0.push((ms_to_ns(s), ms_to_ns(e), value));
        }
        if out.gil.0.is_empty() && out.cpu.0.is_empty() && out.waiting.0.is_empty() {
            return None;
        }
        for k in [&mut out.gil, &mut out.cpu, &mut out.waiting] {
            k.0.sort_by_key(|s| s.0);
        }
        Some(out)
    }

    /// The state at sample time `t` (ns) and whether the thread held the GIL; `None` when no
    /// marker says.
    pub fn at(&self, t: u64) -> Option<(ThreadState, bool)> {
        let gil = self.gil.at(t, self.profile_end);
        let cpu = self.cpu.at(t, self.profile_end);
        let waiting = self.waiting.at(t, self.profile_end) == Some(true);
        let held = gil == Some(true);
        if waiting && !held {
            return Some((ThreadState::Gil, false));
        }
        if held || cpu == Some(true) {
            return Some((ThreadState::Computing, held));
        }
        (cpu == Some(false)).then_some((ThreadState::Idle, false))
    }
}
