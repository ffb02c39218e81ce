//! Critical sections in the editor: a code lens on each section's entry line (`with lock:`) and a
//! hover with a text sparkline of its executions, from the same analysis as `threadradar
//! sections` and the `sections` protocol method (`docs/sections.md`).
//!
//! The lines come from the recorded file: a document whose text is not the recorded one (another
//! sha256) gets no section figures, since their lines could not be vouched for.

use super::*;
use super::waits_lens::code;
use crate::text::duration;
use threadradar_analysis::sections::{analyse, SectionFigures, SectionOptions, SectionsView, WaitSource};

/// The active run's sections view (or why its sections cannot be found: a bad configuration),
/// computed once per loaded run.
static CACHE: Mutex<Option<(u64, PathBuf, std::result::Result<Arc<SectionsView>, String>)>> = Mutex::new(None);

/// The last configuration error shown, so that it is said once, not on every lens request.
static SHOWN: Mutex<Option<String>> = Mutex::new(None);

pub(super) fn view_of(loaded: &LoadedRun) -> std::result::Result<Arc<SectionsView>, String> {
    let mut cache = CACHE.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((g, p, v)) = cache.as_ref() {
        if *g == loaded.generation && *p == loaded.path {
            return v.clone();
        }
    }
    let v = threadradar_profiler::sections::discover_run(loaded.run(), None)
        .map(|found| Arc::new(analyse(loaded.run(), &found.sections, &SectionOptions::default())))
        .map_err(|e| format!("critical sections are not shown: {e}"));
    *cache = Some((loaded.generation, loaded.path.clone(), v.clone()));
    v
}

impl Backend {
    /// The sections of a document, when its current text is the recorded one.
    pub(super) async fn document_sections(&self, uri: &Uri) -> Vec<SectionFigures> {
        self.document_sections_and_source(uri).await.1
    }

    /// The sections of a document and how their waits to enter were obtained.
    async fn document_sections_and_source(&self, uri: &Uri) -> (WaitSource, Vec<SectionFigures>) {
        let found = self
            .for_recorded_document(uri, |loaded, key| {
                Some(view_of(loaded).map(|view| (view.wait_source, view.sections.iter().filter(|s| s.file == key).cloned().collect::<Vec<_>>())))
            })
            .await;
        match found {
            Some(Ok(found)) => found,
            Some(Err(e)) => {
                self.warn_once(e).await;
                (WaitSource::None, Vec::new())
            }
            None => (WaitSource::None, Vec::new()),
        }
    }

    /// A configuration error as a window/showMessage warning, once until another one comes.
    async fn warn_once(&self, e: String) {
        let new = {
            let mut shown = SHOWN.lock().unwrap_or_else(|e| e.into_inner());
            let new = shown.as_deref() != Some(e.as_str());
            *shown = Some(e.clone());
            new
        };
        if new {
            self.show(MessageType::WARNING, format!("ThreadRadar: {e}")).await;
        }
    }

    pub(super) async fn section_lenses(&self, uri: &Uri) -> Vec<CodeLens> {
        self.document_sections(uri)
            .await
            .iter()
            .map(|s| CodeLens {
                range: Range::new(Position::new(s.line - 1, 0), Position::new(s.line - 1, 0)),
                command: Some(Command {
                    title: lens_title(s),
                    // The Sections panel on this section (file, function and lock name it).
                    command: "threadradar.openSections".into(),
                    arguments: Some(vec![json!({ "section": crate::views::SectionRef::of(s) })]),
                }),
                data: None,
            })
            .collect()
    }

    /// `threadradar.openSections` (the section lens): asks a client with panels to open the
    /// Sections panel on the section `{"section": {file, function, lock, line}}`; a client without
    /// panels gets the lens text and how to open the panel. Answers the section's index in the
    /// active run's `sections`.
    pub(super) async fn open_sections(&self, arg: Value) -> Result<Option<Value>> {
        let section: crate::views::SectionRef = arg
            .get("section")
            .cloned()
            .and_then(|s| serde_json::from_value(s).ok())
            .ok_or_else(|| invalid("threadradar.openSections needs {\"section\": {\"file\", \"function\", \"lock\", \"line\"}}"))?;
        self.wait_scanned().await;
        let view = match self.blocking(|b| Host::active(b).ok().map(|l| view_of(&l))).await.flatten() {
            Some(Ok(v)) => Some(v),
            Some(Err(e)) => return Err(invalid(e)),
            None => None,
        };
        let sections = view.as_ref().map_or(&[][..], |v| &v.sections[..]);
        let index = crate::views::find(sections, &section);
        if self.settings().panels {
            self.client.send_notification::<OpenPanel>(json!({ "panel": "sections", "section": section })).await;
        } else {
            let text = match index {
                Some(i) => format!("ThreadRadar {} — the Sections panel: `threadradar serve` (Neovim: :ThreadRadarOpen)", lens_title(&sections[i])),
                None => format!("ThreadRadar: the active run has no section on {} in {}", section.lock, section.function),
            };
            self.show(MessageType::INFO, text).await;
        }
        Ok(Some(json!({ "section": section, "index": index })))
    }

    /// The hover text of the sections entered on 0-based `line`, if any.
    pub(super) async fn section_hover(&self, uri: &Uri, line: u32) -> Option<String> {
        let (source, sections) = self.document_sections_and_source(uri).await;
        let texts: Vec<String> = sections.iter().filter(|s| s.line == line + 1).map(|s| hover_markdown(s, source)).collect();
        (!texts.is_empty()).then(|| texts.join("\n\n---\n\n"))
    }
}


/// `critical section · 1 240 executions · median 2 ms · p99 41 ms · others waited 3.1 s`.
pub fn lens_title(s: &SectionFigures) -> String {
    if s.execution_count == 0 {
        return format!("critical section ({}) · never seen executing (or always shorter than the interval)", s.lock);
    }
    let mut t = format!(
        "critical section · {} · median {} · p99 {} · others waited {}",
        super::waits_lens::plural(s.execution_count, "execution", "executions"),
        duration(s.median_s),
        duration(s.p99_s),
        duration(s.others_waited_s)
    );
    if !s.outliers.is_empty() {
        t.push_str(&format!(" · {}", super::waits_lens::plural(s.outliers.len() as u64, "outlier", "outliers")));
    }
    if s.lock_objects.len() > 1 {
        // One `with` line, several locks (a lock per object, a dict of locks): say so; the hover names them.
        t.push_str(&format!(" · {} lock objects", s.lock_objects.len()));
    }
    t
}

const BARS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];

/// The listed executions' durations in time order as one bar each (at most `width`: longer
/// series show each column's longest), scaled to the longest.
pub fn sparkline(durations: &[f64], width: usize) -> String {
    if durations.is_empty() || width == 0 {
        return String::new();
    }
    let cols: Vec<f64> = if durations.len() <= width {
        durations.to_vec()
    } else {
        (0..width)
            .map(|c| {
                let (a, b) = (c * durations.len() / width, ((c + 1) * durations.len() / width).max(c * durations.len() / width + 1));
                durations[a..b].iter().copied().fold(0.0, f64::max)
            })
            .collect()
    };
    let max = cols.iter().copied().fold(0.0, f64::max);
    cols.iter()
        .map(|d| if max > 0.0 { BARS[((d / max) * 7.0).round().clamp(0.0, 7.0) as usize] } else { BARS[0] })
        .collect()
}

fn hover_markdown(s: &SectionFigures, source: WaitSource) -> String {
    let durations: Vec<f64> = s.executions.iter().map(|e| e.duration_s).collect();
    // Names from the program as code spans: no escapes (Neovim's float shows them literally).
    let mut out = format!("**Critical section** on {}", code(&s.lock));
    if let Some(t) = &s.lock_type {
        out.push_str(&format!(" ({})", code(t)));
    }
    out.push_str(&format!(", lines {}–{}\n\n", s.body_start, s.end_line));
    // The server's own Markdown.
    out.push_str(&format!("Found {}.", s.kind.how_found()));
    if !s.lock_objects.is_empty() {
        // From the recorded wait targets: which object(s) this line locks, told apart by address.
        let objects: Vec<String> = s.lock_objects.iter().map(|o| format!("{} at {} ({})", code(&o.type_name), o.address, super::waits_lens::plural(o.samples as u64, "sample", "samples"))).collect();
        out.push_str(&format!(" Threads waited here on {}.", objects.join(", ")));
    }
    out.push_str("\n\n");
    if s.execution_count == 0 {
        out.push_str("Never seen executing in this run: not executed, or every execution was shorter than the sampling interval and fell between samples.");
        return out;
    }
    if !durations.is_empty() {
        out.push_str(&format!("`{}` {} in time order, longest {}\n\n", sparkline(&durations, 60), super::waits_lens::plural(durations.len() as u64, "execution", "executions"), duration(s.max_s)));
    }
    out.push_str(&format!(
        "{} ({} listed, ≥ {} shorter than ~1 interval) · held {} · median {} · p95 {} · p99 {} · CV {:.2}\n\n",
        super::waits_lens::plural(s.execution_count, "execution", "executions"),
        s.executions.len(),
        s.short.count_at_least,
        duration(s.total_hold_s),
        duration(s.median_s),
        duration(s.p95_s),
        duration(s.p99_s),
        s.cv
    ));
    out.push_str(&format!(
        "Others waited {} · waiters in {:.0} % of the held samples · {}\n\n",
        duration(s.others_waited_s),
        s.waited_share * 100.0,
        super::waits_lens::plural(s.outliers.len() as u64, "outlier", "outliers")
    ));
    out.push_str(match source {
        WaitSource::Kernel => "*Sampled: durations ± one interval; waits to enter kernel-exact (the scheduler's context switches).*",
        WaitSource::Sampled => "*Sampled: durations ± one interval, waits from the sampled thread states.*",
        WaitSource::None => "*Sampled: durations ± one interval; this run has no wait data.*",
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::count;

    #[test]
    fn counts_durations_and_sparklines_read_as_in_the_lens() {
        assert_eq!(count(1240), "1 240");
        assert_eq!(count(7), "7");
        assert_eq!(count(1_000_000), "1 000 000");
        assert_eq!(duration(0.002), "2 ms");
        assert_eq!(duration(0.0414), "41 ms");
        assert_eq!(duration(3.14), "3.1 s");
        assert_eq!(duration(0.0004), "0.40 ms");
        // Bar heights are proportional: 1/8 of the longest is the second-lowest bar.
        assert_eq!(sparkline(&[1.0, 1.0, 8.0, 4.0], 10), "▂▂█▅");
        assert_eq!(sparkline(&[0.0, 8.0], 10), "▁█");
        // Squeezed: each column shows the longest of its executions.
        assert_eq!(sparkline(&[1.0, 8.0, 1.0, 1.0], 2), "█▂");
        assert_eq!(sparkline(&[1.0, 1.0, 1.0, 8.0], 2), "▂█");
        assert_eq!(sparkline(&[], 5), "");
    }
}
