//! Waits in the editor: a code lens on each source line where threads waited (the waiting frame of
//! `threadradar waits`' intervals: `with cond:`, `cond.wait()`, `q.get()`) and a hover with the
//! objects waited on there, their waits, p50/p95 and wakers with the evidence for each — the same
//! analysis as `threadradar waits` and the `waits` protocol method (`docs/waits.md`).
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

/// The waits whose waiting frame is one line, with what woke them.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LineWaits {
    /// 1-based.
    pub line: u32,
    pub waits: u64,
    pub wait_s: f64,
    pub threads: BTreeSet<String>,
    /// Sampled futile wake-ups (the interval's own flag) plus kernel-seen futile wake-ups.
    pub futile: u64,
    /// Waker group → non-futile edges ending a wait here.
    pub wakers: BTreeMap<String, u64>,
    /// Kernel wake-ups here that only passed a condition's lock on (not counted as wakers).
    pub lock_handoffs: u64,
    /// Per object waited on here: label, type, waits, p50, p95, wakers (name → edges, evidence kinds).
    pub objects: Vec<ObjectAtLine>,
    /// Whether the run had scheduler events (kernel-exact edges) or only inference.
    pub kernel: bool,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct ObjectAtLine {
    pub object: String,
    pub type_name: String,
    pub waits_here: u64,
    pub waits: u64,
    pub p50_s: f64,
    pub p95_s: f64,
    pub wakers: BTreeMap<String, (u64, BTreeSet<&'static str>)>,
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

/// The waits of `file` (the run's key), one entry per waiting line, in line order.
pub fn line_waits(view: &WaitsView, file: &str) -> Vec<LineWaits> {
    let mut lines: BTreeMap<u32, LineWaits> = BTreeMap::new();
    let mut line_of_interval: Vec<Option<u32>> = vec![None; view.intervals.len()];
    for (k, iv) in view.intervals.iter().enumerate() {
        let Some(f) = iv.frame.as_ref().filter(|f| f.file == file) else { continue };
        line_of_interval[k] = Some(f.line);
        let l = lines.entry(f.line).or_insert_with(|| LineWaits { line: f.line, kernel: view.evidence.kernel, ..Default::default() });
        l.waits += 1;
        l.wait_s += iv.end_s - iv.start_s;
        l.futile += iv.futile as u64;
        if let Some(t) = view.threads.get(iv.thread as usize) {
            l.threads.insert(t.name.clone());
        }
        let o = &view.objects[iv.object as usize];
        match l.objects.iter_mut().find(|x| x.object == o.object) {
            Some(x) => x.waits_here += 1,
            None => l.objects.push(ObjectAtLine {
                object: o.object.clone(),
                type_name: o.type_name.clone(),
                waits_here: 1,
                waits: o.waits,
                p50_s: o.p50_s,
                p95_s: o.p95_s,
                wakers: BTreeMap::new(),
                radar: o.radar.iter().map(|c| c.to_string()).collect::<Vec<_>>().join(" "),
                waiters: o.waiters.len(),
                waiter_types: o.waiter_types,
            }),
        }
    }
    for e in &view.edges {
        let Some(line) = line_of_interval.get(e.interval as usize).copied().flatten() else { continue };
        let l = lines.get_mut(&line).expect("the interval's line");
        if e.kind == WakeKind::LockHandoff {
            l.lock_handoffs += 1;
            continue;
        }
        if e.futile {
            // Futile wake-ups seen by the kernel inside a sampled wait.
            if !view.intervals[e.interval as usize].futile {
                l.futile += 1;
            }
            continue;
        }
        *l.wakers.entry(waker_group(&e.waker)).or_default() += 1;
        if let Some(o) = l.objects.iter_mut().find(|x| x.object == e.object) {
            let w = o.wakers.entry(e.waker.clone()).or_default();
            w.0 += 1;
            w.1.insert(e.evidence.as_str());
        }
    }
    lines.into_values().collect()
}

impl Backend {
    /// The waits of a document's lines, when its current text is the recorded one.
    pub(super) async fn document_waits(&self, uri: &Uri) -> Vec<LineWaits> {
        self.for_recorded_document(uri, |loaded, key| Some(line_waits(&view_of(loaded), key))).await.unwrap_or_default()
    }

    pub(super) async fn wait_lenses(&self, uri: &Uri) -> Vec<CodeLens> {
        let file = uri.to_file_path().map(|p| p.display().to_string()).unwrap_or_default();
        self.document_waits(uri)
            .await
            .iter()
            .map(|l| CodeLens {
                range: Range::new(Position::new(l.line - 1, 0), Position::new(l.line - 1, 0)),
                command: Some(Command {
                    title: lens_title(l),
                    // The Waits view (VS Code: its tab in the panel; Neovim: :ThreadRadarWaits).
                    command: "threadradar.openWaits".into(),
                    arguments: Some(vec![json!({ "file": file, "line": l.line })]),
                }),
                data: None,
            })
            .collect()
    }

    /// The hover text of the waits on 0-based `line`, if any.
    pub(super) async fn wait_hover(&self, uri: &Uri, line: u32) -> Option<String> {
        self.document_waits(uri).await.iter().find(|l| l.line == line + 1).map(hover_markdown)
    }
}


/// Shares in whole percent of `total`.
fn shares(m: &BTreeMap<String, u64>) -> String {
    let total: u64 = m.values().sum();
    let mut v: Vec<(&String, &u64)> = m.iter().collect();
    v.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
    v.iter().map(|(n, c)| format!("{n} {:.0} %", **c as f64 * 100.0 / total as f64)).collect::<Vec<_>>().join(" / ")
}

/// `waited 1.2 s by 6 threads · woken by producer 35 % / consumer 65 % · 412 futile`.
pub fn lens_title(l: &LineWaits) -> String {
    let n = l.threads.len();
    let mut t = format!("waited {} by {} · {} waits", duration(l.wait_s), if n == 1 { "1 thread".to_string() } else { format!("{n} threads") }, count(l.waits));
    if l.wakers.is_empty() {
        t.push_str(" · wakers unknown");
    } else {
        t.push_str(&format!(" · woken by {}", shares(&l.wakers)));
    }
    t.push_str(&format!(" · {} futile", count(l.futile)));
    t
}

/// Markdown-safe text from the profiled program (names and labels can hold anything).
fn md(s: &str) -> String {
    s.chars()
        .flat_map(|c| match c {
            '\\' | '`' | '*' | '_' | '[' | ']' | '<' | '>' | '#' | '|' | '!' | '&' => vec!['\\', c],
            c => vec![c],
        })
        .collect()
}

fn hover_markdown(l: &LineWaits) -> String {
    let mut out = format!(
        "**Waits** on this line: {} waits by {} thread(s), {} in all, {} futile wake-ups\n\n",
        count(l.waits),
        l.threads.len(),
        duration(l.wait_s),
        count(l.futile)
    );
    for o in &l.objects {
        out.push_str(&format!(
            "- `{}` ({}): {} waits here ({} in all) · p50 {} · p95 {}\n",
            o.object.replace('`', "'"),
            md(&o.type_name),
            count(o.waits_here),
            count(o.waits),
            duration(o.p50_s),
            duration(o.p95_s)
        ));
        if !o.radar.is_empty() {
            out.push_str(&format!(
                "  - waiting radar {} — {} thread(s) of {} type(s), clustered by their share of its wait time (sampled)\n",
                o.radar, o.waiters, o.waiter_types
            ));
        }
        let total: u64 = o.wakers.values().map(|w| w.0).sum();
        if total == 0 {
            out.push_str("  - wakers unknown: no edge with evidence\n");
        }
        let mut v: Vec<_> = o.wakers.iter().collect();
        v.sort_by(|a, b| b.1 .0.cmp(&a.1 .0).then(a.0.cmp(b.0)));
        for (name, (n, ev)) in v {
            let ev: Vec<&str> = ev.iter().map(|e| if *e == "kernel" { "kernel" } else { "inferred" }).collect::<BTreeSet<_>>().into_iter().collect();
            out.push_str(&format!("  - woken by {} {:.0} % ({} edges, {})\n", md(name), *n as f64 * 100.0 / total as f64, count(*n), ev.join(", ")));
        }
    }
    if l.lock_handoffs > 0 {
        out.push_str(&format!("- {} lock hand-offs (kernel): a thread leaving the lock a condition is built on woke one waiting for it\n", count(l.lock_handoffs)));
    }
    out.push('\n');
    out.push_str(if l.kernel {
        "*Waits sampled (± one interval); wakers from recorded scheduler events (kernel) where present, else inferred from the samples.*"
    } else {
        "*Waits sampled (± one interval); wakers inferred from the samples (no scheduler events recorded).*"
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lens_titles_group_wakers_and_say_when_none_are_known() {
        assert_eq!(waker_group("producer-3"), "producer");
        assert_eq!(waker_group("Consumer_12"), "Consumer");
        assert_eq!(waker_group("42"), "42");
        let mut l = LineWaits { line: 3, waits: 1240, wait_s: 1.24, futile: 412, ..Default::default() };
        l.threads.extend(["a".to_string(), "b".to_string()]);
        assert_eq!(lens_title(&l), "waited 1.2 s by 2 threads · 1 240 waits · wakers unknown · 412 futile");
        l.wakers.insert("producer".into(), 35);
        l.wakers.insert("consumer".into(), 65);
        assert_eq!(lens_title(&l), "waited 1.2 s by 2 threads · 1 240 waits · woken by consumer 65 % / producer 35 % · 412 futile");
        assert_eq!(md("<script>"), "\\<script\\>");
    }
}
