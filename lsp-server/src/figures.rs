//! The figures of the active run under the current thread filter and counted states, arranged by
//! file for the editor features. One [`Figures`] is computed per (run, filter, states), off the
//! protocol thread, and shared by every hint, lens, hover and symbol until one of them changes.

use crate::runs::{absolute, LoadedRun};
use std::collections::HashMap;
use std::sync::Arc;
use threadradar_analysis::panel::{ArtifactKey, Params, PanelError};
use threadradar_analysis::view::{artifact_view, ArtifactView};
use threadradar_analysis::{ArtifactId, ArtifactKind};

/// Callers and callees kept per function for the hover.
const EDGES: usize = 5;

/// One profiled function, method or class.
#[derive(Clone, Debug)]
pub struct Profiled {
    pub key: ArtifactKey,
    pub view: ArtifactView,
}

/// The profiled artifacts of one file.
#[derive(Clone, Debug, Default)]
pub struct FileFigures {
    /// The file artifact itself (its share of the program).
    pub file: Option<ArtifactView>,
    /// Functions and classes with counted samples, by `crt` descending.
    pub artifacts: Vec<Profiled>,
}

/// Everything the editor features show, for one run under one [`Params`].
#[derive(Clone, Debug, Default)]
pub struct Figures {
    pub generation: u64,
    pub params: Params,
    /// FRQ (Eq. 4); 0 when nothing was counted.
    pub counted_samples: u64,
    /// By the file's absolute path as the run stores it (shared: requests take one cheaply).
    pub files: HashMap<String, Arc<FileFigures>>,
    /// (file, index in its `artifacts`) of every profiled function and class, by `crt` descending.
    pub ranked: Vec<(String, usize)>,
    /// Name and type of each thread of the run, by id.
    pub threads: Vec<(String, String)>,
    /// Whether each unit (by id) is an asyncio task (the `units` setting is `tasks`): the words
    /// of hints, lenses and hovers count tasks and threads apart.
    pub tasks: Vec<bool>,
}

impl Figures {
    pub fn build(loaded: &LoadedRun, params: &Params) -> Result<Figures, PanelError> {
        let analysis = loaded.panels.analysis(params)?;
        let run = loaded.run();
        let m = analysis.metrics();
        let arts = analysis.artifacts();
        let mut files: HashMap<String, FileFigures> = HashMap::new();
        let counted = analysis.counted_samples();
        if counted > 0 {
            for kind in [ArtifactKind::Function, ArtifactKind::Class, ArtifactKind::File] {
                for id in arts.ids(kind) {
                    match m.artifact(id) {
                        Some(a) if a.frq > 0 => {}
                        _ => continue,
                    }
                    let Some(a) = arts.describe(run, id) else { continue };
                    let path = absolute(run, a.file);
                    if kind == ArtifactKind::File {
                        files.entry(path).or_default().file = Some(artifact_view(run, &analysis, id, 0));
                        continue;
                    }
                    if a.line == 0 || is_class_body(run, id, a.qualname) {
                        continue;
                    }
                    let key = threadradar_analysis::panel::ArtifactKey::of(&a);
                    let view = artifact_view(run, &analysis, id, EDGES);
                    files.entry(path).or_default().artifacts.push(Profiled { key, view });
                }
            }
        }
        let mut ranked = Vec::new();
        for (path, f) in files.iter_mut() {
            f.artifacts.sort_by(|a, b| b.view.crt.total_cmp(&a.view.crt).then(a.view.line.cmp(&b.view.line)));
            ranked.extend((0..f.artifacts.len()).map(|i| (path.clone(), i)));
        }
        ranked.sort_by(|a, b| {
            let (x, y) = (&files[&a.0].artifacts[a.1].view, &files[&b.0].artifacts[b.1].view);
            y.crt.total_cmp(&x.crt).then(x.qualname.cmp(&y.qualname)).then(a.0.cmp(&b.0))
        });
        Ok(Figures {
            generation: loaded.generation,
            params: params.clone(),
            counted_samples: counted,
            files: files.into_iter().map(|(k, v)| (k, Arc::new(v))).collect(),
            ranked,
            threads: run.threads.iter().map(|t| (t.name.clone(), t.thread_type.clone())).collect(),
            tasks: run.threads.iter().map(threadradar_analysis::units::is_task).collect(),
        })
    }

    /// How many of the units that ran `a` are asyncio tasks, and how many threads.
    pub fn unit_counts(&self, a: &ArtifactView) -> (usize, usize) {
        let tasks = a.per_thread.iter().filter(|s| self.tasks.get(s.thread as usize).copied().unwrap_or(false)).count();
        (tasks, a.threads.saturating_sub(tasks))
    }

    /// Some unit of the run is an asyncio task.
    pub fn has_tasks(&self) -> bool {
        self.tasks.iter().any(|&t| t)
    }

    pub fn thread_name(&self, id: u32) -> &str {
        self.threads.get(id as usize).map_or("?", |t| t.0.as_str())
    }
}

/// Code in a class body outside any method is recorded as a pseudo-function named like the class
/// (see `docs/run-format.md`); the class's own annotation covers it.
fn is_class_body(run: &threadradar_profiler::Run, id: ArtifactId, qualname: &str) -> bool {
    id.kind == ArtifactKind::Function
        && run.functions.get(id.index as usize).and_then(|f| f.class).is_some_and(|c| run.str(c) == qualname)
}
