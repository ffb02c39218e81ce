//! `documentArtifacts` and `artifactAt`: the run's declarations in a document as it is now.
//! Inlay hints, code lenses and hovers are drawn from the same [`placed`].

use crate::config::Settings;
use crate::figures::{FileFigures, Figures, Profiled};
use crate::host::{DocRef, Host};
use crate::protocol::{ArtifactAtParams, ArtifactAtResult, DocumentArtifact, DocumentArtifactsParams, DocumentArtifactsResult, FileEntry, ProtocolError};
use crate::render;
use crate::runs::LoadedRun;
use crate::text::Document;
use std::path::PathBuf;
use std::sync::Arc;
use threadradar_analysis::glyph::{self, RadarSpec, SvgOptions, Theme};
use threadradar_analysis::ArtifactKind;
use threadradar_profiler::source::SourceIndex;

/// The profiled artifacts of one document with their current lines.
pub struct Placed {
    pub loaded: Arc<LoadedRun>,
    pub figures: Arc<Figures>,
    pub file: Arc<FileFigures>,
    pub doc: Arc<Document>,
    /// (index in `file.artifacts`, current 0-based line), in `file.artifacts` order.
    pub items: Vec<(usize, u32)>,
    /// Declarations the current text no longer has.
    pub stale: usize,
    pub settings: Settings,
}

impl Placed {
    pub fn run_name(&self) -> String {
        self.loaded.path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()
    }
}

/// The profiled artifacts of a document where they are now; `None` when there is no run, the run
/// does not know the file, or the file cannot be read.
pub fn placed(host: &dyn Host, doc: &DocRef) -> Option<Placed> {
    let (loaded, figures) = host.figures().ok()?;
    let key = loaded.file_key(&doc.path)?.to_string();
    let (text, mapping) = host.document(doc, &loaded, &key)?;
    let settings = host.settings();
    let file = figures.files.get(&key).cloned().unwrap_or_default();
    let mut items = Vec::new();
    let mut stale = 0;
    for (i, p) in file.artifacts.iter().enumerate() {
        if p.view.crt * 100.0 < settings.min_crt || (p.view.kind == ArtifactKind::Class && !settings.classes) {
            continue;
        }
        match mapping.line(p.view.kind, &p.view.qualname, p.view.line) {
            Some(Some(line)) if line < text.line_count() => items.push((i, line)),
            Some(_) => stale += 1,
            None => {}
        }
    }
    Some(Placed { loaded, figures, file, doc: text, items, stale, settings })
}

/// A request's document: `uri` (a `file:` URI) or `file` (a path).
fn doc_ref(uri: Option<&str>, file: Option<&str>, method: &str) -> Result<DocRef, ProtocolError> {
    match (uri, file) {
        (Some(u), _) => {
            let parsed: tower_lsp_server::lsp_types::Uri = u.parse().map_err(|_| ProtocolError::invalid(format!("{u:?} is not a URI")))?;
            let path = tower_lsp_server::UriExt::to_file_path(&parsed)
                .ok_or_else(|| ProtocolError::invalid(format!("{u:?} is not a file: URI")))?
                .into_owned();
            Ok(DocRef { path, uri: Some(parsed.as_str().to_string()) })
        }
        (None, Some(f)) => Ok(DocRef { path: PathBuf::from(f), uri: None }),
        (None, None) => Err(ProtocolError::invalid(format!("{method} needs {{\"uri\": document URI}} or {{\"file\": path}}"))),
    }
}

/// One placed declaration as the protocol carries it.
pub fn document_artifact(p: &Placed, i: usize, line: u32, svg: Option<(Theme, u32)>) -> DocumentArtifact {
    let a: &Profiled = &p.file.artifacts[i];
    let v = &a.view;
    let text = p.doc.line(line).unwrap_or("");
    let indent: u32 = text.chars().take_while(|c| c.is_whitespace()).map(|c| c.len_utf16() as u32).sum();
    DocumentArtifact {
        key: a.key.clone(),
        kind: v.kind,
        name: v.name.clone(),
        qualname: v.qualname.clone(),
        line,
        character: indent,
        end_character: text.encode_utf16().count() as u32,
        recorded_line: v.line,
        crt: v.crt,
        self_crt: v.self_crt,
        seconds: v.seconds,
        samples: v.samples,
        threads: v.threads,
        thread_types: v.thread_types,
        cells: v.glyph.clone(),
        text: render::cells(&v.glyph),
        label: render::hint_label(v, &p.figures, &p.settings),
        glyph_svg: svg.map(|(theme, size)| glyph::svg(&RadarSpec::from(v), &SvgOptions { size, theme, interactive: false, title: Some(v.qualname.clone()) })),
    }
}

pub fn document_artifacts(host: &dyn Host, req: DocumentArtifactsParams) -> Result<DocumentArtifactsResult, ProtocolError> {
    let doc = doc_ref(req.uri.as_deref(), req.file.as_deref(), "documentArtifacts")?;
    let svg = req.glyph.map(|g| (g.theme.unwrap_or(host.defaults().theme), g.size.unwrap_or(glyph::IN_SITU_PX).clamp(8, 512)));
    let Some(p) = placed(host, &doc) else {
        let active = host.active().ok();
        return Ok(DocumentArtifactsResult {
            run: active.as_ref().and_then(|a| a.path.file_name().map(|n| n.to_string_lossy().into_owned())),
            generation: active.as_ref().map_or(0, |a| a.generation),
            exclude_threads: host.defaults().exclude_threads,
            stale: 0,
            file: None,
            artifacts: Vec::new(),
        });
    };
    let mut items = p.items.clone();
    items.sort_by_key(|&(_, line)| line);
    let artifacts = items.iter().map(|&(i, line)| document_artifact(&p, i, line, svg)).collect();
    let file = p.file.file.as_ref().map(|f| FileEntry {
        key: p.loaded.file_key(&doc.path).map(|k| threadradar_analysis::panel::ArtifactKey::file(k)),
        crt: f.crt,
        seconds: f.seconds,
    });
    Ok(DocumentArtifactsResult {
        run: Some(p.run_name()),
        generation: p.figures.generation,
        exclude_threads: p.figures.params.exclude_threads.clone(),
        stale: p.stale,
        file,
        artifacts,
    })
}

/// The innermost profiled function and class at a position: the definitions around it are found
/// with tree-sitter in the current text (decorators, nesting, `async def`, one-line definitions
/// and tabs as Python sees them), then matched to the placed declarations by kind, qualified name
/// and current line.
pub fn artifact_at(host: &dyn Host, req: ArtifactAtParams) -> Result<ArtifactAtResult, ProtocolError> {
    let doc = doc_ref(req.uri.as_deref(), req.file.as_deref(), "artifactAt")?;
    let none = ArtifactAtResult { function: None, class: None };
    let Some(p) = placed(host, &doc) else { return Ok(none) };
    if req.line >= p.doc.line_count() {
        return Ok(none);
    }
    let index = SourceIndex::parse(p.doc.text());
    let (function, class) = index.enclosing(req.line + 1);
    // The definitions around the position, innermost first: the innermost one that was profiled
    // wins (a local helper that never ran gives way to the function around it).
    let start = match (function, class) {
        (Some(f), Some(c)) => Some(if index.defs[f].start_line >= index.defs[c].start_line { f } else { c }),
        (f, c) => f.or(c),
    };
    let chain: Vec<usize> = std::iter::successors(start, |&i| index.defs[i].parent).collect();
    let find = |kind: ArtifactKind| -> Option<DocumentArtifact> {
        chain.iter().find_map(|&d| {
            let d = &index.defs[d];
            p.items
                .iter()
                .find(|&&(i, line)| {
                    let v = &p.file.artifacts[i].view;
                    v.kind == kind && v.qualname == d.qualname && line + 1 == d.line
                })
                .map(|&(i, line)| document_artifact(&p, i, line, None))
        })
    };
    Ok(ArtifactAtResult { function: find(ArtifactKind::Function), class: find(ArtifactKind::Class) })
}
