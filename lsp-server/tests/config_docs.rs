//! Every configuration the documentation shows is one the program accepts: each TOML block of
//! `docs/*.md`, `README.md` and the editors' READMEs, and every `pyproject.toml` /
//! `threadradar.toml` of the samples, is loaded through the one schema (as `threadradar test`, the
//! language server and `threadradar sections` load it) from a real file, and any error fails the
//! test. Every key the prose names as "`[tool.threadradar] key`" is a key of the schema.

use std::path::{Path, PathBuf};
use threadradar_lsp::project::{ProjectConfig, KEYS};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

/// The Markdown files that document the configuration.
fn markdown_files() -> Vec<PathBuf> {
    let root = repo();
    let mut files: Vec<PathBuf> = std::fs::read_dir(root.join("docs")).unwrap().map(|e| e.unwrap().path()).filter(|p| p.extension().is_some_and(|e| e == "md")).collect();
    files.push(root.join("README.md"));
    files.push(root.join("editors/vscode/README.md"));
    files.push(root.join("editors/nvim/README.md"));
    files.sort();
    files
}

/// The ```toml blocks of a Markdown text, with the line each starts on.
fn toml_blocks(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut current: Option<(usize, String)> = None;
    for (i, line) in text.lines().enumerate() {
        let t = line.trim_start();
        match &mut current {
            None if t.starts_with("```toml") => current = Some((i + 1, String::new())),
            Some(_) if t.starts_with("```") => out.push(current.take().unwrap()),
            Some((_, body)) => {
                body.push_str(line);
                body.push('\n');
            }
            None => {}
        }
    }
    out
}

/// Loads `text` as a project's configuration file from a real directory: a block with
/// `[tool.threadradar]` as `pyproject.toml`, any other as `threadradar.toml`.
fn load(text: &str) -> Result<ProjectConfig, String> {
    let dir = tempfile::tempdir().unwrap();
    let name = if text.contains("[tool.") { "pyproject.toml" } else { "threadradar.toml" };
    std::fs::write(dir.path().join(name), text).unwrap();
    ProjectConfig::load(dir.path())
}

#[test]
fn every_toml_block_in_the_docs_loads() {
    let mut blocks = 0;
    let mut errors = Vec::new();
    for md in markdown_files() {
        let text = std::fs::read_to_string(&md).unwrap();
        for (line, block) in toml_blocks(&text) {
            blocks += 1;
            let loaded = load(&block);
            match loaded {
                Ok(c) if c.file.is_none() => errors.push(format!("{}:{line}: the block configures nothing", md.display())),
                Ok(_) => {}
                Err(e) => errors.push(format!("{}:{line}: {e}", md.display())),
            }
        }
    }
    assert!(blocks >= 2, "the TOML blocks of docs/testing.md and docs/sections.md were not found");
    assert!(errors.is_empty(), "configuration examples that do not load:\n{}", errors.join("\n"));
}

#[test]
fn every_sample_configuration_loads() {
    let root = repo();
    let mut found = 0;
    for dir in ["samples", "tests", "editors/nvim/tests"] {
        let mut stack = vec![root.join(dir)];
        while let Some(d) = stack.pop() {
            let Ok(entries) = std::fs::read_dir(&d) else { continue };
            for e in entries.flatten() {
                let p = e.path();
                if p.is_dir() && !p.ends_with("node_modules") {
                    stack.push(p);
                } else if p.file_name().is_some_and(|n| n == "pyproject.toml" || n == "threadradar.toml") {
                    found += 1;
                    if let Err(e) = ProjectConfig::load(p.parent().unwrap()) {
                        panic!("{}: {e}", p.display());
                    }
                }
            }
        }
    }
    assert!(found >= 1, "samples/python/testproject/pyproject.toml was not found");
}

#[test]
fn every_key_the_prose_names_is_a_key() {
    let keys: Vec<&str> = KEYS.split(", ").collect();
    let mut unknown = Vec::new();
    for md in markdown_files() {
        let text = std::fs::read_to_string(&md).unwrap();
        for (i, line) in text.lines().enumerate() {
            for (at, _) in line.match_indices("[tool.threadradar] ") {
                let rest = &line[at + "[tool.threadradar] ".len()..];
                let word: String = rest.trim_start_matches('`').chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_').collect();
                // "[tool.threadradar] /…/pyproject.toml line 12" (a message) and prose that goes on.
                if word.is_empty() || !word.chars().next().unwrap().is_ascii_lowercase() || ["configuration", "in", "of", "and", "is"].contains(&word.as_str()) {
                    continue;
                }
                if !keys.contains(&word.as_str()) {
                    unknown.push(format!("{}:{}: `{word}`", md.display(), i + 1));
                }
            }
        }
    }
    assert!(unknown.is_empty(), "keys named in the docs that [tool.threadradar] does not have (its keys: {KEYS}):\n{}", unknown.join("\n"));
}
