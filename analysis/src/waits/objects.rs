//! The objects of the waits view: each wait's object (recorded, or inferred from the stack: a
//! wait site), one entry per object, their labels and the merging of sites (see the parent's
//! "Wait intervals").

use super::touching::type_in_threading;
use super::*;

pub(super) struct Builder<'r> {
    pub(super) run: &'r Run,
    pub(super) objects: Vec<ObjInfo>,
    pub(super) index: HashMap<Key, u32>,
    pub(super) stdlib_cache: FastMap<StackId, (Option<FrameId>, &'static str, bool)>,
}

impl<'r> Builder<'r> {
    pub(super) fn object(&mut self, key: Key, make: impl FnOnce() -> ObjInfo) -> u32 {
        if let Some(&i) = self.index.get(&key) {
            // An object first seen from a stack without the program's code (a thread sampled
            // while starting, or waiting inside the library) takes its site from the first
            // sample that shows where the program waits on it. A site's key is its scope.
            if !self.objects[i as usize].user && matches!(key, Key::Addr(..) | Key::Target(_)) {
                let seen = make();
                if seen.user {
                    let o = &mut self.objects[i as usize];
                    (o.scope, o.frame, o.user) = (seen.scope, seen.frame, true);
                }
            }
            return i;
        }
        let i = self.objects.len() as u32;
        self.objects.push(make());
        self.index.insert(key, i);
        i
    }

    /// For each object, the object it is: itself, or for a wait site, the one recorded object
    /// of the same type in the same scope (class or function) when there is exactly one.
    pub(super) fn merge_sites(&self) -> Vec<u32> {
        let mut recorded: HashMap<(&str, Scope), Vec<u32>> = HashMap::new();
        for (i, o) in self.objects.iter().enumerate() {
            if matches!(o.key, Key::Addr(..)) && o.scope != Scope::None {
                recorded.entry((o.type_name.as_str(), o.scope)).or_default().push(i as u32);
            }
        }
        (0..self.objects.len() as u32)
            .map(|i| {
                let o = &self.objects[i as usize];
                match (&o.key, recorded.get(&(o.type_name.as_str(), o.scope)).map(Vec::as_slice)) {
                    (Key::Site(..), Some([only])) => *only,
                    _ => i,
                }
            })
            .collect()
    }

    pub(super) fn gil(&mut self, pid: u32) -> u32 {
        self.object(Key::Gil(pid), || ObjInfo { key: Key::Gil(pid), type_name: "GIL".into(), name: None, addr: None, scope: Scope::None, frame: None, user: false })
    }

    /// The object a sample waits on and its waiting frame; `(None, _)` when it does not wait.
    pub(super) fn classify(&mut self, ts: &ThreadSample) -> (Option<u32>, Option<FrameId>) {
        let (frame, kind, user) = match ts.stack {
            Some(s) => self.stack_info(s),
            None => (None, "lock", false),
        };
        let run = self.run;
        let pid = run.threads.get(ts.thread as usize).map_or(0, |t| t.pid);
        let scope = frame.map_or(Scope::None, |f| {
            let func = &run.functions[run.frames[f as usize].function as usize];
            func.class.map_or(Scope::Function(run.frames[f as usize].function), Scope::Class)
        });
        let io = |c: &str| {
            matches!(
                c,
                "read" | "write" | "pread64" | "poll" | "ppoll" | "select" | "pselect6" | "epoll_wait" | "epoll_pwait" | "epoll_pwait2" | "accept"
                    | "accept4" | "connect" | "recvfrom" | "recvmsg" | "sendto" | "sendmsg"
            )
        };
        if let (Some(w), false) = (ts.wait, ts.state == ThreadState::Computing) {
            if let Some(target) = run.waits.get(w as usize) {
                let call = run.str(target.syscall);
                if matches!(call, "nanosleep" | "clock_nanosleep" | "pause") {
                    return (None, frame);
                }
                if let Some(obj) = &target.object {
                    let type_name = run.str(obj.type_name).to_string();
                    if type_name == "GIL" {
                        return (Some(self.gil(pid)), frame);
                    }
                    let key = Key::Addr(pid, obj.addr, Some(type_name.clone()));
                    let name = obj.name.map(|n| run.str(n).to_string());
                    let of = obj.frame.or(frame);
                    let o = self.object(key.clone(), || ObjInfo { key, type_name, name, addr: Some(obj.addr), scope, frame: of, user });
                    return (Some(o), frame);
                }
                if ts.state == ThreadState::Gil || call == "GIL" {
                    return (Some(self.gil(pid)), frame);
                }
                // A futex identifies a lock; a condition's (and so an event's or a queue's)
                // futex is a fresh waiter lock per wait, so those fall back to the wait site.
                if let (Some(addr), "lock") = (target.futex, kind) {
                    let key = Key::Addr(pid, addr, None);
                    let type_name = kind.to_string();
                    let o = self.object(key.clone(), || ObjInfo { key, type_name, name: None, addr: Some(addr), scope, frame, user });
                    return (Some(o), frame);
                }
                if let Some(t) = target.fd_target {
                    let key = Key::Target(run.str(t).to_string());
                    let type_name = format!("I/O ({call})");
                    let o = self.object(key.clone(), || ObjInfo { key, type_name, name: None, addr: None, scope, frame, user });
                    return (Some(o), frame);
                }
            }
        }
        match ts.state {
            // Blocking I/O counts as computing for the metrics (the paper's `Runnable`), but it
            // is a wait for whoever writes the other end: the descriptor's target when recorded
            // (`pipe:[123]`, `socket:[456]`, a path: one object system-wide), else the site.
            ThreadState::Computing => match ts.blocked.map(|c| run.str(c)) {
                Some(c) if io(c) => {
                    if let Some(t) = ts.wait.and_then(|w| run.waits.get(w as usize)).and_then(|w| w.fd_target) {
                        let key = Key::Target(run.str(t).to_string());
                        let type_name = format!("I/O ({c})");
                        let o = self.object(key.clone(), || ObjInfo { key, type_name, name: None, addr: None, scope, frame, user });
                        return (Some(o), frame);
                    }
                    let type_name = format!("I/O ({c})");
                    let key = Key::Site(type_name.clone(), scope);
                    let o = self.object(key.clone(), || ObjInfo { key, type_name, name: None, addr: None, scope, frame, user });
                    (Some(o), frame)
                }
                _ => (None, frame),
            },
            ThreadState::Gil => (Some(self.gil(pid)), frame),
            ThreadState::Idle => {
                let call = ts.blocked.map(|c| run.str(c));
                let type_name = match call {
                    Some("nanosleep" | "clock_nanosleep" | "pause") => return (None, frame),
                    Some("futex") | None => kind.to_string(),
                    Some("wait4" | "waitid") => "child process".to_string(),
                    Some(c) if io(c) => format!("I/O ({c})"),
                    Some(c) => c.to_string(),
                };
                let key = Key::Site(type_name.clone(), scope);
                let o = self.object(key.clone(), || ObjInfo { key, type_name, name: None, addr: None, scope, frame, user });
                (Some(o), frame)
            }
        }
    }

    /// The waiting frame (innermost frame of the program's code) and the futex kind of a stack.
    pub(super) fn stack_info(&mut self, stack: StackId) -> (Option<FrameId>, &'static str, bool) {
        if let Some(&v) = self.stdlib_cache.get(&stack) {
            return v;
        }
        let run = self.run;
        let mut frame = None;
        let mut kind = None;
        for (i, f) in frame_ids(run, stack).enumerate() {
            let func = &run.functions[run.frames[f as usize].function as usize];
            let file = &run.files[func.file as usize];
            if file.kind == FileKind::User {
                frame = Some(f);
                break;
            }
            // The standard-library frame nearest the program's code names the type: `Queue.get`
            // calls `Condition.wait`, and the object is the queue.
            if i < 8 {
                let path = run.str(file.path);
                let q = run.str(func.qualname);
                let k = if path.ends_with("/queue.py") {
                    Some("queue.Queue")
                } else if path.ends_with("/threading.py") {
                    type_in_threading(q)
                } else {
                    None
                };
                kind = k.or(kind);
            }
        }
        let user = frame.is_some();
        let frame = frame.or_else(|| run.stacks.get(stack as usize).map(|n| n.frame));
        let v = (frame, kind.unwrap_or("lock"), user);
        self.stdlib_cache.insert(stack, v);
        v
    }

    /// ` (pid N)` when the run sampled more than one process, else nothing: the same address
    /// (or a GIL) in two processes is two objects.
    pub(super) fn of_process(&self, pid: u32) -> String {
        if self.run.processes.len() > 1 {
            format!(" (pid {pid})")
        } else {
            String::new()
        }
    }

    pub(super) fn label(&self, o: u32) -> String {
        let info = &self.objects[o as usize];
        let run = self.run;
        match &info.key {
            Key::Gil(pid) => format!("GIL{}", self.of_process(*pid)),
            Key::Site(t, scope) => match scope {
                Scope::Class(c) => format!("{t} in {}", run.str(*c)),
                Scope::Function(f) => format!("{t} in {}", run.qualname(*f)),
                Scope::None => t.clone(),
            },
            Key::Addr(pid, a, _) => match &info.name {
                Some(n) => format!("{} {n}{}", info.type_name, self.of_process(*pid)),
                None => format!("{} at {a:#x}{}", info.type_name, self.of_process(*pid)),
            },
            Key::Target(s) => format!("{} {s}", info.type_name),
        }
    }
}
