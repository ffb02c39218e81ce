//! `waits_groups` (issue 32) on a view written out by hand: which objects share a group, what each
//! matrix cell counts, and when the edges separate.

use std::collections::BTreeMap;
use threadradar_analysis::waits::{Evidence, EvidenceAvailable, Location, ObjectSummary, WaitInterval, WaitThread, WaitsView, WakeEdge, WakeKind};
use threadradar_analysis::waits_groups::{groups, SEPARATE_PX};

fn at(function: &str, line: u32) -> Option<Location> {
    Some(Location { file: "/p/app.py".into(), line, function: function.into() })
}

fn object(label: &str, type_name: &str, name: Option<&str>, frame: Option<Location>, waits: u64, wait_s: f64) -> ObjectSummary {
    ObjectSummary {
        object: label.into(),
        type_name: type_name.into(),
        name: name.map(str::to_string),
        addr: None,
        identity: "recorded".into(),
        waits,
        wait_s,
        p50_s: 0.0,
        p95_s: 0.0,
        waiters: BTreeMap::new(),
        wakers: BTreeMap::new(),
        futile_wakeups: 0,
        lock_handoffs: 0,
        radar: Vec::new(),
        waiter_types: 1,
        frame,
    }
}

fn wait(thread: u32, object: u32, start_s: f64, end_s: f64) -> WaitInterval {
    WaitInterval { thread, object, start_s, end_s, kernel_start: false, kernel_end: false, samples: 2, syscall: None, frame: None, open: false, futile: false }
}

fn edge(time_s: f64, waker: u32, wakee: u32, object: u32, interval: u32, evidence: Evidence, futile: bool) -> WakeEdge {
    WakeEdge {
        time_s,
        waker_thread: waker,
        wakee_thread: wakee,
        waker: format!("t{waker}"),
        wakee: format!("t{wakee}"),
        object: String::new(),
        object_index: object,
        interval,
        evidence,
        confidence: 1.0,
        futile,
        kind: WakeKind::Wake,
        waker_frame: None,
        exact: None,
    }
}

/// Objects: two Futures waited on in `Worker.run` (lines 10 and 12), a named queue at line 20 and
/// an anonymous lock at the same line (its inner lock), a lock elsewhere, the GIL.
fn view() -> WaitsView {
    let objects = vec![
        object("concurrent.futures.Future at 0x1", "concurrent.futures.Future", Some("fut"), at("Worker.run", 10), 3, 0.3),
        object("concurrent.futures.Future at 0x2", "concurrent.futures.Future", Some("fut"), at("Worker.run", 12), 1, 0.1),
        object("queue.Queue self.jobs", "queue.Queue", Some("self.jobs"), at("Worker.take", 20), 2, 2.0),
        object("lock at 0x9", "_thread.lock", None, at("Worker.take", 20), 1, 0.5),
        object("lock in Stats", "lock", None, at("Stats.add", 30), 1, 0.01),
        object("GIL", "GIL", None, None, 1, 0.001),
        object("unknown self.jobs", "unknown", Some("self.jobs"), at("Worker.put", 40), 1, 0.2),
    ];
    let intervals = vec![
        wait(1, 0, 0.0, 0.1),
        wait(2, 0, 0.1, 0.2),
        wait(1, 0, 0.2, 0.3),
        wait(1, 1, 0.3, 0.4),
        wait(2, 2, 0.0, 1.0),
        wait(1, 2, 1.0, 2.0),
        wait(2, 3, 2.0, 2.5),
        wait(3, 4, 0.0, 0.01),
        wait(3, 5, 0.5, 0.501),
        wait(3, 6, 1.0, 1.2),
    ];
    let edges = vec![
        edge(0.1, 0, 1, 0, 0, Evidence::Kernel, false),
        edge(0.2, 0, 2, 0, 1, Evidence::Kernel, false),
        edge(0.25, 0, 1, 0, 2, Evidence::Kernel, true),
        edge(0.3, 0, 1, 0, 2, Evidence::SameObject, false),
        edge(0.4, 0, 1, 1, 3, Evidence::Kernel, false),
        edge(1.0, 0, 2, 2, 4, Evidence::Kernel, false),
        edge(2.5, 1, 2, 3, 6, Evidence::Kernel, false),
    ];
    let threads = (0..4).map(|id| WaitThread { id, name: format!("t{id}"), thread_type: "Thread".into() }).collect();
    WaitsView { started_at: None, period_s: 0.001, evidence: EvidenceAvailable::default(), threads, objects, intervals, edges }
}

#[test]
fn futures_at_one_site_are_one_group_and_an_inner_lock_joins_its_queue() {
    let v = view();
    let g = groups(&v, None);
    assert_eq!(g.group_of.len(), v.objects.len());
    // The two Futures: one group, labelled by type, name, count and site.
    assert_eq!(g.group_of[0], g.group_of[1]);
    let futures = &g.groups[g.group_of[0] as usize];
    assert_eq!(futures.label, "concurrent.futures.Future fut ×2 in Worker.run");
    assert_eq!((futures.waits, futures.objects.len()), (4, 2));
    // The anonymous lock waited on at the queue's line is the queue's, and says so.
    assert_eq!(g.group_of[2], g.group_of[3]);
    let queue = &g.groups[g.group_of[2] as usize];
    assert_eq!(queue.label, "queue.Queue self.jobs");
    // So is the object of unknown type named `self.jobs` in another method of the same class.
    assert_eq!(g.group_of[6], g.group_of[2]);
    assert_eq!(queue.objects, vec![2, 3, 6]);
    assert_eq!(queue.merged.len(), 2);
    assert!(queue.merged.iter().any(|m| m.contains("lock at 0x9") && m.contains("inner lock") && m.contains("inferred")), "{:?}", queue.merged);
    assert!(queue.merged.iter().any(|m| m.contains("unknown self.jobs") && m.contains("same class")), "{:?}", queue.merged);
    // A lock elsewhere and the GIL stay by themselves: four groups, most wait time first.
    assert_eq!(g.groups.len(), 4);
    assert!(g.groups.windows(2).all(|w| w[0].wait_s >= w[1].wait_s));
    assert_eq!(g.groups[0].label, "queue.Queue self.jobs");
}

#[test]
fn a_matrix_counts_wake_ups_futile_ones_evidence_and_the_wait_they_ended() {
    let v = view();
    let g = groups(&v, None);
    let futures = &g.groups[g.group_of[0] as usize];
    assert_eq!((futures.kernel_edges, futures.inferred_edges), (4, 1));
    assert_eq!(futures.wakers, vec![0]);
    assert_eq!(futures.wakees, vec![1, 2]);
    let cell = |waker, wakee| futures.cells.iter().find(|c| c.waker == waker && c.wakee == wakee).unwrap();
    let c = cell(0, 1);
    assert_eq!((c.count, c.futile, c.kernel), (4, 1, 3));
    // The non-futile wake-ups ended waits 0, 2 and 3: 0.1 + 0.1 + 0.1 s.
    assert!((c.wait_s - 0.3).abs() < 1e-9, "{}", c.wait_s);
    assert_eq!((c.first_s, c.last_s), (0.1, 0.4));
    assert_eq!(cell(0, 2).count, 1);
    // Every wait some edge ended is explained; the lock's and the GIL's are not.
    assert_eq!(futures.unexplained, 0);
    assert_eq!(g.groups.iter().map(|x| x.unexplained).sum::<u64>(), 4, "the queue's waits 5 and 9, the lock's and the GIL's");
    // Cells add up to the group's edges, for every group.
    for x in &g.groups {
        assert_eq!(x.cells.iter().map(|c| c.count).sum::<u64>(), x.kernel_edges + x.inferred_edges, "{}", x.label);
    }
    // Every thread named by a group or a wait is listed once.
    assert_eq!(g.threads.iter().map(|t| t.id).collect::<Vec<_>>(), vec![0, 1, 2, 3]);
}

#[test]
fn edges_separate_when_zoomed_to_where_they_are_apart() {
    let v = view();
    // The closest two edges of one lane pair (t0 → t1) are 50 ms apart (0.25, 0.3).
    let whole = groups(&v, Some((100, 0.0, 2.5)));
    assert_eq!(whole.separate, Some(false), "50 ms on 100 px over 2.5 s is 2 px");
    let below = whole.separate_below_s.unwrap();
    assert!((below - 0.05 * 100.0 / SEPARATE_PX).abs() < 1e-9, "{below}");
    let zoomed = groups(&v, Some((100, 0.0, below * 0.9)));
    assert_eq!(zoomed.separate, Some(true));
    assert_eq!(groups(&v, None).separate, None);
}
