//! Text of the editor features: inlay hint labels and tooltips, code lens titles, hover markdown.
//! Pure functions of the figures, so they are tested as text.

use crate::figures::{FileFigures, Figures};
use crate::config::Settings;
use std::fmt::Write;
use threadradar_analysis::glyph::{ClusterColour, GlyphCell};
use threadradar_analysis::view::{ArtifactView, EdgeView};
use threadradar_analysis::ArtifactKind;

/// `37.2%`; `<0.1%` for a small non-zero share.
pub fn pct(fraction: f64) -> String {
    let p = fraction * 100.0;
    if p > 0.0 && p < 0.05 {
        "<0.1%".into()
    } else {
        format!("{p:.1}%")
    }
}

/// `1.84s`, `12.3s`, `125s`.
pub fn secs(s: f64) -> String {
    if s < 10.0 {
        format!("{s:.2}s")
    } else if s < 100.0 {
        format!("{s:.1}s")
    } else {
        format!("{s:.0}s")
    }
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// A name from the profiled program as a Markdown code span: shown as written, safe in every
/// renderer (no HTML, no emphasis), and with no backslash escapes (Neovim's Markdown float shows
/// those literally). Line breaks become spaces; a name holding a backtick gets a longer fence.
pub fn code(s: &str) -> String {
    let s = s.replace(['\r', '\n'], " ");
    if s.contains('`') {
        format!("`` {s} ``")
    } else {
        format!("`{s}`")
    }
}

/// [`code`] for a Markdown table cell: GFM ends a cell at a `|` even inside a code span, so that
/// one character (rare in a name) keeps its escape.
fn code_cell(s: &str) -> String {
    code(s).replace('|', "\\|")
}

/// The text glyph: one cell per cluster, `▂▅×9 ██×1`.
pub fn cells(glyph: &[GlyphCell]) -> String {
    glyph.iter().map(|c| c.to_string()).collect::<Vec<_>>().join(" ")
}

/// The inlay hint: `37.2% 1.84s · 10 thr/2 types · ▂▅×9 ██×1`; with asyncio tasks as units
/// `· 3 tasks/1 type`, or `· 3 tasks+1 thr/2 types` when threads ran it too.
pub fn hint_label(a: &ArtifactView, f: &Figures, s: &Settings) -> String {
    let mut out = pct(a.crt);
    if s.hint_seconds {
        let _ = write!(out, " {}", secs(a.seconds));
    }
    if s.hint_threads {
        let types = plural(a.thread_types, "type", "types");
        let _ = match f.unit_counts(a) {
            (0, _) => write!(out, " · {} thr/{types}", a.threads),
            (tasks, 0) => write!(out, " · {}/{types}", plural(tasks, "task", "tasks")),
            (tasks, threads) => write!(out, " · {}+{threads} thr/{types}", plural(tasks, "task", "tasks")),
        };
    }
    if s.hint_clusters && !a.glyph.is_empty() {
        let _ = write!(out, " · {}", cells(&a.glyph));
    }
    out
}

fn kind_word(a: &ArtifactView) -> &'static str {
    match a.kind {
        ArtifactKind::Class => "class",
        ArtifactKind::File => "file",
        ArtifactKind::Function if a.qualname.contains('.') && !a.qualname.contains("<locals>") => "method",
        ArtifactKind::Function => "function",
    }
}

fn colour_word(c: ClusterColour) -> &'static str {
    match c {
        ClusterColour::Low => "low (blue)",
        ClusterColour::Middle => "middle (amber)",
        ClusterColour::High => "high (red)",
    }
}

/// The figures of an artifact as markdown: the hint's tooltip and the body of the hover.
pub fn figures_markdown(a: &ArtifactView, f: &Figures) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "**{}** ({}) — crt **{}** ({}), self {} ({})", code(&a.qualname), kind_word(a), pct(a.crt), secs(a.seconds), pct(a.self_crt), secs(a.self_seconds));
    let _ = writeln!(out);
    let mut types: Vec<(&str, usize)> = Vec::new();
    for t in &a.per_thread {
        let ty = f.threads.get(t.thread as usize).map_or("?", |t| t.1.as_str());
        match types.iter_mut().find(|(n, _)| *n == ty) {
            Some(e) => e.1 += 1,
            None => types.push((ty, 1)),
        }
    }
    let types: Vec<String> = types.iter().map(|(n, c)| format!("{} ×{c}", code(n))).collect();
    let (tasks, threads) = f.unit_counts(a);
    let _ = writeln!(
        out,
        "{} of {} ({}) · {} `{}` · {} samples",
        threadradar_analysis::units::split_words(tasks, threads),
        plural(a.thread_types, "type", "types"),
        types.join(", "),
        plural(a.clusters.len(), "cluster", "clusters"),
        cells(&a.glyph),
        a.samples
    );
    if !a.clusters.is_empty() {
        let _ = writeln!(out);
        let _ = writeln!(out, "| cluster | {} | avg crt(a,th) | Σ crt(a,th) |", if f.has_tasks() { "units" } else { "threads" });
        let _ = writeln!(out, "|---|---|---:|---:|");
        for (c, cell) in a.clusters.iter().zip(&a.glyph) {
            let _ = writeln!(out, "| {} | {} | {} | {} |", colour_word(cell.colour), thread_list(&c.threads, f), pct(c.avg), pct(c.sum));
        }
    }
    let edges = |title: &str, list: &[EdgeView], out: &mut String| {
        if list.is_empty() {
            return;
        }
        let items: Vec<String> = list.iter().take(5).map(|e| format!("{} {}", code(&e.qualname), pct(e.share))).collect();
        let _ = writeln!(out, "\n**{title}** (share of this function's runtime): {}", items.join(" · "));
    };
    edges("Top callers", &a.callers, &mut out);
    edges("Top callees", &a.callees, &mut out);
    out
}

fn thread_list(ids: &[u32], f: &Figures) -> String {
    const SHOWN: usize = 8;
    let names: Vec<String> = ids.iter().take(SHOWN).map(|&t| code_cell(f.thread_name(t))).collect();
    let more = ids.len().saturating_sub(SHOWN);
    let mut s = names.join(", ");
    if more > 0 {
        let _ = write!(s, " … +{more}");
    }
    s
}

/// The code lens above a declaration: `ThreadRadar 37.2 % · 10 threads · 2 clusters` (with
/// asyncio tasks as units: `3 tasks`, `2 tasks + 1 thread`).
pub fn lens_title(a: &ArtifactView, f: &Figures) -> String {
    let (tasks, threads) = f.unit_counts(a);
    format!(
        "ThreadRadar {:.1} % · {} · {}",
        a.crt * 100.0,
        threadradar_analysis::units::split_words(tasks, threads),
        plural(a.clusters.len(), "cluster", "clusters")
    )
}

/// The code lens at the top of a file: its share, the stale count, and "Open overview".
pub fn file_lens_title(file: &FileFigures, stale: usize) -> String {
    let mut s = match &file.file {
        Some(v) => format!("ThreadRadar: this file {:.1} % ({})", v.crt * 100.0, secs(v.seconds)),
        None => "ThreadRadar: this file".to_string(),
    };
    if stale > 0 {
        let _ = write!(s, " · {} changed since the run (stale)", plural(stale, "declaration", "declarations"));
    }
    s.push_str(" · Open overview");
    s
}

/// A footer naming the run and the analysis options.
pub fn footer(run_name: &str, f: &Figures) -> String {
    let mut s = format!("_run {} · states {}", code(run_name), serde_json::to_value(f.params.states).ok().and_then(|v| v.as_str().map(String::from)).unwrap_or_default());
    if !f.params.exclude_threads.is_empty() {
        let names: Vec<String> = f.params.exclude_threads.iter().map(|&t| code(f.thread_name(t))).collect();
        let _ = write!(s, " · thread filter: {} excluded ({})", f.params.exclude_threads.len(), names.join(", "));
    }
    if let Some(w) = f.params.window {
        let _ = write!(s, " · window {}", w.label());
    }
    s.push('_');
    s
}
