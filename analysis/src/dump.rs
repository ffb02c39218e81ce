//! One snapshot of every thread of a program (`threadradar dump`): per thread its name, type,
//! state, Python stack (innermost frame first, as `py-spy dump` prints it), what it waits on and,
//! where the run knows it, which thread holds that; then the cycles those "waits for a lock held
//! by" relations form — deadlocks. Pure: a run goes in, a [`Dump`] comes out.
//!
//! Who holds what is only what the run recorded, never guessed: the owner of a C `RLock` and the
//! thread a join waits for ([`WaitObject::owner`], read from the program's memory), and the
//! GIL's holder at the same tick. A
//! plain `Lock` keeps no owner, so a thread waiting on one has no holder and takes part in no
//! cycle.
//!
//! [`WaitObject::owner`]: threadradar_profiler::run::WaitObject

use serde::Serialize;
use threadradar_profiler::run::{Run, ThreadSample, ThreadState};

/// Every thread of the run's last sample.
#[derive(Clone, Debug, Serialize)]
pub struct Dump {
    /// Seconds since the run's start of the sample shown.
    pub at_s: f64,
    pub threads: Vec<DumpThread>,
    /// Each cycle of threads waiting for one another, once.
    pub deadlocks: Vec<Deadlock>,
}

#[derive(Clone, Debug, Serialize)]
pub struct DumpThread {
    pub pid: u32,
    /// The kernel's thread id (`threading.get_native_id()`).
    pub tid: u32,
    /// `threading.get_ident()`.
    pub python_id: u64,
    pub name: String,
    pub thread_type: String,
    pub is_main: bool,
    /// `computing`, `gil` (waiting for it) or `idle`.
    pub state: ThreadState,
    /// It held the GIL.
    pub gil: bool,
    /// The system call it was blocked in (`futex`, `read`, …).
    pub blocked: Option<String>,
    /// Innermost first.
    pub frames: Vec<DumpFrame>,
    pub wait: Option<DumpWait>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct DumpFrame {
    pub function: String,
    pub file: String,
    pub line: u32,
}

/// What a thread waits on.
#[derive(Clone, Debug, Serialize)]
pub struct DumpWait {
    /// The object's type (`_thread.RLock`, `threading.Condition`, `GIL`, …), or the system call
    /// when no object was read.
    pub kind: String,
    /// The name the program's code gives it (`self.lock`).
    pub name: Option<String>,
    /// Its address in the program (absent for the GIL and when only named).
    pub addr: Option<u64>,
    /// The descriptor's target for I/O (`pipe:[456]`).
    pub fd_target: Option<String>,
    /// Index into [`Dump::threads`] of the thread holding it, when the run knows it.
    pub holder: Option<usize>,
    /// Why the holder is not known, for a lock (absent when known or when the object has no holder).
    pub holder_unknown: Option<String>,
}

impl DumpWait {
    /// `lock_b (_thread.RLock at 0x7f…)`, `the GIL`, `futex 0x…`.
    pub fn describe(&self) -> String {
        if self.kind == "GIL" {
            return "the GIL".into();
        }
        let at = match (self.addr, &self.fd_target) {
            (Some(a), _) => format!(" at {a:#x}"),
            (None, Some(t)) => format!(" on {t}"),
            _ => String::new(),
        };
        match &self.name {
            Some(n) => format!("{n} ({}{at})", self.kind),
            None => format!("{}{at}", self.kind),
        }
    }
}

/// Threads each waiting for something the next holds, the last for what the first holds.
#[derive(Clone, Debug, Serialize)]
pub struct Deadlock {
    /// Indexes into [`Dump::threads`], starting at the lowest.
    pub threads: Vec<usize>,
    /// The cycle in words: `"a" waits for … held by "b", which waits for … held by "a".`
    pub sentence: String,
}

/// The last sample of the run as a [`Dump`]; `None` for a run without samples.
pub fn dump(run: &Run) -> Option<Dump> {
    let sample = run.samples.iter().rev().find(|s| !s.threads.is_empty())?;
    // The main thread first, then in the order the threads started (their kernel ids).
    let mut order: Vec<&ThreadSample> = sample.threads.iter().collect();
    order.sort_by_key(|ts| {
        let t = &run.threads[ts.thread as usize];
        (t.pid, !t.is_main, t.tid)
    });
    let mut threads: Vec<DumpThread> = order.iter().map(|ts| thread(run, ts)).collect();
    let waits: Vec<Option<DumpWait>> = order.iter().map(|ts| wait(run, &order, ts)).collect();
    for (t, w) in threads.iter_mut().zip(waits) {
        t.wait = w;
    }
    let next: Vec<Option<usize>> = threads.iter().map(|t| t.wait.as_ref().and_then(|w| w.holder)).collect();
    let deadlocks = wait_cycles(&next).into_iter().map(|c| Deadlock { sentence: sentence(&threads, &c), threads: c }).collect();
    Some(Dump { at_s: sample.t as f64 / 1e9, threads, deadlocks })
}

fn thread(run: &Run, ts: &ThreadSample) -> DumpThread {
    let th = &run.threads[ts.thread as usize];
    let frames = ts
        .stack
        .map(|s| {
            run.stack_frames(s)
                .map(|f| {
                    let func = &run.functions[f.function as usize];
                    DumpFrame { function: run.qualname(f.function).to_string(), file: run.file_path(func.file).to_string(), line: f.line }
                })
                .collect()
        })
        .unwrap_or_default();
    DumpThread {
        pid: th.pid,
        tid: th.tid,
        python_id: th.python_id,
        name: th.name.clone(),
        thread_type: th.thread_type.clone(),
        is_main: th.is_main,
        state: ts.state,
        gil: ts.gil,
        blocked: ts.blocked.map(|b| run.str(b).to_string()),
        frames,
        wait: None,
    }
}

/// What `ts` waits on and who holds it (an index into `sample`, the threads of its tick), from
/// the run's recorded wait target.
fn wait(run: &Run, sample: &[&ThreadSample], ts: &ThreadSample) -> Option<DumpWait> {
    let target = &run.waits[ts.wait? as usize];
    let me = &run.threads[ts.thread as usize];
    let index_of = |pred: &dyn Fn(&ThreadSample) -> bool| sample.iter().position(|o| o.thread != ts.thread && run.threads[o.thread as usize].pid == me.pid && pred(o));
    let mut w = DumpWait { kind: run.str(target.syscall).to_string(), name: None, addr: target.futex, fd_target: target.fd_target.map(|s| run.str(s).to_string()), holder: None, holder_unknown: None };
    let Some(obj) = &target.object else { return Some(w) };
    w.kind = run.str(obj.type_name).to_string();
    w.name = obj.name.map(|n| run.str(n).to_string());
    w.addr = (obj.addr != 0).then_some(obj.addr);
    match (obj.owner, w.kind.as_str()) {
        // An RLock's owner, or the thread a join waits for.
        (Some(owner), _) => {
            w.holder = index_of(&|o| run.threads[o.thread as usize].python_id == owner);
            if w.holder.is_none() {
                w.holder_unknown = Some(format!("held by thread ident {owner}, which this snapshot did not see"));
            }
        }
        (None, "GIL") => w.holder = index_of(&|o| o.gil),
        (None, "_thread.RLock") => w.holder_unknown = Some("holder unknown: the lock was free when read".into()),
        (None, "_thread.lock" | "lock") => w.holder_unknown = Some("holder unknown: a plain Lock does not record its owner".into()),
        _ => {}
    }
    Some(w)
}

/// The cycles of a "waits for a thing held by" relation where each thread waits for at most one
/// other (`next[i]`): each cycle once, starting at its lowest index, in order of that index. A
/// thread waiting on a cycle without being in it is not part of it.
pub fn wait_cycles(next: &[Option<usize>]) -> Vec<Vec<usize>> {
    // 0: not visited, 1: on the current path, 2: done.
    let mut mark = vec![0u8; next.len()];
    let mut out = Vec::new();
    for start in 0..next.len() {
        let mut path = Vec::new();
        let mut at = Some(start);
        while let Some(i) = at.filter(|&i| i < next.len()) {
            match mark[i] {
                0 => {
                    mark[i] = 1;
                    path.push(i);
                    at = next[i];
                }
                1 => {
                    let from = path.iter().position(|&p| p == i).unwrap_or(0);
                    let mut cycle = path[from..].to_vec();
                    let low = (0..cycle.len()).min_by_key(|&k| cycle[k]).unwrap_or(0);
                    cycle.rotate_left(low);
                    out.push(cycle);
                    break;
                }
                _ => break,
            }
        }
        for p in path {
            mark[p] = 2;
        }
    }
    out.sort();
    out
}

fn sentence(threads: &[DumpThread], cycle: &[usize]) -> String {
    let mut s = String::from("Deadlock: ");
    for (k, &i) in cycle.iter().enumerate() {
        let t = &threads[i];
        let holder = cycle[(k + 1) % cycle.len()];
        let what = t.wait.as_ref().map(DumpWait::describe).unwrap_or_default();
        if k > 0 {
            s.push_str(", which ");
        } else {
            s.push_str(&format!("{:?} ", t.name));
        }
        let by = if holder == i { "itself".to_string() } else { format!("{:?}", threads[holder].name) };
        s.push_str(&format!("waits for {what} held by {by}"));
    }
    s.push('.');
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_each_cycle_once_from_its_lowest_thread() {
        assert_eq!(wait_cycles(&[Some(1), Some(0)]), vec![vec![0, 1]]);
        assert_eq!(wait_cycles(&[Some(2), Some(0), Some(1)]), vec![vec![0, 2, 1]]);
        // 3 waits on the cycle 1 ⇄ 2 without being in it; 0 waits for nobody known.
        assert_eq!(wait_cycles(&[None, Some(2), Some(1), Some(1)]), vec![vec![1, 2]]);
        assert_eq!(wait_cycles(&[Some(1), Some(0), Some(3), Some(2)]), vec![vec![0, 1], vec![2, 3]]);
        assert_eq!(wait_cycles(&[Some(0)]), vec![vec![0]], "a thread waiting for what it holds");
        assert!(wait_cycles(&[Some(1), Some(2), None]).is_empty(), "a chain is no cycle");
        assert!(wait_cycles(&[Some(7)]).is_empty(), "an index out of range ends the walk");
    }

    fn named(name: &str, wait: Option<(&str, u64, usize)>) -> DumpThread {
        DumpThread {
            pid: 1,
            tid: 2,
            python_id: 3,
            name: name.into(),
            thread_type: "Thread".into(),
            is_main: false,
            state: ThreadState::Idle,
            gil: false,
            blocked: None,
            frames: vec![],
            wait: wait.map(|(n, addr, holder)| DumpWait { kind: "_thread.RLock".into(), name: Some(n.into()), addr: Some(addr), fd_target: None, holder: Some(holder), holder_unknown: None }),
        }
    }

    #[test]
    fn says_the_cycle_in_words() {
        let threads = vec![named("a", Some(("lock_b", 0xb0, 1))), named("b", Some(("lock_a", 0xa0, 0)))];
        assert_eq!(
            sentence(&threads, &[0, 1]),
            r#"Deadlock: "a" waits for lock_b (_thread.RLock at 0xb0) held by "b", which waits for lock_a (_thread.RLock at 0xa0) held by "a"."#
        );
        let me = vec![named("solo", Some(("r", 0x10, 0)))];
        assert_eq!(sentence(&me, &[0]), r#"Deadlock: "solo" waits for r (_thread.RLock at 0x10) held by itself."#);
    }
}
