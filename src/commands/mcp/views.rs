//! The MCP tools of the panels' newer views — waits, critical sections, compare, the run history —
//! written as text from the protocol's own answers (`waits`, `sections`, `compare`, `runs`: the
//! JSON the panels receive), so an agent quotes the figures the user sees.
//!
//! Names in the answers come from the profiled program: control characters (a line break in a
//! thread name would forge a line of the answer) are shown as `?`.

use serde_json::Value;
use std::collections::BTreeMap;
use std::fmt::Write as _;

fn s<'a>(v: &'a Value, k: &str) -> &'a str {
    v[k].as_str().unwrap_or("")
}
fn f(v: &Value, k: &str) -> f64 {
    v[k].as_f64().unwrap_or(0.0)
}
fn u(v: &Value, k: &str) -> u64 {
    v[k].as_u64().unwrap_or(0)
}
fn arr<'a>(v: &'a Value, k: &str) -> &'a [Value] {
    v[k].as_array().map_or(&[], Vec::as_slice)
}

/// A name from the profiled program, safe on one line of text.
pub fn clean(name: &str) -> String {
    name.chars().map(|c| if c.is_control() { '?' } else { c }).collect()
}

/// Milliseconds as `threadradar sections` prints them.
pub(crate) use crate::commands::sections::ms;

fn location(v: &Value) -> String {
    if v.is_null() {
        return String::new();
    }
    format!(" at {}:{} in {}", clean(s(v, "file")), u(v, "line"), clean(s(v, "function")))
}

/// `waits`: the objects table and the busiest waker → wakee pairs.
pub fn waits(r: &Value, top: usize, object: Option<&str>) -> String {
    let view = &r["view"];
    let ev = &view["evidence"];
    let mut t = String::new();
    let how = if ev["kernel"].as_bool() == Some(true) {
        "wake-ups from the scheduler's own events (kernel-exact), waits from the samples"
    } else {
        "waits and wake-ups inferred from the samples (each end known to within one sampling interval)"
    };
    let _ = writeln!(t, "How: {how}; achieved sampling period {}.", ms(f(view, "period_s")));
    for n in arr(ev, "notes") {
        let _ = writeln!(t, "Note: {}", n.as_str().unwrap_or(""));
    }
    let objects = arr(view, "objects");
    if objects.is_empty() {
        match object {
            Some(o) => {
                let _ = writeln!(t, "No thread waited on an object matching {:?}: ask again without `object` to list them all.", clean(o));
            }
            None => {
                let _ = writeln!(t, "No thread waited on anything in this run (sleeps are not waits).");
            }
        }
        return t;
    }
    let _ = writeln!(t, "\nObjects waited on ({}), most waited first:", objects.len());
    for o in objects {
        let name = o["name"].as_str().map(|n| format!(" `{}`", clean(n))).unwrap_or_default();
        let counts = |k: &str| -> String {
            let mut m: Vec<(&String, u64)> = o[k].as_object().map(|m| m.iter().map(|(n, c)| (n, c.as_u64().unwrap_or(0))).collect()).unwrap_or_default();
            m.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
            if m.is_empty() {
                "none seen".into()
            } else {
                m.iter().map(|(n, c)| format!("{} {c}", clean(n))).collect::<Vec<_>>().join(", ")
            }
        };
        let _ = writeln!(
            t,
            "- {} (type {}{name}, {}){}: {} waits, {:.3} s waited, p50 {}, p95 {}, {} futile wake-ups; waiters (waits): {}; wakers (edges): {}",
            clean(s(o, "object")),
            clean(s(o, "type")),
            s(o, "identity"),
            location(&o["frame"]),
            u(o, "waits"),
            f(o, "wait_s"),
            ms(f(o, "p50_s")),
            ms(f(o, "p95_s")),
            u(o, "futile_wakeups"),
            counts("waiters"),
            counts("wakers"),
        );
    }
    // The busiest waker → wakee pairs per object and evidence, as `threadradar waits` lists them.
    let edges = arr(view, "edges");
    let mut pairs: BTreeMap<(String, String, String, String), (u64, f64, u64)> = BTreeMap::new();
    for e in edges {
        let p = pairs.entry((s(e, "object").into(), s(e, "waker").into(), s(e, "wakee").into(), s(e, "evidence").into())).or_default();
        p.0 += 1;
        p.1 += f(e, "confidence");
        p.2 += e["futile"].as_bool().unwrap_or(false) as u64;
    }
    let mut pairs: Vec<_> = pairs.into_iter().collect();
    pairs.sort_by(|a, b| b.1 .0.cmp(&a.1 .0).then(a.0.cmp(&b.0)));
    let _ = writeln!(t, "\n{} wake edges (who ended whose wait); the busiest {} waker → wakee pairs:", edges.len(), top.min(pairs.len()));
    for ((object, waker, wakee, evidence), (n, conf, futile)) in pairs.into_iter().take(top) {
        let _ = writeln!(
            t,
            "- {} → {} on {}: {n} edges, evidence {evidence}, mean confidence {:.2}, {futile} futile",
            clean(&waker),
            clean(&wakee),
            clean(&object),
            conf / n as f64
        );
    }
    t
}

/// `sections`: each critical section's figures and its outliers.
pub fn sections(r: &Value, top: usize) -> String {
    let mut t = String::new();
    let _ = writeln!(t, "How: {}", s(r, "how"));
    if let Some(c) = r["config_file"].as_str() {
        let _ = writeln!(t, "Configuration: {}", clean(c));
    }
    for n in arr(r, "notes") {
        let _ = writeln!(t, "Note: {}", n.as_str().unwrap_or(""));
    }
    let list = arr(r, "sections");
    if list.is_empty() {
        let _ = writeln!(t, "No critical sections found in the program's own code (rules and configuration: docs/sections.md).");
        return t;
    }
    for sec in list {
        let ty = sec["lock_type"].as_str().map(|x| format!(" ({})", clean(x))).unwrap_or_default();
        let _ = writeln!(t, "\n{}:{}-{} in {}: lock {}{ty}, {}", clean(s(sec, "file")), u(sec, "line"), u(sec, "end_line"), clean(s(sec, "function")), clean(s(sec, "lock")), s(sec, "kind"));
        let objects: Vec<String> = arr(sec, "lock_objects").iter().map(|o| format!("{} at {}", clean(s(o, "type_name")), clean(s(o, "address")))).collect();
        if !objects.is_empty() {
            let _ = writeln!(t, "  threads waited on {}", objects.join(", "));
        }
        let n = u(sec, "execution_count");
        if n == 0 {
            let _ = writeln!(t, "  never seen executing: not executed, or every execution fell between samples");
            continue;
        }
        let execs = arr(sec, "executions");
        let _ = writeln!(
            t,
            "  {n} executions ({} listed, at least {} shorter than about one interval), held {} in total, median {}, p95 {}, p99 {}, max {}, CV {:.2}",
            execs.len(),
            u(&sec["short"], "count_at_least"),
            ms(f(sec, "total_hold_s")),
            ms(f(sec, "median_s")),
            ms(f(sec, "p95_s")),
            ms(f(sec, "p99_s")),
            ms(f(sec, "max_s")),
            f(sec, "cv")
        );
        let _ = writeln!(t, "  others waited {} in total to enter; waiters present in {:.0}% of the held samples", ms(f(sec, "others_waited_s")), 100.0 * f(sec, "waited_share"));
        let outliers = arr(sec, "outliers");
        if outliers.is_empty() {
            let _ = writeln!(t, "  no outliers (threshold {})", ms(f(sec, "outlier_threshold_s")));
            continue;
        }
        let _ = writeln!(t, "  {} outliers (longer than {}), longest first:", outliers.len(), ms(f(sec, "outlier_threshold_s")));
        let mut shown: Vec<(u64, &Value)> = outliers.iter().filter_map(|i| i.as_u64()).filter_map(|i| execs.get(i as usize).map(|e| (i, e))).collect();
        shown.sort_by(|a, b| f(b.1, "duration_s").total_cmp(&f(a.1, "duration_s")).then(a.0.cmp(&b.0)));
        for (i, e) in shown.iter().take(top) {
            let wait = e["wait_s"].as_f64().map(|w| format!(", waited {} to enter", ms(w))).unwrap_or_default();
            let _ = writeln!(
                t,
                "  - execution #{i} by {} at {:.3} s: {} ± {}{wait}, {} others waiting",
                clean(s(e, "thread")),
                f(e, "start_s"),
                ms(f(e, "duration_s")),
                ms(f(e, "error_s")),
                arr(e, "waiters").len()
            );
        }
        if shown.len() > top {
            let _ = writeln!(t, "  … {} more outliers (ask with a larger `top`)", shown.len() - top);
        }
    }
    t
}

fn pct(x: f64) -> String {
    format!("{:.1}%", 100.0 * x)
}

fn radar(g: &Value) -> String {
    g.as_array().map_or(Vec::new(), |cells| cells.iter().map(|c| s(c, "text").to_string()).collect()).join(" ")
}

fn side(v: &Value) -> String {
    format!(
        "{} ({}): {} samples over {:.2} s, {} threads; counted {} ({:.2} s)",
        clean(s(v, "path")),
        clean(&arr(v, "command").iter().filter_map(Value::as_str).collect::<Vec<_>>().join(" ")),
        u(v, "sample_count"),
        f(v, "duration_s"),
        u(v, "thread_count"),
        s(v, "states"),
        f(v, "seconds")
    )
}

/// `compare`: what changed in words, then per artifact before → after.
pub fn compare(c: &Value) -> String {
    let mut t = String::new();
    let (b, n) = (&c["base"], &c["new"]);
    let _ = writeln!(t, "Before: {}", side(b));
    let _ = writeln!(t, "After: {}", side(n));
    if let Some(sig) = c.get("significance").filter(|x| x.is_object()) {
        // Run sets: how the changes were tested against the runs' own spread.
        if u(sig, "tested") > 0 {
            let _ = writeln!(
                t,
                "Run sets: {} runs before, {} after; {}, over {} changes. A change marked (significant) exceeds the runs' own spread; (within noise) does not. The figures below are each set's first run.",
                u(sig, "n_base"),
                u(sig, "n_new"),
                clean(s(sig, "test")),
                u(sig, "tested")
            );
        } else {
            let _ = writeln!(t, "Run sets: {} runs before, {} after; {}", u(sig, "n_base"), u(sig, "n_new"), clean(s(sig, "note")));
        }
    }
    let _ = writeln!(
        t,
        "The program ran {} threads ({} clusters, radar {}) before and {} ({} clusters, radar {}) after.",
        u(&b["program"], "threads"),
        u(&b["program"], "clusters"),
        radar(&b["program"]["glyph"]),
        u(&n["program"], "threads"),
        u(&n["program"], "clusters"),
        radar(&n["program"]["glyph"])
    );
    let changes = arr(c, "changes");
    if changes.is_empty() {
        let _ = writeln!(t, "What changed: nothing beyond sampling noise that the figures below can show.");
    } else {
        let _ = writeln!(t, "What changed:");
        for ch in changes {
            let mark = match ch["significant"].as_bool() {
                Some(true) => " (significant)",
                Some(false) => " (within noise)",
                None => "",
            };
            let _ = writeln!(t, "- {}{mark}", clean(s(ch, "statement")));
        }
    }
    if let Some(note) = c["suppressed_note"].as_str() {
        let _ = writeln!(t, "({})", clean(note));
    }
    let _ = writeln!(t, "Per {} (crt before → after):", s(c, "level"));
    for d in arr(c, "artifacts") {
        let q = clean(s(d, "qualname"));
        let (o, nw) = (&d["base"], &d["new"]);
        let line = match s(d, "status") {
            "added" => format!("{q} is new: crt {} on {} threads (radar {}).", pct(f(nw, "crt")), u(nw, "threads"), radar(&nw["glyph"])),
            "removed" => format!("{q} no longer runs (it had crt {} on {} threads).", pct(f(o, "crt")), u(o, "threads")),
            _ => format!(
                "{q}: crt {} → {} ({}), {} → {} threads, {} → {} clusters, radar {} → {}.",
                pct(f(o, "crt")),
                pct(f(nw, "crt")),
                s(d, "crt_delta_text"),
                u(o, "threads"),
                u(nw, "threads"),
                u(o, "clusters"),
                u(nw, "clusters"),
                radar(&o["glyph"]),
                radar(&nw["glyph"])
            ),
        };
        let _ = writeln!(t, "- {line}");
    }
    t
}

/// `runs`: the run history, newest first.
pub fn runs(r: &Value, top: usize) -> String {
    let mut t = String::new();
    let list = arr(r, "runs");
    let _ = writeln!(t, "{} runs, newest first{}:", list.len(), if list.len() > top { format!(" (the newest {top} listed)") } else { String::new() });
    for run in list.iter().take(top) {
        let h = &run["history"];
        if h.is_null() {
            let _ = writeln!(t, "- {}: cannot be read", clean(s(run, "name")));
            continue;
        }
        let what = match h["test"].as_str() {
            Some(test) => format!("test {}", clean(test)),
            None => clean(s(h, "command")),
        };
        let outcome = match &h["outcome"] {
            Value::Null if h["test"].is_string() => ", no test report (killed or cancelled)".to_string(),
            Value::Null => String::new(),
            o => {
                let first = o["first_failure"].as_str().map(|x| format!(", first failure: {}", clean(x))).unwrap_or_default();
                format!(", {} passed, {} failed, {} errors, {} skipped{first}", u(o, "passed"), u(o, "failed"), u(o, "errors"), u(o, "skipped"))
            }
        };
        let mut extra = Vec::new();
        if let Some(l) = h["label"].as_str() {
            extra.push(format!("label {:?}", clean(l)));
        }
        if h["pinned"].as_bool() == Some(true) {
            extra.push("pinned".into());
        }
        if h["partial"].as_bool() == Some(true) {
            extra.push("partial (only what was written before the recorder ended)".into());
        }
        if let Some(p) = h["previous"].as_str() {
            extra.push(format!("previous run of this test: {}", clean(p)));
        }
        let extra = if extra.is_empty() { String::new() } else { format!("; {}", extra.join("; ")) };
        let _ = writeln!(t, "- {}: {what}, {:.2} s, {} threads{outcome}{extra}", clean(s(run, "path")), f(h, "duration_s"), u(h, "threads"));
    }
    t
}
