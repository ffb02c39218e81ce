//! How strongly a thread's stack touches an object, for the inferred wake edges (see the
//! parent's "Wake edges, and their evidence").

use super::*;

/// How strongly a thread's stack touches an object: 2 inside a releasing function of its type
/// ([`releases`]), 1 in the code of its wait site (a frame of the same class or function), 0 not
/// at all. Answered from what each stack holds, found once: the types its frames release, and per
/// scope asked about, whether any of its frames is in that scope (shared by the threads that
/// find edges).
pub(super) struct Touching<'r> {
    pub(super) run: &'r Run,
    /// Per stack, the [`RELEASED`] types some frame of it releases, as bits.
    pub(super) releases: Vec<u8>,
    /// Per function, its scope.
    pub(super) scopes: Vec<Scope>,
    /// Per object, the bit of its type in [`RELEASED`] (none: no function releases it).
    pub(super) released_bit: Vec<Option<u8>>,
    /// Per scope asked about, per stack (bits), whether one of its frames is in that scope.
    pub(super) in_scope: Mutex<FastMap<Scope, Arc<Vec<u64>>>>,
}

/// The types [`releases`] knows releasing functions of, in the order of their bits.
pub(super) const RELEASED: [&str; 4] = ["threading.Condition", "threading.Event", "threading.Semaphore", "queue.Queue"];

impl<'r> Touching<'r> {
    pub(super) fn new(run: &'r Run, objects: &[ObjInfo]) -> Self {
        let released_by: Vec<u8> = run
            .functions
            .iter()
            .map(|func| {
                let (path, q) = (run.file_path(func.file), run.str(func.qualname));
                RELEASED.iter().enumerate().filter(|(_, t)| releases(t, path, q)).fold(0u8, |m, (i, _)| m | 1 << i)
            })
            .collect();
        let own = |s: usize| released_by[run.frames[run.stacks[s].frame as usize].function as usize];
        let mut releases: Vec<u8> = Vec::with_capacity(run.stacks.len());
        for s in 0..run.stacks.len() {
            let parent = match run.stacks[s].parent {
                Some(p) if (p as usize) < s => releases[p as usize],
                Some(p) => frame_ids(run, p).fold(0, |m, f| m | released_by[run.frames[f as usize].function as usize]),
                None => 0,
            };
            releases.push(own(s) | parent);
        }
        let scopes = run.functions.iter().enumerate().map(|(i, func)| func.class.map_or(Scope::Function(i as u32), Scope::Class)).collect();
        let released_bit = objects.iter().map(|o| RELEASED.iter().position(|t| *t == o.type_name).map(|i| i as u8)).collect();
        Touching { run, releases, scopes, released_bit, in_scope: Mutex::new(FastMap::default()) }
    }

    /// The weight of `stack` for object `obj` (`info`); `last` is the caller's last scope asked
    /// about and its bits (one wait's candidates all ask about one scope).
    pub(super) fn weight(&self, last: &mut Option<(Scope, Arc<Vec<u64>>)>, stack: StackId, obj: u32, info: &ObjInfo) -> u32 {
        if let Some(bit) = self.released_bit[obj as usize] {
            if self.releases[stack as usize] & 1 << bit != 0 {
                return 2;
            }
        }
        if info.scope == Scope::None || !info.user {
            return 0;
        }
        if last.as_ref().is_none_or(|l| l.0 != info.scope) {
            *last = Some((info.scope, self.scope_bits(info.scope)));
        }
        let bits = &last.as_ref().expect("just set").1;
        (bits[stack as usize / 64] >> (stack % 64) & 1) as u32
    }

    /// Per stack (bits), whether one of its frames is in `scope`; found once per scope.
    pub(super) fn scope_bits(&self, scope: Scope) -> Arc<Vec<u64>> {
        let (run, scopes) = (self.run, &self.scopes);
        // A poisoned lock only means another thread panicked, which ends the view anyway.
        let mut found = self.in_scope.lock().unwrap_or_else(|e| e.into_inner());
        let bits = found.entry(scope).or_insert_with(|| {
            let in_it = |f: FrameId| scopes[run.frames[f as usize].function as usize] == scope;
            let mut bits = vec![0u64; run.stacks.len().div_ceil(64)];
            for s in 0..run.stacks.len() {
                let node = &run.stacks[s];
                let yes = in_it(node.frame)
                    || match node.parent {
                        Some(p) if (p as usize) < s => bits[p as usize / 64] >> (p % 64) & 1 != 0,
                        Some(p) => frame_ids(run, p).any(in_it),
                        None => false,
                    };
                if yes {
                    bits[s / 64] |= 1 << (s % 64);
                }
            }
            Arc::new(bits)
        });
        bits.clone()
    }
}

pub(super) fn type_in_threading(q: &str) -> Option<&'static str> {
    let pre = q.split('.').next().unwrap_or("");
    Some(match pre {
        "Condition" => "threading.Condition",
        "Event" => "threading.Event",
        "Semaphore" | "BoundedSemaphore" => "threading.Semaphore",
        "Barrier" => "threading.Barrier",
        "Thread" if q == "Thread.join" || q == "Thread._wait_for_tstate_lock" => "thread join",
        _ => return None,
    })
}

/// Whether `qualname` in `path` is a function that releases waiters of `type_name`.
pub(super) fn releases(type_name: &str, path: &str, q: &str) -> bool {
    match type_name {
        "threading.Condition" => path.ends_with("/threading.py") && matches!(q, "Condition.notify" | "Condition.notify_all" | "Condition.__exit__" | "Condition._release_save"),
        "threading.Event" => path.ends_with("/threading.py") && matches!(q, "Event.set" | "Condition.notify_all"),
        "threading.Semaphore" => path.ends_with("/threading.py") && matches!(q, "Semaphore.release" | "BoundedSemaphore.release"),
        "queue.Queue" => path.ends_with("/queue.py") && matches!(q, "Queue.put" | "Queue.put_nowait" | "Queue.get" | "Queue.get_nowait" | "Queue.task_done" | "Queue._put"),
        _ => false,
    }
}
