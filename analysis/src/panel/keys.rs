//! Artifact keys resolved in a run: by key, by the qualified name the command line spells, with
//! close matches when nothing fits.

use super::*;

/// What an [`ArtifactKey`] names in a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    Program,
    Artifact(ArtifactId),
}

/// Resolves a key, or fails with close matches.
pub fn resolve(run: &Run, analysis: &Analysis, key: &ArtifactKey) -> Result<Target, PanelError> {
    if key.is_program() {
        return Ok(Target::Program);
    }
    let arts = analysis.artifacts();
    for kind in ArtifactKind::ALL {
        if !key.0.starts_with(kind_name(kind)) {
            continue;
        }
        for id in arts.ids(kind) {
            if let Some(a) = arts.describe(run, id) {
                if ArtifactKey::of(&a) == *key {
                    return Ok(Target::Artifact(id));
                }
            }
        }
    }
    Err(PanelError::UnknownArtifact { key: key.0.clone(), close: close_matches(run, analysis, &key.0) })
}

/// Finds an artifact by key, by qualified name (`Worker.run`, `Worker`) or `program`, as the
/// command line spells it. Among equal names, the one with the most counted samples wins.
pub fn find(run: &Run, analysis: &Analysis, name: &str) -> Result<ArtifactKey, PanelError> {
    if name == "program" {
        return Ok(ArtifactKey::program());
    }
    if let Ok(Target::Artifact(_)) = resolve(run, analysis, &ArtifactKey(name.to_string())) {
        return Ok(ArtifactKey(name.to_string()));
    }
    let arts = analysis.artifacts();
    let m = analysis.metrics();
    let mut best: Option<(u64, ArtifactKey)> = None;
    for kind in [ArtifactKind::Function, ArtifactKind::Class] {
        for id in arts.ids(kind) {
            if let Some(a) = arts.describe(run, id) {
                if a.qualname == name {
                    let frq = m.artifact(id).map_or(0, |x| x.frq);
                    if best.as_ref().is_none_or(|(f, _)| frq > *f) {
                        best = Some((frq, ArtifactKey::of(&a)));
                    }
                }
            }
        }
        if best.is_some() {
            break;
        }
    }
    best.map(|(_, k)| k).ok_or_else(|| PanelError::UnknownArtifact { key: name.to_string(), close: close_matches(run, analysis, name) })
}

pub(super) fn kind_name(kind: ArtifactKind) -> &'static str {
    match kind {
        ArtifactKind::Function => "function",
        ArtifactKind::Class => "class",
        ArtifactKind::File => "file",
    }
}

/// Up to five qualified names that look like `wanted` (same name after the last `:` or `.`,
/// a substring either way, or a few edits apart), executed ones first.
pub(super) fn close_matches(run: &Run, analysis: &Analysis, wanted: &str) -> Vec<String> {
    let wanted = wanted.rsplit(':').next().unwrap_or(wanted).to_lowercase();
    let short = wanted.rsplit('.').next().unwrap_or(&wanted).to_string();
    let arts = analysis.artifacts();
    let m = analysis.metrics();
    let mut hits: Vec<(usize, std::cmp::Reverse<u64>, String)> = Vec::new();
    let mut seen = BTreeSet::new();
    for kind in [ArtifactKind::Function, ArtifactKind::Class] {
        for id in arts.ids(kind) {
            let Some(a) = arts.describe(run, id) else { continue };
            let q = a.qualname.to_lowercase();
            let d = edit_distance(&q, &wanted);
            let score = if q.contains(&wanted) || (!q.is_empty() && wanted.contains(&q)) {
                0
            } else if q.rsplit('.').next() == Some(short.as_str()) {
                1
            } else if d <= 3 {
                1 + d
            } else {
                continue;
            };
            if seen.insert(a.qualname.to_string()) {
                hits.push((score, std::cmp::Reverse(m.artifact(id).map_or(0, |x| x.frq)), a.qualname.to_string()));
            }
        }
    }
    hits.sort();
    hits.into_iter().take(5).map(|h| h.2).collect()
}

pub(super) fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for i in 1..=a.len() {
        let mut cur = vec![i; b.len() + 1];
        for j in 1..=b.len() {
            cur[j] = (prev[j] + 1).min(cur[j - 1] + 1).min(prev[j - 1] + usize::from(a[i - 1] != b[j - 1]));
        }
        prev = cur;
    }
    prev[b.len()]
}
