//! The waits view's wake edges counted by evidence (the whole view's and each object's) and its
//! wait ends counted by source: the figures behind every client's "edges: k kernel-exact, i
//! inferred (…)" line and its objects' evidence column, so that no client counts them.

use crate::waits::{Evidence, WaitsView};
use serde::Serialize;

/// Edges of one kind of evidence.
#[derive(Clone, Debug, PartialEq, Serialize, ts_rs::TS)]
pub struct EvidenceCount {
    pub evidence: Evidence,
    pub count: u32,
}

/// Wake edges counted by their evidence.
#[derive(Clone, Debug, Default, PartialEq, Serialize, ts_rs::TS)]
pub struct EdgeCounts {
    pub all: u32,
    /// Measured by the kernel, exact: its scheduler's wake-ups, and the lock hand-offs of
    /// `record --exact-locks` (evidence `lock-event`).
    pub kernel: u32,
    /// Read from recorded program state, not inferred: an asyncio task's await of another task
    /// (evidence `task-state`).
    pub recorded: u32,
    /// Inferred from samples (`all − kernel − recorded`).
    pub inferred: u32,
    /// The inferred ones by rule, in the order of [`Evidence`]; rules without an edge left out.
    pub inferred_by: Vec<EvidenceCount>,
}

/// The counts of a [`WaitsView`].
#[derive(Clone, Debug, Default, PartialEq, Serialize, ts_rs::TS)]
pub struct WaitCounts {
    /// Every edge the view lists.
    pub edges: EdgeCounts,
    /// Per object, in the order of the view's `objects`.
    pub objects: Vec<EdgeCounts>,
    /// Starts and ends of the listed waits (two per wait), and those that are the kernel's.
    pub ends: u32,
    pub kernel_ends: u32,
}

impl EdgeCounts {
    fn add(&mut self, e: Evidence) {
        self.all += 1;
        if e.is_exact() {
            self.kernel += 1;
            return;
        }
        if e.is_recorded() {
            self.recorded += 1;
            return;
        }
        self.inferred += 1;
        match self.inferred_by.binary_search_by(|c| c.evidence.cmp(&e)) {
            Ok(i) => self.inferred_by[i].count += 1,
            Err(i) => self.inferred_by.insert(i, EvidenceCount { evidence: e, count: 1 }),
        }
    }
}

/// Counts the view's edges (all, and per object) and wait ends.
pub fn count(view: &WaitsView) -> WaitCounts {
    let mut c = WaitCounts { objects: vec![EdgeCounts::default(); view.objects.len()], ..WaitCounts::default() };
    for e in &view.edges {
        c.edges.add(e.evidence);
        if let Some(o) = c.objects.get_mut(e.object_index as usize) {
            o.add(e.evidence);
        }
    }
    c.ends = 2 * view.intervals.len() as u32;
    c.kernel_ends = view.intervals.iter().map(|w| w.kernel_start as u32 + w.kernel_end as u32).sum();
    c
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inferred_rules_are_counted_in_the_order_of_evidence() {
        let mut c = EdgeCounts::default();
        for e in [Evidence::SameObject, Evidence::Kernel, Evidence::GilHolder, Evidence::SameObject] {
            c.add(e);
        }
        assert_eq!((c.all, c.kernel, c.inferred), (4, 1, 3));
        let by: Vec<_> = c.inferred_by.iter().map(|x| (x.evidence, x.count)).collect();
        assert_eq!(by, [(Evidence::GilHolder, 1), (Evidence::SameObject, 2)]);
    }
}
