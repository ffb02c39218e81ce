//! `views`: the Sections panel's saved views (CSI's annotations, issue 18) — list them, save one,
//! delete one. Stored beside the runs (`crate::views`); each listed view says whether and where
//! the active run has its section.

use crate::views::{SavedView, SectionRef};
use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// `views`: lists the saved views; with `save` first saves one, with `delete` first deletes one.
#[derive(Clone, Debug, Default, Deserialize, TS)]
#[serde(default, deny_unknown_fields)]
pub struct ViewsParams {
    #[ts(optional)]
    pub save: Option<SaveView>,
    /// The id of a view to delete.
    #[ts(optional)]
    pub delete: Option<String>,
}

/// A selection of the active run's Sections panel to save.
#[derive(Clone, Debug, Deserialize, TS)]
#[serde(deny_unknown_fields)]
pub struct SaveView {
    /// A section of the active run (as `sections` lists it).
    pub section: SectionRef,
    #[serde(default)]
    pub note: String,
    /// A thread of the active run, by name.
    #[serde(default)]
    #[ts(optional)]
    pub thread: Option<String>,
    /// An execution: index into the section's `executions` in the active run.
    #[serde(default)]
    #[ts(optional)]
    pub execution: Option<u32>,
}

/// One saved view and what the active run has of it.
#[derive(Clone, Debug, Serialize, TS)]
pub struct ViewItem {
    #[serde(flatten)]
    pub view: SavedView,
    /// Saved on the active run itself.
    pub same_run: bool,
    /// Index into the active run's `sections` of the view's section; `null`: not in this run.
    pub section_index: Option<u32>,
    /// What was found, in a sentence (e.g. that the section moved, or is not in this run).
    pub status: String,
}

/// The saved views, newest first.
#[derive(Clone, Debug, Serialize, TS)]
pub struct ViewsResult {
    /// Where they are stored.
    pub file: String,
    /// The active run's file name.
    pub run: String,
    pub views: Vec<ViewItem>,
    /// The id of the view `save` just saved.
    pub saved: Option<String>,
}
