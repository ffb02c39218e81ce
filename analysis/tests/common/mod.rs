//! A small language for hand-made runs: functions by qualified name, stacks as
//! `"outer > inner"` strings, samples as lists of `(thread, stack, state)`.
#![allow(dead_code)]

use std::collections::HashMap;
use threadradar_profiler::builder::{new_thread, FunctionSpec, RunBuilder};
use threadradar_profiler::run::{FileKind, FunctionId, Meta, Run, Sample, StackId, ThreadId, ThreadSample, ThreadState};

#[allow(unused_imports)]
pub use ThreadState::{Computing as C, Gil as G, Idle as I};

pub struct Fixture {
    b: RunBuilder,
    fns: HashMap<String, FunctionId>,
    t: u64,
}

impl Fixture {
    /// A run sampled every 3 ms (achieved rate left at 0, so the requested interval is used).
    pub fn new() -> Self {
        let meta = Meta { interval_ms: 3.0, cwd: "/p".into(), command: vec!["python3".into(), "prog.py".into()], ..Meta::default() };
        Fixture { b: RunBuilder::new(meta), fns: HashMap::new(), t: 0 }
    }

    /// Adds a function; its class is the qualified name's prefix up to the last dot, if any.
    pub fn func(&mut self, file: &str, kind: FileKind, qualname: &str, line: u32) -> FunctionId {
        let f = self.b.file(file, kind, None);
        let class = qualname.rsplit_once('.').map(|(c, _)| c.to_string());
        let id = self.b.function(
            f,
            &FunctionSpec { qualname, class: class.as_deref(), line, end_line: line + 5, class_line: if class.is_some() { 1 } else { 0 } },
        );
        self.fns.insert(qualname.to_string(), id);
        id
    }

    pub fn thread(&mut self, name: &str, ty: &str) -> ThreadId {
        let n = self.b.run().threads.len() as u32;
        self.b.thread(new_thread(100, 101 + n, 1000 + n as u64, name, ty))
    }

    /// Marks every thread as having kernel accounting.
    pub fn kernel_accounting(&mut self) {
        for t in &mut self.b.run_mut().threads {
            t.cpu_ns_first = Some(0);
            t.cpu_ns_last = Some(1_000_000_000);
        }
    }

    /// `"main > A.m1 > B.n"`, outermost first; `""` is no Python frame.
    pub fn stack(&mut self, spec: &str) -> Option<StackId> {
        let frames: Vec<_> = spec
            .split('>')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(|q| {
                let f = *self.fns.get(q).unwrap_or_else(|| panic!("fixture: unknown function {q}"));
                self.b.frame(f, 1)
            })
            .collect();
        self.b.stack(&frames)
    }

    /// One tick; each observation is (thread, stack, state, cpu_ns).
    pub fn sample_ns(&mut self, obs: &[(ThreadId, &str, ThreadState, u64)]) {
        let threads = obs
            .iter()
            .map(|&(thread, stack, state, cpu_ns)| ThreadSample { thread, stack: self.stack(stack), state, cpu_ns, ..Default::default() })
            .collect();
        self.b.push_sample(Sample { t: self.t, threads });
        self.t += 3_000_000;
    }

    pub fn sample(&mut self, obs: &[(ThreadId, &str, ThreadState)]) {
        let obs: Vec<_> = obs.iter().map(|&(t, s, st)| (t, s, st, 0)).collect();
        self.sample_ns(&obs);
    }

    pub fn finish(self) -> Run {
        let run = self.b.finish();
        run.validate().expect("fixture builds a valid run");
        run
    }
}

/// The run of the paper's Fig. 2 as these tests model it: 3 samples × 4 threads, all computing
/// (FRQ = 12). Class A (`a.py`) has `m1` and `m2`, class B (`b.py`) has `n`.
///
/// ```text
///          T1            T2            T3      T4
/// σ1       A.m1          A.m1 > B.n    B.n     A.m2
/// σ2       A.m1 > A.m2   A.m1          B.n     A.m2
/// σ3       A.m1          B.n           B.n     A.m1 > A.m1   (recursion)
/// ```
pub fn fig2() -> Run {
    let mut fx = Fixture::new();
    fx.func("/p/a.py", FileKind::User, "A.m1", 10);
    fx.func("/p/a.py", FileKind::User, "A.m2", 20);
    fx.func("/p/b.py", FileKind::User, "B.n", 5);
    let t: Vec<ThreadId> = (1..=4).map(|i| fx.thread(&format!("T{i}"), if i <= 2 { "Worker" } else { "Reader" })).collect();
    fx.sample(&[(t[0], "A.m1", C), (t[1], "A.m1 > B.n", C), (t[2], "B.n", C), (t[3], "A.m2", C)]);
    fx.sample(&[(t[0], "A.m1 > A.m2", C), (t[1], "A.m1", C), (t[2], "B.n", C), (t[3], "A.m2", C)]);
    fx.sample(&[(t[0], "A.m1", C), (t[1], "B.n", C), (t[2], "B.n", C), (t[3], "A.m1 > A.m1", C)]);
    fx.finish()
}
