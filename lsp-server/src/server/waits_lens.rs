//! Waits in the editor: a code lens per object waited on at each source line where threads waited
//! (the waiting frame of `threadradar waits`' intervals: `with cond:`, `cond.wait()`, `q.get()`)
//! and a hover with the objects waited on there, their waits, p50/p95 and wakers with the
//! evidence for each — the same analysis as `threadradar waits` and the `waits` protocol method
//! (`docs/waits.md`).
//!
//! Waits for the GIL are not an object's waits: a thread that returns from `time.sleep()` or
//! `ev.wait()` and then waits for the GIL on the same line would otherwise add a GIL wait (and
//! the GIL holder as its "waker") to the line's object. They get no lens.
//!
//! A lens's figures are its object's intervals on its line, the ones the waits view (Neovim's
//! float, the Waits panel) lists for that object: where an object is waited on at one line only,
//! the lens and the view's row are the same numbers. The lens opens the waits view on its object
//! (`threadradar.openWaits {object, file, line}`).
//!
//! As for critical sections, a document whose text is not the recorded one (another sha256) gets
//! no wait figures: their lines could not be vouched for.

use super::*;
use crate::text::{count, duration};
use std::collections::{BTreeMap, BTreeSet};
use threadradar_analysis::waits::{waits, WaitsOptions, WaitsView, WakeKind};

/// The active run's waits view, computed once per loaded run.
static CACHE: Mutex<Option<(u64, PathBuf, Arc<WaitsView>)>> = Mutex::new(None);

pub(super) fn view_of(loaded: &LoadedRun) -> Arc<WaitsView> {
    let mut cache = CACHE.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((g, p, v)) = cache.as_ref() {
        if *g == loaded.generation && *p == loaded.path {
            return v.clone();
        }
    }
    let v = Arc::new(waits(loaded.run(), &WaitsOptions::default()));
    *cache = Some((loaded.generation, loaded.path.clone(), v.clone()));
    v
}

/// The waits whose waiting frame is one line, per object waited on there (GIL waits left out).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LineWaits {
    /// 1-based.
    pub line: u32,
    /// Per object waited on here, in the order first seen.
    pub objects: Vec<ObjectAtLine>,
    /// Whether the run had scheduler events (kernel-exact edges) or only inference.
    pub kernel: bool,
}

/// One object's waits on one line, and the object's run-wide figures.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ObjectAtLine {
    /// The object's label in the waits view (`threading.Event self.done`).
    pub object: String,
    pub type_name: String,
    /// Its waits on this line, their total time and the threads that waited.
    pub waits_here: u64,
    pub wait_s_here: f64,
    pub threads: BTreeSet<String>,
    /// Sampled futile wake-ups (the interval's own flag) plus kernel-seen futile wake-ups.
    pub futile: u64,
    /// Waker group → non-futile edges ending a wait here.
    pub waker_groups: BTreeMap<String, u64>,
    /// Waker name → (edges, evidence kinds), for the hover.
    pub wakers: BTreeMap<String, (u64, BTreeSet<&'static str>)>,
    /// Kernel wake-ups here that only passed a condition's lock on (not counted as wakers).
    pub lock_handoffs: u64,
    /// The object's run-wide waits, p50 and p95 (the waits view's row).
    pub waits: u64,
    pub p50_s: f64,
    pub p95_s: f64,
    /// The object's waiting radar as text (`▂▅×9 ██×1`), its waiting threads and their types.
    pub radar: String,
    pub waiters: usize,
    pub waiter_types: usize,
}

/// `producer-3` → `producer`: wakers are grouped by thread name without its trailing number.
pub fn waker_group(name: &str) -> String {
    let g = name.trim_end_matches(|c: char| c.is_ascii_digit()).trim_end_matches(['-', '_', ' ', '#']);
    if g.is_empty() { name.to_string() } else { g.to_string() }
}

/// Whether an object of the waits view is a GIL (one per process: `GIL`, `GIL of pid 12`).
fn is_gil(type_name: &str) -> bool {
    type_name == "GIL"
}

/// The waits of `file` (the run's key), one entry per waiting line, in line order.
pub fn line_waits(view: &WaitsView, file: &str) -> Vec<LineWaits> {
    let mut lines: BTreeMap<u32, LineWaits> = BTreeMap::new();
    // Per interval of this file: its line and the index of its object in that line's list.
    let mut place: Vec<Option<(u32, usize)>> = vec![None; view.intervals.len()];
    for (k, iv) in view.intervals.iter().enumerate() {
        let Some(f) = iv.frame.as_ref().filter(|f| f.file == file) else { continue };
        let o = &view.objects[iv.object as usize];
        if is_gil(&o.type_name) {
            continue;
        }
        let l = lines.entry(f.line).or_insert_with(|| LineWaits { line: f.line, kernel: view.evidence.kernel, ..Default::default() });
        let i = match l.objects.iter().position(|x| x.object == o.object) {
            Some(i) => i,
            None => {
                l.objects.push(ObjectAtLine {
                    object: o.object.clone(),
                    type_name: o.type_name.clone(),
                    waits: o.waits,
                    p50_s: o.p50_s,
                    p95_s: o.p95_s,
                    radar: o.radar.iter().map(|c| c.to_string()).collect::<Vec<_>>().join(" "),
                    waiters: o.waiters.len(),
                    waiter_types: o.waiter_types,
                    ..Default::default()
                });
                l.objects.len() - 1
            }
        };
        place[k] = Some((f.line, i));
        let x = &mut l.objects[i];
        x.waits_here += 1;
        x.wait_s_here += iv.end_s - iv.start_s;
        x.futile += iv.futile as u64;
        if let Some(t) = view.threads.get(iv.thread as usize) {
            x.threads.insert(t.name.clone());
        }
    }
    for e in &view.edges {
        let Some((line, i)) = place.get(e.interval as usize).copied().flatten() else { continue };
        let x = &mut lines.get_mut(&line).expect("the interval's line").objects[i];
        if e.kind == WakeKind::LockHandoff {
            x.lock_handoffs += 1;
            continue;
        }
        if e.futile {
            // Futile wake-ups seen by the kernel inside a sampled wait.
            if !view.intervals[e.interval as usize].futile {
                x.futile += 1;
            }
            continue;
        }
        *x.waker_groups.entry(waker_group(&e.waker)).or_default() += 1;
        let w = x.wakers.entry(e.waker.clone()).or_default();
        w.0 += 1;
        w.1.insert(e.evidence.as_str());
    }
    lines.into_values().collect()
}

impl Backend {
    /// The waits of a document's lines, when its current text is the recorded one.
    pub(super) async fn document_waits(&self, uri: &Uri) -> Vec<LineWaits> {
        self.for_recorded_document(uri, |loaded, key| Some(line_waits(&view_of(loaded), key))).await.unwrap_or_default()
    }

    /// One lens per object waited on at a line, opening the waits view on that object.
    pub(super) async fn wait_lenses(&self, uri: &Uri) -> Vec<CodeLens> {
        let file = uri.to_file_path().map(|p| p.display().to_string()).unwrap_or_default();
        let mut lenses = Vec::new();
        for l in self.document_waits(uri).await {
            for o in &l.objects {
                lenses.push(CodeLens {
                    range: Range::new(Position::new(l.line - 1, 0), Position::new(l.line - 1, 0)),
                    command: Some(Command {
                        title: lens_title(o),
                        command: OPEN_WAITS.into(),
                        arguments: Some(vec![json!({ "object": o.object, "file": file, "line": l.line })]),
                    }),
                    data: None,
                });
            }
        }
        lenses
    }

    /// `threadradar.openWaits {object?, file?, line?}` (the wait lens, and the editors' "open the
    /// waits" commands without an object): asks a client with panels to open the waits view on
    /// the object (`threadRadar/openPanel {"panel":"waits","object"}`, `object` null: the whole
    /// view); a client without panels gets the object's figures in a message. Answers the
    /// object's row of the waits view (`null` when the active run has no such object).
    pub(super) async fn open_waits(&self, arg: Value) -> Result<Option<Value>> {
        if arg.get("object").is_some_and(|o| !o.is_null() && !o.is_string()) {
            return Err(invalid("threadradar.openWaits needs {\"object\": the object's name as a string} (or no object for the whole view)"));
        }
        let Some(object) = arg.get("object").and_then(|o| o.as_str()).map(String::from) else {
            if self.settings().panels {
                self.client.send_notification::<OpenPanel>(json!({ "panel": "waits", "object": null })).await;
            } else {
                self.show(MessageType::INFO, "ThreadRadar: who waited for whom is the Waits view (`threadradar waits RUN`, `threadradar serve`; Neovim: :ThreadRadarWaits)").await;
            }
            return Ok(Some(json!({ "object": null, "row": null })));
        };
        self.wait_scanned().await;
        let wanted = object.clone();
        let row = self
            .blocking(move |b| Host::active(b).ok().and_then(|l| view_of(&l).objects.iter().find(|o| o.object == wanted).cloned()))
            .await
            .flatten();
        if self.settings().panels {
            self.client.send_notification::<OpenPanel>(json!({ "panel": "waits", "object": object })).await;
        } else {
            let text = match &row {
                Some(o) => format!(
                    "ThreadRadar waits on {}: {} · {} in all · p95 {} — the Waits panel: `threadradar serve`",
                    o.object,
                    plural(o.waits, "wait", "waits"),
                    duration(o.wait_s),
                    duration(o.p95_s)
                ),
                None => format!("ThreadRadar: the active run has no waits on {object}"),
            };
            self.show(MessageType::INFO, text).await;
        }
        Ok(Some(json!({ "object": object, "row": row })))
    }

    /// The hover text of the waits on 0-based `line`, if any.
    pub(super) async fn wait_hover(&self, uri: &Uri, line: u32) -> Option<String> {
        self.document_waits(uri).await.iter().find(|l| l.line == line + 1).map(hover_markdown)
    }
}

/// The command of a wait lens.
pub const OPEN_WAITS: &str = "threadradar.openWaits";

/// `1 wait`, `1 240 waits`.
pub fn plural(n: u64, one: &str, many: &str) -> String {
    format!("{} {}", count(n), if n == 1 { one } else { many })
}

/// Shares in whole percent of `total`.
fn shares(m: &BTreeMap<String, u64>) -> String {
    let total: u64 = m.values().sum();
    let mut v: Vec<(&String, &u64)> = m.iter().collect();
    v.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
    v.iter().map(|(n, c)| format!("{n} {:.0} %", **c as f64 * 100.0 / total as f64)).collect::<Vec<_>>().join(" / ")
}

/// `threading.Condition self._monitor: waited 1.2 s by 6 threads · 1 240 waits · woken by
/// producer 35 % / consumer 65 % · 412 futile`.
pub fn lens_title(o: &ObjectAtLine) -> String {
    let n = o.threads.len() as u64;
    let mut t = format!(
        "{}: waited {} by {} · {}",
        o.object.replace(['\r', '\n'], " "),
        duration(o.wait_s_here),
        plural(n, "thread", "threads"),
        plural(o.waits_here, "wait", "waits")
    );
    if o.waker_groups.is_empty() {
        t.push_str(" · wakers unknown");
    } else {
        t.push_str(&format!(" · woken by {}", shares(&o.waker_groups)));
    }
    t.push_str(&format!(" · {} futile", count(o.futile)));
    t
}

/// Names from the program as Markdown code spans, as in the figures hover.
pub use crate::render::code;

fn hover_markdown(l: &LineWaits) -> String {
    let waits: u64 = l.objects.iter().map(|o| o.waits_here).sum();
    let wait_s: f64 = l.objects.iter().map(|o| o.wait_s_here).sum();
    let threads: BTreeSet<&String> = l.objects.iter().flat_map(|o| o.threads.iter()).collect();
    let futile: u64 = l.objects.iter().map(|o| o.futile).sum();
    let mut out = format!(
        "**Waits** on this line: {} by {}, {} in all, {}\n\n",
        plural(waits, "wait", "waits"),
        plural(threads.len() as u64, "thread", "threads"),
        duration(wait_s),
        plural(futile, "futile wake-up", "futile wake-ups")
    );
    for o in &l.objects {
        out.push_str(&format!(
            "- {} ({}): {} here ({} in all) · p50 {} · p95 {}\n",
            code(&o.object),
            code(&o.type_name),
            plural(o.waits_here, "wait", "waits"),
            count(o.waits),
            duration(o.p50_s),
            duration(o.p95_s)
        ));
        if !o.radar.is_empty() {
            out.push_str(&format!(
                "  - waiting radar {} — {} of {}, clustered by their share of its wait time (sampled)\n",
                o.radar,
                plural(o.waiters as u64, "thread", "threads"),
                plural(o.waiter_types as u64, "type", "types")
            ));
        }
        let total: u64 = o.wakers.values().map(|w| w.0).sum();
        if total == 0 {
            out.push_str("  - wakers unknown: no edge with evidence\n");
        }
        let mut v: Vec<_> = o.wakers.iter().collect();
        v.sort_by(|a, b| b.1 .0.cmp(&a.1 .0).then(a.0.cmp(b.0)));
        for (name, (n, ev)) in v {
            let ev: Vec<&str> = ev.iter().map(|e| match *e {
                "kernel" => "kernel",
                "lock-event" => "exact lock event",
                "task-state" => "recorded task state",
                _ => "inferred",
            }).collect::<BTreeSet<_>>().into_iter().collect();
            out.push_str(&format!("  - woken by {} {:.0} % ({}, {})\n", code(name), *n as f64 * 100.0 / total as f64, plural(*n, "edge", "edges"), ev.join(", ")));
        }
        if o.lock_handoffs > 0 {
            out.push_str(&format!(
                "  - {} (kernel): a thread leaving the lock the object is built on woke one waiting for it\n",
                plural(o.lock_handoffs, "lock hand-off", "lock hand-offs")
            ));
        }
    }
    out.push('\n');
    out.push_str(if l.kernel {
        "*Waits sampled (± one interval), waits for the GIL left out; wakers from recorded scheduler events (kernel) where present, else inferred from the samples.*"
    } else {
        "*Waits sampled (± one interval), waits for the GIL left out; wakers inferred from the samples (no scheduler events recorded).*"
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lens_titles_name_the_object_group_wakers_and_say_when_none_are_known() {
        assert_eq!(waker_group("producer-3"), "producer");
        assert_eq!(waker_group("Consumer_12"), "Consumer");
        assert_eq!(waker_group("42"), "42");
        let mut o = ObjectAtLine { object: "threading.Condition self._monitor".into(), waits_here: 1240, wait_s_here: 1.24, futile: 412, ..Default::default() };
        o.threads.extend(["a".to_string(), "b".to_string()]);
        assert_eq!(lens_title(&o), "threading.Condition self._monitor: waited 1.2 s by 2 threads · 1 240 waits · wakers unknown · 412 futile");
        o.waker_groups.insert("producer".into(), 35);
        o.waker_groups.insert("consumer".into(), 65);
        assert_eq!(
            lens_title(&o),
            "threading.Condition self._monitor: waited 1.2 s by 2 threads · 1 240 waits · woken by consumer 65 % / producer 35 % · 412 futile"
        );
        o.waits_here = 1;
        o.threads.remove("b");
        assert!(lens_title(&o).contains("by 1 thread · 1 wait · "), "{}", lens_title(&o));
        assert_eq!(code("<script>"), "`<script>`");
        assert_eq!(code("a`b"), "`` a`b ``");
    }
}
