//! Waits at scale (SyncTrace's aggregation, paper 000 §IV-B2; issue 32): a [`WaitsView`]'s
//! objects grouped by type and site, each group's wake-ups as a waker → wakee matrix (counts,
//! futile ones, the wait time they ended, and by which evidence), and whether the view's edges
//! separate at a given width, so that a panel draws edges one by one only where they can be told
//! apart. Pure: a view goes in, a [`WaitsGroups`] comes out.
//!
//! # Groups
//!
//! - Objects of one type waited on at one site (the waiting frame's function and file) are one
//!   group: a program's `Future`s, each recorded at its own address, are one row.
//! - An anonymous lock (no name in the waiting code) waited on at the very line where a named
//!   object of the same group kind was waited on is that object's inner lock (a `SimpleQueue`'s,
//!   a `Queue`'s mutex): it joins the named object's group, and the group says so (`merged`).
//!   That is inferred from the shared line, and said as such.
//! - An object whose type could not be read (`unknown`) but whose name in the waiting code is that
//!   of an object of known type waited on in the same class (or function) joins that object's group (the
//!   same `self._monitor`, read once without its type), also said as inferred.
//! - The GIL is a group of its own per process, like any object.
//!
//! Lock hand-offs of kernel evidence (a condition's own lock passed on) are counted apart, as in
//! [`crate::waits::ObjectSummary`].

use crate::waits::{Location, WaitThread, WaitsView, WakeKind};
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};
use threadradar_profiler::run::ThreadId;
use ts_rs::TS;

/// One waker → wakee pair of a group.
#[derive(Clone, Debug, PartialEq, Serialize, TS)]
pub struct WakeCell {
    pub waker: ThreadId,
    pub wakee: ThreadId,
    /// Wake-ups (edges), futile ones included, lock hand-offs not.
    pub count: u64,
    /// Of which futile: the woken thread waited again on the same object.
    pub futile: u64,
    /// Kernel-exact edges among `count` (the rest are inferred).
    pub kernel: u64,
    /// The wait time the non-futile wake-ups ended (the wakee's waits, sampled or kernel-exact
    /// where their ends are), seconds.
    pub wait_s: f64,
    /// First and last wake-up, seconds since the run's start.
    pub first_s: f64,
    pub last_s: f64,
}

/// Objects of one type waited on at one site.
#[derive(Clone, Debug, PartialEq, Serialize, TS)]
pub struct ObjectGroup {
    /// `threading.Condition self._monitor`, `concurrent.futures.Future ×37 in Worker.run`.
    pub label: String,
    #[serde(rename = "type")]
    pub type_name: String,
    /// The name in the waiting code when every object of the group has the same one.
    pub name: Option<String>,
    /// Where the group was waited on first.
    pub site: Option<Location>,
    /// Indices into [`WaitsView::objects`], the named one first.
    pub objects: Vec<u32>,
    /// Objects that joined by inference, one sentence each (an anonymous lock waited on at the
    /// same line as a named object: its inner lock).
    pub merged: Vec<String>,
    pub waits: u64,
    pub wait_s: f64,
    pub futile_wakeups: u64,
    pub lock_handoffs: u64,
    /// Waits no edge ended (no evidence of a waker); open waits included.
    pub unexplained: u64,
    /// Kernel-exact, recorded (asyncio tasks' awaits) and inferred edges (lock hand-offs not
    /// counted).
    pub kernel_edges: u64,
    pub recorded_edges: u64,
    pub inferred_edges: u64,
    /// The threads that woke it and that it woke, most wake-ups first: the matrix's rows and
    /// columns.
    pub wakers: Vec<ThreadId>,
    pub wakees: Vec<ThreadId>,
    /// The non-empty cells of the matrix, most wake-ups first.
    pub cells: Vec<WakeCell>,
}

/// The view's objects as groups, and whether its edges separate.
#[derive(Clone, Debug, PartialEq, Serialize, TS)]
pub struct WaitsGroups {
    /// Most wait time first.
    pub groups: Vec<ObjectGroup>,
    /// Per object of the view, its group (index into `groups`).
    pub group_of: Vec<u32>,
    /// Every thread a group names (wakers that never waited included).
    pub threads: Vec<WaitThread>,
    /// At the width asked for, the edges can be drawn one by one: all but [`CROWDED_SHARE`] of
    /// them are at least `separate_px` from the previous edge of their lane pair. `None` without
    /// a width.
    pub separate: Option<bool>,
    /// The pixel distance that counts as separate.
    pub separate_px: f64,
    /// The narrowest time range (seconds) over which the edges' densest stretch would separate
    /// at that width: zoom to this or less.
    pub separate_below_s: Option<f64>,
}

/// Pixels between two edges of one lane pair for them to be drawn one by one.
pub const SEPARATE_PX: f64 = 4.0;

fn is_anonymous_lock(type_name: &str, name: Option<&str>) -> bool {
    name.is_none() && matches!(type_name, "lock" | "_thread.lock" | "_thread.RLock" | "threading.Lock" | "threading.RLock" | "futex" | "RLock")
}

/// Groups `view`'s objects; `width`: the panel's time axis in pixels and the range it shows
/// (seconds), to say whether the edges separate there.
pub fn groups(view: &WaitsView, width: Option<(u32, f64, f64)>) -> WaitsGroups {
    let objects = &view.objects;
    // Site key: the waiting frame's function and file (the line is not part of it: one function
    // may wait on its futures at several lines).
    let site_of = |i: usize| objects[i].frame.as_ref().map(|f| (f.function.clone(), f.file.clone()));
    let line_of = |i: usize| objects[i].frame.as_ref().map(|f| (f.function.clone(), f.file.clone(), f.line));
    let mut key_of: Vec<Option<usize>> = vec![None; objects.len()];
    let mut keys: Vec<(String, Option<(String, String)>, Option<String>)> = Vec::new();
    let mut index: HashMap<(String, Option<(String, String)>, Option<String>), usize> = HashMap::new();
    let mut merged: BTreeMap<usize, Vec<String>> = BTreeMap::new();
    // Named objects of known type first; then those that may join one: anonymous locks (at the
    // line of a named object), objects of unknown type (by their name, in the same function).
    let unknown = |i: usize| objects[i].type_name == "unknown" && objects[i].name.is_some();
    // The class of the waiting function (`Storage` of `Storage.take`), else the function, and
    // its file: where a name like `self._monitor` means one attribute.
    let scope_of = |i: usize| {
        objects[i].frame.as_ref().map(|f| (f.function.rsplit_once('.').map_or(f.function.as_str(), |(c, _)| c).to_string(), f.file.clone()))
    };
    let mut order: Vec<usize> = (0..objects.len()).collect();
    order.sort_by_key(|&i| is_anonymous_lock(&objects[i].type_name, objects[i].name.as_deref()) || unknown(i));
    let mut at_line: HashMap<(String, String, u32), usize> = HashMap::new();
    let mut by_name: HashMap<(String, Option<(String, String)>), usize> = HashMap::new();
    let short_site = |o: &crate::waits::ObjectSummary| o.frame.as_ref().map_or(String::new(), |f| format!("{}:{}", f.file.rsplit('/').next().unwrap_or(&f.file), f.line));
    for i in order {
        let o = &objects[i];
        let anon = is_anonymous_lock(&o.type_name, o.name.as_deref());
        if unknown(i) {
            if let Some(&g) = by_name.get(&(o.name.clone().unwrap_or_default(), scope_of(i))) {
                key_of[i] = Some(g);
                merged.entry(g).or_default().push(format!("{} (its type was not read; the same name waited on in the same class, {}: taken as the same object, inferred)", o.object, short_site(o)));
                continue;
            }
        }
        if anon && o.type_name != "GIL" {
            if let Some(g) = line_of(i).and_then(|l| at_line.get(&l).copied()) {
                key_of[i] = Some(g);
                merged.entry(g).or_default().push(format!("{} (waited on at the same line, {}: taken as its inner lock, inferred)", o.object, short_site(o)));
                continue;
            }
        }
        // The GIL and recorded objects without a site stay by themselves (their label).
        let name_part = if o.type_name == "GIL" || o.frame.is_none() { Some(o.object.clone()) } else { None };
        let k = (o.type_name.clone(), site_of(i), name_part);
        let g = *index.entry(k.clone()).or_insert_with(|| {
            keys.push(k);
            keys.len() - 1
        });
        key_of[i] = Some(g);
        if !anon {
            if let Some(l) = line_of(i) {
                at_line.entry(l).or_insert(g);
            }
            if let (Some(n), false) = (&o.name, unknown(i)) {
                by_name.entry((n.clone(), scope_of(i))).or_insert(g);
            }
        }
    }
    let mut members: Vec<Vec<u32>> = vec![Vec::new(); keys.len()];
    for (i, g) in key_of.iter().enumerate() {
        members[g.expect("every object has a group")].push(i as u32);
    }
    // The objects the group is named by first, those that joined it after.
    for m in &mut members {
        m.sort_by_key(|&i| is_anonymous_lock(&objects[i as usize].type_name, objects[i as usize].name.as_deref()) || unknown(i as usize));
    }

    let mut out: Vec<ObjectGroup> = members
        .iter()
        .enumerate()
        .map(|(g, objs)| {
            let first = objs[0] as usize;
            let o = &objects[first];
            let same_name = objs.iter().all(|&j| objects[j as usize].name == o.name);
            let name = if same_name { o.name.clone() } else { None };
            let distinct = objs.len() - merged.get(&g).map_or(0, Vec::len);
            let label = if distinct == 1 {
                o.object.clone()
            } else {
                let site = o.frame.as_ref().map_or(String::new(), |f| format!(" in {}", f.function));
                match &name {
                    Some(n) => format!("{} {n} ×{distinct}{site}", o.type_name),
                    None => format!("{} ×{distinct}{site}", o.type_name),
                }
            };
            ObjectGroup {
                label,
                type_name: o.type_name.clone(),
                name,
                site: o.frame.clone(),
                objects: objs.clone(),
                merged: merged.remove(&g).unwrap_or_default(),
                waits: objs.iter().map(|&j| objects[j as usize].waits).sum(),
                wait_s: objs.iter().map(|&j| objects[j as usize].wait_s).sum(),
                futile_wakeups: objs.iter().map(|&j| objects[j as usize].futile_wakeups).sum(),
                lock_handoffs: objs.iter().map(|&j| objects[j as usize].lock_handoffs).sum(),
                unexplained: 0,
                kernel_edges: 0,
                recorded_edges: 0,
                inferred_edges: 0,
                wakers: Vec::new(),
                wakees: Vec::new(),
                cells: Vec::new(),
            }
        })
        .collect();
    let group_of: Vec<u32> = key_of.iter().map(|g| g.unwrap() as u32).collect();

    // The matrices.
    let mut cells: Vec<BTreeMap<(ThreadId, ThreadId), WakeCell>> = vec![BTreeMap::new(); out.len()];
    let mut ended = vec![false; view.intervals.len()];
    for e in &view.edges {
        let g = group_of[e.object_index as usize] as usize;
        if e.kind == WakeKind::LockHandoff {
            continue;
        }
        if !e.futile {
            if let Some(x) = ended.get_mut(e.interval as usize) {
                *x = true;
            }
        }
        if e.evidence.is_exact() {
            out[g].kernel_edges += 1;
        } else if e.evidence.is_recorded() {
            out[g].recorded_edges += 1;
        } else {
            out[g].inferred_edges += 1;
        }
        let c = cells[g].entry((e.waker_thread, e.wakee_thread)).or_insert(WakeCell {
            waker: e.waker_thread,
            wakee: e.wakee_thread,
            count: 0,
            futile: 0,
            kernel: 0,
            wait_s: 0.0,
            first_s: e.time_s,
            last_s: e.time_s,
        });
        c.count += 1;
        c.futile += e.futile as u64;
        c.kernel += e.evidence.is_exact() as u64;
        if !e.futile {
            if let Some(w) = view.intervals.get(e.interval as usize) {
                c.wait_s += w.end_s - w.start_s;
            }
        }
        c.first_s = c.first_s.min(e.time_s);
        c.last_s = c.last_s.max(e.time_s);
    }
    for (k, w) in view.intervals.iter().enumerate() {
        if !ended[k] {
            out[group_of[w.object as usize] as usize].unexplained += 1;
        }
    }
    let mut named: BTreeMap<ThreadId, WaitThread> = view.threads.iter().map(|t| (t.id, t.clone())).collect();
    for e in &view.edges {
        for (id, name) in [(e.waker_thread, &e.waker), (e.wakee_thread, &e.wakee)] {
            named.entry(id).or_insert_with(|| WaitThread { id, name: name.clone(), thread_type: String::new() });
        }
    }
    let mut used = std::collections::BTreeSet::new();
    for (g, m) in cells.into_iter().enumerate() {
        let mut list: Vec<WakeCell> = m.into_values().collect();
        list.sort_by(|a, b| b.count.cmp(&a.count).then(a.waker.cmp(&b.waker)).then(a.wakee.cmp(&b.wakee)));
        let rank = |pick: fn(&WakeCell) -> ThreadId| {
            let mut by: BTreeMap<ThreadId, u64> = BTreeMap::new();
            for c in &list {
                *by.entry(pick(c)).or_default() += c.count;
            }
            let mut v: Vec<(ThreadId, u64)> = by.into_iter().collect();
            v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
            v.into_iter().map(|x| x.0).collect::<Vec<_>>()
        };
        out[g].wakers = rank(|c| c.waker);
        out[g].wakees = rank(|c| c.wakee);
        used.extend(out[g].wakers.iter().chain(&out[g].wakees).copied());
        out[g].cells = list;
    }
    // Most wait time first; the group indices follow.
    let mut perm: Vec<usize> = (0..out.len()).collect();
    perm.sort_by(|&a, &b| out[b].wait_s.total_cmp(&out[a].wait_s).then(a.cmp(&b)));
    let mut new_index = vec![0u32; out.len()];
    for (new, &old) in perm.iter().enumerate() {
        new_index[old] = new as u32;
    }
    let mut slots: Vec<Option<ObjectGroup>> = out.into_iter().map(Some).collect();
    let groups: Vec<ObjectGroup> = perm.iter().map(|&i| slots[i].take().unwrap()).collect();
    let group_of = group_of.iter().map(|&g| new_index[g as usize]).collect();
    used.extend(view.intervals.iter().map(|w| w.thread));
    let threads = named.into_values().filter(|t| used.contains(&t.id)).collect();

    let (separate, separate_below_s) = match width {
        Some((px, from, to)) if px > 0 && to > from => {
            let (sep, below) = separation(view, px as f64, from, to);
            (Some(sep), below)
        }
        _ => (None, None),
    };
    WaitsGroups { groups, group_of, threads, separate, separate_px: SEPARATE_PX, separate_below_s }
}

/// Whether the edges in `from..to` drawn on `px` pixels keep [`SEPARATE_PX`] between two
/// consecutive ones of one lane pair — all but [`CROWDED_SHARE`] of them (a few edges at one
/// instant are told apart in the tooltip) —, and the range at which they would.
fn separation(view: &WaitsView, px: f64, from: f64, to: f64) -> (bool, Option<f64>) {
    let mut by_pair: HashMap<(ThreadId, ThreadId), Vec<f64>> = HashMap::new();
    for e in view.edges.iter().filter(|e| e.time_s >= from && e.time_s <= to) {
        by_pair.entry((e.waker_thread, e.wakee_thread)).or_default().push(e.time_s);
    }
    let mut gaps: Vec<f64> = Vec::new();
    for v in by_pair.values_mut() {
        v.sort_by(f64::total_cmp);
        gaps.extend(v.windows(2).map(|w| w[1] - w[0]));
    }
    if gaps.is_empty() {
        return (true, None);
    }
    gaps.sort_by(f64::total_cmp);
    // The gap all but CROWDED_SHARE of the gaps are at least.
    let k = ((gaps.len() as f64) * CROWDED_SHARE).floor() as usize;
    let gap = gaps[k.min(gaps.len() - 1)];
    if gap <= 0.0 {
        return (false, None);
    }
    let s_per_px = (to - from) / px;
    (gap / s_per_px >= SEPARATE_PX, Some(gap * px / SEPARATE_PX))
}

/// The share of a view's edges that may be closer than [`SEPARATE_PX`] to their lane pair's
/// previous one while the view still counts as separate.
pub const CROWDED_SHARE: f64 = 0.05;
