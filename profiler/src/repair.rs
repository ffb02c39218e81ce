//! What a run file claims beyond its ids, checked before analysis trusts it.
//!
//! [`Run::validate`](crate::run::Run::validate) refuses a reference that points outside its
//! table: nothing sensible can be made of it. The rest of what the analysis assumes — samples in
//! time order, one entry per thread in a sample, a positive sampling interval, each thread's first
//! and last sample inside the run, kernel counters that do not run backwards — a damaged or
//! hand-edited file can break without making the run meaningless, so [`repair`] restores each
//! assumption and says what it changed in `meta.warnings` (which `info`, `report` and the editors
//! show). A run that needed nothing is left untouched.

use crate::run::{Run, ThreadId};
use std::collections::HashSet;

/// Restores the run's invariants that ids do not cover; returns the notes it added to
/// `meta.warnings` (empty when the run needed nothing). `run` must have passed `validate`.
pub fn repair(run: &mut Run) -> Vec<String> {
    let mut notes = Vec::new();
    let unordered = run.samples.windows(2).filter(|w| w[0].t > w[1].t).count();
    if unordered > 0 {
        run.samples.sort_by_key(|s| s.t);
        notes.push(format!("{unordered} sample(s) of this run file were out of time order; they were put in order"));
    }
    let late = run.samples.iter().filter(|s| s.t > MAX_T_NS).count();
    if late > 0 {
        run.samples.retain(|s| s.t <= MAX_T_NS);
        notes.push(format!("{late} sample(s) are stamped more than a year after the run's start; they were dropped"));
    }
    // One entry per thread in a sample: the views walk a thread's samples as a sequence (the
    // timeline took a thread seen twice at one tick for a gap of 2^32 ticks).
    let mut doubled = 0usize;
    for s in &mut run.samples {
        let mut seen: HashSet<ThreadId> = HashSet::with_capacity(s.threads.len());
        let before = s.threads.len();
        s.threads.retain(|t| seen.insert(t.thread));
        doubled += before - s.threads.len();
    }
    if doubled > 0 {
        notes.push(format!("{doubled} thread entr(ies) appeared a second time in one sample; the first of each was kept"));
    }
    if !(run.meta.interval_ms.is_finite() && run.meta.interval_ms > 0.0 && run.meta.interval_ms <= MAX_INTERVAL_MS) {
        let gaps: Vec<u64> = run.samples.windows(2).map(|w| w[1].t - w[0].t).filter(|&g| g > 0).collect();
        let ms = median(gaps).map_or(10.0, |g| g as f64 / 1e6);
        notes.push(format!("the run's sampling interval ({}) is not a positive number of milliseconds up to an hour; the median gap between its samples, {ms:.3} ms, is used", run.meta.interval_ms));
        run.meta.interval_ms = ms;
    }
    let span_s = match (run.samples.first(), run.samples.last()) {
        (Some(a), Some(b)) => (b.t - a.t) as f64 / 1e9,
        _ => 0.0,
    };
    if !(run.meta.duration_s.is_finite() && run.meta.duration_s >= 0.0) {
        notes.push(format!("the run's duration ({}) is not a number of seconds; the span of its samples, {span_s:.3} s, is used", run.meta.duration_s));
        run.meta.duration_s = span_s;
    }
    if !run.meta.achieved_rate_hz.is_finite() || run.meta.achieved_rate_hz < 0.0 {
        run.meta.achieved_rate_hz = if run.meta.duration_s > 0.0 { run.samples.len() as f64 / run.meta.duration_s } else { 0.0 };
    }
    if let Some(note) = thread_bounds(run, unordered > 0) {
        notes.push(note);
    }
    if let Some(note) = cpu_within_wall_time(run) {
        notes.push(note);
    }
    let mut backwards = 0usize;
    for t in &mut run.threads {
        for (first, last) in [(&t.cpu_ns_first, &mut t.cpu_ns_last), (&t.runq_ns_first, &mut t.runq_ns_last)] {
            if let (Some(f), Some(l)) = (first, last.as_mut()) {
                if *l < *f {
                    *l = *f;
                    backwards += 1;
                }
            }
        }
    }
    if backwards > 0 {
        notes.push(format!("{backwards} thread CPU counter(s) ran backwards between the first and the last sample; they count as 0"));
    }
    run.meta.warnings.extend(notes.iter().cloned());
    notes
}

/// Each thread's first and last sample, recomputed from the samples when the run's own are out of
/// range, reversed, or (after reordering) no longer true.
fn thread_bounds(run: &mut Run, reordered: bool) -> Option<String> {
    let n = run.samples.len() as u32;
    let wrong = run.threads.iter().filter(|t| t.first_sample > t.last_sample || (n > 0 && t.last_sample >= n)).count();
    if wrong == 0 && !reordered {
        return None;
    }
    let mut seen: Vec<Option<(u32, u32)>> = vec![None; run.threads.len()];
    for (i, s) in run.samples.iter().enumerate() {
        for t in &s.threads {
            let slot = &mut seen[t.thread as usize];
            *slot = Some(slot.map_or((i as u32, i as u32), |(f, _)| (f, i as u32)));
        }
    }
    for (t, s) in run.threads.iter_mut().zip(seen) {
        let (f, l) = s.unwrap_or((0, 0));
        t.first_sample = f;
        t.last_sample = l;
    }
    (wrong > 0).then(|| format!("{wrong} thread(s) named first or last samples outside the run; they were taken from the samples"))
}

/// The longest sampling interval a run may claim: an hour.
const MAX_INTERVAL_MS: f64 = 3_600_000.0;

/// A sample stamped later than this after the run's start is damage, not a recording.
const MAX_T_NS: u64 = 366 * 24 * 3600 * 1_000_000_000;

/// A thread's CPU and run-queue time since its previous sample cannot exceed the wall time since
/// then (one thread runs on one CPU at a time). The kernel's counters are read after the tick, by
/// up to tens of milliseconds under load (and runs before `read_us` was kept do not say when), so
/// a second, or ten intervals when longer, of slack is allowed: this bounds damage, it does not
/// second-guess a recording.
fn cpu_within_wall_time(run: &mut Run) -> Option<String> {
    let slack = ((run.meta.interval_ms * 1e7) as u64).max(1_000_000_000);
    let mut last_t: Vec<u64> = vec![0; run.threads.len()];
    let mut clamped = 0usize;
    for s in &mut run.samples {
        for t in &mut s.threads {
            let since = &mut last_t[t.thread as usize];
            let most = (s.t - *since).saturating_add(slack);
            *since = s.t;
            for v in [&mut t.cpu_ns, &mut t.runq_ns] {
                if *v > most {
                    *v = most;
                    clamped += 1;
                }
            }
        }
    }
    (clamped > 0).then(|| format!("{clamped} per-sample CPU or run-queue time(s) exceeded the wall time since the thread's previous sample; they were cut to it"))
}

fn median(mut v: Vec<u64>) -> Option<u64> {
    if v.is_empty() {
        return None;
    }
    let mid = v.len() / 2;
    Some(*v.select_nth_unstable(mid).1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::synth::{synthetic_run, SynthSpec};

    fn run() -> Run {
        synthetic_run(SynthSpec { ticks: 40, threads: 3, functions: 6, stacks: 10, seed: 5 })
    }

    #[test]
    fn a_sound_run_is_left_as_it_was() {
        let mut r = run();
        let before = r.clone();
        assert!(repair(&mut r).is_empty());
        assert_eq!(r, before);
    }

    #[test]
    fn samples_out_of_order_are_sorted_and_thread_bounds_follow() {
        let mut r = run();
        let sorted = r.samples.clone();
        r.samples.swap(3, 30);
        let notes = repair(&mut r);
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert!(notes[0].contains("out of time order"));
        assert_eq!(r.samples, sorted);
        assert!(r.meta.warnings.contains(&notes[0]));
    }

    #[test]
    fn each_broken_claim_gets_its_note() {
        let mut r = run();
        r.meta.interval_ms = f64::NAN;
        r.meta.duration_s = -1.0;
        r.threads[0].first_sample = 9;
        r.threads[0].last_sample = 2;
        r.threads[1].cpu_ns_first = Some(50);
        r.threads[1].cpu_ns_last = Some(10);
        let t = r.samples[4].threads[0];
        r.samples[4].threads.push(t);
        let notes = repair(&mut r);
        assert_eq!(notes.len(), 5, "{notes:?}");
        assert!(r.meta.interval_ms > 0.0 && r.meta.duration_s >= 0.0);
        assert!(r.threads[0].first_sample <= r.threads[0].last_sample);
        assert_eq!(r.threads[1].cpu_ns_last, Some(50));
        assert!(repair(&mut r).is_empty(), "a repaired run needs nothing more");
    }
}
