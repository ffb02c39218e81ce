//! Deterministic synthetic runs for benchmarks and scale tests: any number of ticks, threads,
//! functions and files, with realistic call stacks (a tree of call paths shared across threads).

use crate::builder::{new_thread, FunctionSpec, RunBuilder};
use crate::run::*;

/// Shape of a synthetic run.
#[derive(Clone, Copy, Debug)]
pub struct SynthSpec {
    /// Sampler ticks; each holds one entry per thread.
    pub ticks: usize,
    pub threads: usize,
    pub functions: usize,
    /// Distinct call paths (leaf stacks) to draw from.
    pub stacks: usize,
    pub seed: u64,
}

impl Default for SynthSpec {
    fn default() -> Self {
        SynthSpec { ticks: 10_000, threads: 8, functions: 500, stacks: 2_000, seed: 1 }
    }
}

/// A small, fast, deterministic generator (SplitMix64).
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// Builds a synthetic run. Threads have unequal work (thread i is computing with probability
/// falling with i), a few functions are hot, and every tenth function is in a stdlib file.
pub fn synthetic_run(spec: SynthSpec) -> Run {
    let mut rng = Rng(spec.seed);
    let mut b = RunBuilder::new(Meta { interval_ms: 3.0, command: vec!["python3".into(), "synthetic.py".into()], ..Meta::default() });
    let files: Vec<FileId> = (0..spec.functions.div_ceil(50).max(1))
        .map(|i| {
            let (path, kind) = if i % 10 == 9 {
                (format!("/usr/lib/python3.11/mod{i}.py"), FileKind::Stdlib)
            } else {
                (format!("/project/pkg/mod{i}.py"), FileKind::User)
            };
            b.file(&path, kind, Some(format!("{i:064x}")))
        })
        .collect();
    let functions: Vec<FunctionId> = (0..spec.functions.max(1))
        .map(|i| {
            let class = (i % 3 != 0).then(|| format!("Class{}", i / 6));
            let qual = match &class {
                Some(c) => format!("{c}.method{i}"),
                None => format!("function{i}"),
            };
            let line = 1 + (i % 50) as u32 * 20;
            b.function(
                files[i / 50 % files.len()],
                &FunctionSpec { qualname: &qual, class: class.as_deref(), line, end_line: line + 15, class_line: class.as_ref().map(|_| 1).unwrap_or(0) },
            )
        })
        .collect();
    // Call paths: each extends a random earlier path by one to three frames.
    let mut leaves: Vec<StackId> = Vec::with_capacity(spec.stacks);
    for _ in 0..spec.stacks.max(1) {
        let mut parent = if leaves.is_empty() || rng.below(8) == 0 { None } else { Some(leaves[rng.below(leaves.len())]) };
        for _ in 0..1 + rng.below(3) {
            // Skewed choice: low ids are hot.
            let f = functions[(rng.below(functions.len()) * rng.below(functions.len())) / functions.len()];
            let frame = b.frame(f, 1 + rng.below(400) as u32);
            parent = Some(b.stack_node(parent, frame));
        }
        leaves.push(parent.unwrap());
    }
    let ids: Vec<ThreadId> = (0..spec.threads)
        .map(|i| {
            let mut t = new_thread(1000, 1000 + i as u32, 7000 + i as u64, &format!("worker-{i}"), if i % 2 == 0 { "Worker" } else { "Thread" });
            t.type_source = TypeSource::Object;
            b.thread(t)
        })
        .collect();
    for tick in 0..spec.ticks {
        let mut threads = Vec::with_capacity(spec.threads);
        for (i, &id) in ids.iter().enumerate() {
            let busy = rng.below(spec.threads + i) < spec.threads;
            threads.push(ThreadSample {
                thread: id,
                stack: Some(leaves[rng.below(leaves.len())]),
                state: if busy { ThreadState::Computing } else { ThreadState::Idle },
                gil: busy && i == tick % spec.threads,
                cpu_ns: if busy { 2_900_000 } else { 0 },
                runq_ns: 1_000,
                blocked: None,
                wait: None,
                read_us: 0,
            });
        }
        b.push_sample(Sample { t: tick as u64 * 3_000_000, threads });
    }
    let mut run = b.finish();
    run.meta.duration_s = spec.ticks as f64 * 0.003;
    run.meta.achieved_rate_hz = 333.3;
    run
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn synthetic_runs_are_valid_and_deterministic() {
        let spec = SynthSpec { ticks: 200, threads: 4, functions: 120, stacks: 50, seed: 7 };
        let a = synthetic_run(spec);
        a.validate().unwrap();
        assert_eq!(a.samples.len(), 200);
        assert_eq!(a.threads.len(), 4);
        assert!(a.functions.len() == 120 && a.files.len() == 3);
        assert_eq!(a, synthetic_run(spec));
    }
}

/// Makes a synthetic run look more like a program's timeline: from the second tick on, each
/// thread keeps its previous stack and state with probability `keep_pct` %, drawn from an
/// xorshift stream started at `seed` (deterministic; benchmarks rely on the exact result).
pub fn hold_stacks(run: &mut Run, keep_pct: u64, mut seed: u64) {
    for k in 1..run.samples.len() {
        for i in 0..run.samples[k].threads.len() {
            seed ^= seed >> 12;
            seed ^= seed << 25;
            seed ^= seed >> 27;
            if seed.wrapping_mul(0x2545_F491_4F6C_DD1D) % 100 < keep_pct {
                let prev = run.samples[k - 1].threads[i];
                let cur = &mut run.samples[k].threads[i];
                cur.stack = prev.stack;
                cur.state = prev.state;
            }
        }
    }
}
