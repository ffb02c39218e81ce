//! What changed between two runs, as data. A [`Change`] is one figure ([`Figure`]) of one
//! artifact (or of an object threads waited on) that moved from `before` to `after`, with the
//! evidence behind it ([`ChangeEvidence`]: how many samples or events, obtained how). The words every
//! client shows are rendered from that data here, in one place ([`render`]), and the list is
//! ranked and thinned here ([`rank`]): what rests on many observations and a large effect leads,
//! and what rests on too few is left out and counted (`Comparison::suppressed`).
//!
//! The ranking (docs/compare.md, "Ranking"):
//! 1. the program's own code (and the program as a whole) before the standard library and
//!    third-party code;
//! 2. then by tier, what says most first: who runs the code and the work wasted on wake-ups
//!    ([`Figure::Threads`], [`Figure::FutileWakeups`]); whether it runs at all and how its threads
//!    group (an artifact added or removed, [`Figure::Clusters`], [`Figure::Cluster`]); how long
//!    threads wait and when they finish; how its share of the runtime moved ([`Figure::Crt`]);
//! 3. then by score, the effect (`|after − before| / max(|before|, |after|)`, 0–1) times the
//!    weight of the evidence in coarse steps ([`weight`]), so that a sample more or less does not
//!    reorder the list;
//! 4. then by artifact name and the words.
//!
//! A change is suppressed when it rests on fewer than [`MIN_OBSERVATIONS`] samples or events, and
//! a change of threads or clusters also when the side with fewer threads has fewer than two samples
//! per thread of the other side (a thread seen in none of a handful of samples may still have run
//! the code). [`supported`] is the rule.

use crate::artifact::ArtifactKind;
use crate::compare::{Comparison, DeltaStatus};
use crate::glyph::ClusterColour;
use serde::Serialize;
use threadradar_profiler::run::FileKind;

/// Which figure of an artifact a change is about; `before` and `after` are in its unit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
pub enum Figure {
    /// Threads that executed the artifact in a counted state (the radar's lower pedestal): a count.
    Threads,
    /// The artifact's number of thread clusters: a count.
    Clusters,
    /// One thread cluster of the artifact, by colour (`Change::cluster`): its threads, 0 on the
    /// side where no cluster has that colour.
    Cluster,
    /// `crt(a)` (Eq. 5): a fraction of the counted runtime (0.1 = 10 %); 0 on the side that did
    /// not execute it (`Change::status` `added` or `removed`).
    Crt,
    /// When the artifact last ran (for `program`: when the run ended): seconds after the start.
    Finish,
    /// Seconds that threads had the function on their stack, in any state.
    StackTime,
    /// Seconds that threads waited (did not compute) with the function on their stack.
    WaitTime,
    /// The mean length of a wait seen in the function, seconds (over the waits sampling saw).
    MeanWait,
    /// Futile wake-ups on a waited-on object (`Change::object`): a count.
    FutileWakeups,
    /// The mean wait on an object (`Change::object`), seconds.
    ObjectMeanWait,
}

/// How the observations behind a change were obtained.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, ts_rs::TS)]
pub enum EvidenceSource {
    /// Counted from the profiler's samples (± one sampling period per edge).
    #[serde(rename = "sampled")]
    Sampled,
    /// Derived from samples by a rule (a wait's object and its wake-ups without kernel events;
    /// docs/waits.md).
    #[serde(rename = "inferred")]
    Inferred,
    /// From the kernel's scheduler events (`record --sched`) in both runs.
    #[serde(rename = "kernel-exact")]
    KernelExact,
}

/// What the evidence counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
pub enum EvidenceUnit {
    /// Thread samples with the artifact on the stack (in a counted state for the radar's figures).
    Samples,
    /// Waits (runs of waiting samples, or wait intervals on an object).
    Waits,
    /// Wake-up events.
    WakeUps,
}

/// The observations behind a change, per run.
#[derive(Clone, Debug, PartialEq, Serialize, ts_rs::TS)]
pub struct ChangeEvidence {
    pub source: EvidenceSource,
    pub unit: EvidenceUnit,
    /// Observations behind the base run's figure…
    pub base: u64,
    /// …and behind the new run's.
    pub new: u64,
    /// Threads those samples came from in each run (0 where the figure is not counted per thread).
    pub threads_base: usize,
    pub threads_new: usize,
}

/// One change between the runs: a figure of an artifact, before and after, and its evidence.
#[derive(Clone, Debug, PartialEq, Serialize, ts_rs::TS)]
pub struct Change {
    /// The artifact's qualified name (`program` for the whole run; for an object's figures, the
    /// function it was first waited in).
    pub artifact: String,
    pub kind: ArtifactKind,
    /// The artifact's file and declaration line in the new run, else in the base run, where known.
    pub file: Option<String>,
    pub line: Option<u32>,
    /// The program's own code, the standard library, third-party code; `unknown` for the program
    /// as a whole and objects waited on outside any known function.
    pub file_kind: FileKind,
    /// The waited-on object, for [`Figure::FutileWakeups`] and [`Figure::ObjectMeanWait`].
    pub object: Option<String>,
    /// The cluster's colour, for [`Figure::Cluster`].
    pub cluster: Option<ClusterColour>,
    pub figure: Figure,
    /// `added` / `removed`: the artifact ran in one run only (its figure counts 0 in the other).
    pub status: DeltaStatus,
    pub before: f64,
    pub after: f64,
    pub evidence: ChangeEvidence,
    /// `|after − before| / max(|before|, |after|)`: 0 (none) to 1 (from or to nothing).
    pub effect: f64,
    /// What the ranking orders by within a tier: `effect` × [`weight`] of the evidence.
    pub score: f64,
    /// The change in words ([`render`]).
    pub statement: String,
    /// The evidence in words: `sampled: 92 → 9 samples`, `kernel-exact: 4479 → 0 wake-ups`.
    pub evidence_text: String,
    /// Whether the change exceeds the runs' own spread; `None` when each side is one run, so
    /// there is no spread to compare with.
    pub significant: Option<bool>,
    /// The test's p-value (before Holm's correction), when the change was tested.
    pub p: Option<f64>,
}

/// Below this many observations (samples or events, both runs together) a change is not listed.
pub const MIN_OBSERVATIONS: u64 = 10;

impl Change {
    /// A change of `figure` of `artifact`, its words and score filled in.
    #[allow(clippy::too_many_arguments)]
    pub fn new(artifact: &str, kind: ArtifactKind, file_kind: FileKind, figure: Figure, status: DeltaStatus, before: f64, after: f64, evidence: ChangeEvidence) -> Change {
        let mut c = Change {
            artifact: artifact.to_string(),
            kind,
            file: None,
            line: None,
            file_kind,
            object: None,
            cluster: None,
            figure,
            status,
            before,
            after,
            evidence,
            effect: 0.0,
            score: 0.0,
            statement: String::new(),
            evidence_text: String::new(),
            significant: None,
            p: None,
        };
        c.refresh();
        c
    }

    /// Where the artifact is declared.
    pub fn at(mut self, file: Option<String>, line: Option<u32>) -> Change {
        self.file = file;
        self.line = line.filter(|&l| l > 0);
        self
    }

    /// The object a wait figure is about.
    pub fn on_object(mut self, object: &str) -> Change {
        self.object = Some(object.to_string());
        self.refresh();
        self
    }

    /// The cluster a [`Figure::Cluster`] change is about.
    pub fn of_cluster(mut self, colour: ClusterColour) -> Change {
        self.cluster = Some(colour);
        self.refresh();
        self
    }

    /// Recomputes the derived fields (effect, score, words) from the data.
    fn refresh(&mut self) {
        let big = self.before.abs().max(self.after.abs());
        self.effect = if big > 0.0 { ((self.after - self.before).abs() / big).min(1.0) } else { 0.0 };
        self.score = self.effect * weight(observations(self));
        self.statement = render(self);
        self.evidence_text = evidence_text(&self.evidence);
    }

    /// The tier of the ranking: 0 says most (see the module documentation).
    pub fn tier(&self) -> u8 {
        match (self.figure, self.status) {
            (Figure::Threads | Figure::FutileWakeups, _) => 0,
            (Figure::Crt, DeltaStatus::Added | DeltaStatus::Removed) | (Figure::Clusters | Figure::Cluster, _) => 1,
            (Figure::WaitTime | Figure::StackTime | Figure::MeanWait | Figure::ObjectMeanWait | Figure::Finish, _) => 2,
            (Figure::Crt, DeltaStatus::Changed) => 3,
        }
    }
}

/// The observations a change rests on: for threads and clusters, the samples of the side with
/// fewer threads (where a thread could have gone unseen); for an artifact in one run only, that
/// run's; otherwise both runs' together.
fn observations(c: &Change) -> u64 {
    let e = &c.evidence;
    match (c.figure, c.status) {
        (Figure::Threads | Figure::Clusters | Figure::Cluster, _) => {
            if e.threads_base <= e.threads_new {
                e.base
            } else {
                e.new
            }
        }
        (_, DeltaStatus::Added) => e.new,
        (_, DeltaStatus::Removed) => e.base,
        _ => e.base + e.new,
    }
}

/// The weight of `n` observations, in coarse steps so that a sample more or less rarely moves a
/// change: below 10 → 0, 10–19 → 0.2, 20–99 → 0.4, 100–299 → 0.6, 300–999 → 0.8, 1000 or more → 1.
pub fn weight(n: u64) -> f64 {
    match n {
        0..=9 => 0.0,
        10..=19 => 0.2,
        20..=99 => 0.4,
        100..=299 => 0.6,
        300..=999 => 0.8,
        _ => 1.0,
    }
}

/// Whether a change rests on enough observations to be listed: at least [`MIN_OBSERVATIONS`],
/// and for threads and clusters at least two samples per thread of the side with more threads on
/// the side with fewer.
pub fn supported(c: &Change) -> bool {
    let n = observations(c);
    match c.figure {
        Figure::Threads | Figure::Clusters | Figure::Cluster => {
            let more = c.evidence.threads_base.max(c.evidence.threads_new) as u64;
            n >= MIN_OBSERVATIONS.max(2 * more)
        }
        _ => n >= MIN_OBSERVATIONS,
    }
}

fn pct(x: f64) -> String {
    format!("{:.1}%", x * 100.0)
}

fn threads(n: f64) -> String {
    if n == 1.0 {
        "1 thread".to_string()
    } else {
        format!("{n:.0} threads")
    }
}

fn earlier(d: f64) -> String {
    if d < 0.0 {
        format!("{:.2} s earlier", -d)
    } else {
        format!("{d:.2} s later")
    }
}

fn colour(c: Option<ClusterColour>) -> &'static str {
    match c {
        Some(ClusterColour::Low) => "low",
        Some(ClusterColour::Middle) => "middle",
        Some(ClusterColour::High) => "high",
        None => "?",
    }
}

/// The change in words, from its data alone: the one place every client's sentence comes from.
pub fn render(c: &Change) -> String {
    let (a, b, n, e) = (&c.artifact, c.before, c.after, &c.evidence);
    let object = c.object.as_deref().unwrap_or("?");
    let verb = |d: f64| if d < 0.0 { "cut" } else { "up" };
    match c.figure {
        Figure::Threads => format!("{a}: run by {} → {n:.0}", threads(b)),
        Figure::Clusters => format!("{a}: {b:.0} thread clusters → {n:.0}"),
        Figure::Cluster if n == 0.0 => format!("{a}: cluster {} ({}) dissolved", colour(c.cluster), threads(b)),
        Figure::Cluster => format!("{a}: new cluster {} ({})", colour(c.cluster), threads(n)),
        Figure::Crt => match c.status {
            DeltaStatus::Added => format!("{a}: new, {} of the runtime in {}", pct(n), threads(e.threads_new as f64)),
            DeltaStatus::Removed => format!("{a}: no longer executed (was {} in {})", pct(b), threads(e.threads_base as f64)),
            DeltaStatus::Changed => format!("{a}: crt {} → {} ({})", pct(b), pct(n), crate::compare::pp_text(n - b)),
        },
        Figure::Finish if c.artifact == "program" && c.file.is_none() => format!("program: finishes {} ({b:.2} s → {n:.2} s)", earlier(n - b)),
        Figure::Finish => format!("{a}: finishes {} ({b:.2} s → {n:.2} s after the start)", earlier(n - b)),
        Figure::WaitTime => {
            let rel = if b > 0.0 { format!(" ({:+.0}%)", 100.0 * (n - b) / b) } else { String::new() };
            format!("{a}: threads' waiting time {}, {b:.2} s → {n:.2} s{rel}", verb(n - b))
        }
        Figure::StackTime => format!("{a}: threads' time in it {}, {b:.2} s → {n:.2} s ({:+.0}%)", verb(n - b), 100.0 * (n - b) / b.max(1e-9)),
        Figure::MeanWait => format!(
            "{a}: wake-ups seen {} → {}, waits {} ({:.1} ms → {:.1} ms on average)",
            e.base,
            e.new,
            if n < b { "shorter" } else { "longer" },
            b * 1e3,
            n * 1e3
        ),
        Figure::FutileWakeups => format!("{a}: {object}: {b:.0} futile wake-ups → {n:.0}"),
        Figure::ObjectMeanWait => format!("{a}: {object}: mean wait {:.1} ms → {:.1} ms ({} → {} waits)", b * 1e3, n * 1e3, e.base, e.new),
    }
}

/// The evidence in words: `sampled: 92 → 9 samples in 10 → 6 threads`.
pub fn evidence_text(e: &ChangeEvidence) -> String {
    let source = match e.source {
        EvidenceSource::Sampled => "sampled",
        EvidenceSource::Inferred => "inferred",
        EvidenceSource::KernelExact => "kernel-exact",
    };
    let unit = match e.unit {
        EvidenceUnit::Samples => "samples",
        EvidenceUnit::Waits => "waits",
        EvidenceUnit::WakeUps => "wake-ups",
    };
    let threads = if e.threads_base + e.threads_new > 0 { format!(" in {} → {} threads", e.threads_base, e.threads_new) } else { String::new() };
    format!("{source}: {} → {} {unit}{threads}", e.base, e.new)
}

/// Ranks `c.changes` (module documentation) and moves the changes that rest on too few
/// observations out of the list into `c.suppressed`, with the sentence that says why. Runs again
/// after more changes are added (the trace's): the count and the sentence add up.
pub fn rank(c: &mut Comparison) {
    let (mut kept, dropped): (Vec<Change>, Vec<Change>) = std::mem::take(&mut c.changes).into_iter().partition(supported);
    c.suppressed += dropped.len();
    kept.sort_by(|x, y| {
        let own = |c: &Change| !(c.file_kind == FileKind::User || (c.artifact == "program" && c.object.is_none()));
        own(x)
            .cmp(&own(y))
            .then_with(|| x.tier().cmp(&y.tier()))
            .then_with(|| y.score.total_cmp(&x.score))
            .then_with(|| x.artifact.cmp(&y.artifact))
            .then_with(|| x.statement.cmp(&y.statement))
    });
    c.changes = kept;
    c.suppressed_note = (c.suppressed > 0).then(|| {
        format!(
            "{} {} not listed: {} on fewer than {MIN_OBSERVATIONS} samples or events (a change of threads or clusters: on fewer than 2 samples per thread); record longer, or sample more often with `--interval-ms`, to see whether they hold",
            c.suppressed,
            if c.suppressed == 1 { "change" } else { "changes" },
            if c.suppressed == 1 { "it rests" } else { "they rest" },
        )
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sampled(base: u64, new: u64, tb: usize, tn: usize) -> ChangeEvidence {
        ChangeEvidence { source: EvidenceSource::Sampled, unit: EvidenceUnit::Samples, base, new, threads_base: tb, threads_new: tn }
    }

    #[test]
    fn words_come_from_the_data() {
        let c = Change::new("W.__init__", ArtifactKind::Function, FileKind::User, Figure::Threads, DeltaStatus::Changed, 10.0, 1.0, sampled(346, 48, 10, 1));
        assert_eq!(c.statement, "W.__init__: run by 10 threads → 1");
        assert_eq!(c.evidence_text, "sampled: 346 → 48 samples in 10 → 1 threads");
        assert!((c.effect - 0.9).abs() < 1e-12);
        assert!((c.score - 0.9 * 0.4).abs() < 1e-12, "48 samples on the side with fewer threads: {}", c.score);
        let wake = ChangeEvidence { source: EvidenceSource::KernelExact, unit: EvidenceUnit::WakeUps, base: 4479, new: 0, threads_base: 0, threads_new: 0 };
        let f = Change::new("Storage.take", ArtifactKind::Function, FileKind::User, Figure::FutileWakeups, DeltaStatus::Changed, 4479.0, 0.0, wake)
            .on_object("threading.Condition self._monitor");
        assert_eq!(f.statement, "Storage.take: threading.Condition self._monitor: 4479 futile wake-ups → 0");
        assert_eq!(f.evidence_text, "kernel-exact: 4479 → 0 wake-ups");
        assert_eq!((f.effect, f.score), (1.0, 1.0));
        let added = Change::new("<module>", ArtifactKind::Function, FileKind::Stdlib, Figure::Crt, DeltaStatus::Added, 0.0, 0.022, sampled(0, 1, 0, 1));
        assert_eq!(added.statement, "<module>: new, 2.2% of the runtime in 1 thread");
        let json = serde_json::to_value(&f).unwrap();
        assert_eq!((json["figure"].as_str(), json["evidence"]["source"].as_str()), (Some("futile_wakeups"), Some("kernel-exact")));
        assert_eq!((json["before"].as_f64(), json["after"].as_f64()), (Some(4479.0), Some(0.0)));
    }

    #[test]
    fn too_few_samples_are_not_listed() {
        // One import-time sample: added from nothing.
        let one = Change::new("<module>", ArtifactKind::Function, FileKind::Stdlib, Figure::Crt, DeltaStatus::Added, 0.0, 0.022, sampled(0, 1, 0, 1));
        assert!(!supported(&one));
        // 10 threads → 6 on 9 samples: four threads may have run it unseen.
        let few = Change::new("Consumer.run", ArtifactKind::Function, FileKind::User, Figure::Threads, DeltaStatus::Changed, 10.0, 6.0, sampled(92, 9, 10, 6));
        assert!(!supported(&few));
        // 10 threads → 1 on 48 samples: a second thread would have been seen.
        let many = Change::new("W.__init__", ArtifactKind::Function, FileKind::User, Figure::Threads, DeltaStatus::Changed, 10.0, 1.0, sampled(346, 48, 10, 1));
        assert!(supported(&many));
        // The crt of 92 → 9 samples rests on all of them.
        let crt = Change::new("Consumer.run", ArtifactKind::Function, FileKind::User, Figure::Crt, DeltaStatus::Changed, 0.64, 0.34, sampled(92, 9, 10, 6));
        assert!(supported(&crt));
    }

    #[test]
    fn weights_step_with_the_evidence() {
        assert_eq!([0, 9, 10, 19, 20, 99, 100, 299, 300, 999, 1000, 10_000].map(weight), [0.0, 0.0, 0.2, 0.2, 0.4, 0.4, 0.6, 0.6, 0.8, 0.8, 1.0, 1.0]);
    }
}
