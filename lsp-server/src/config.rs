//! Settings: from `initializationOptions` and `workspace/didChangeConfiguration`.
//!
//! Both accept the settings object itself or wrapped as `{"threadradar": {…}}` (VS Code sends the
//! section). Unknown keys are ignored and a key with a wrong type keeps its previous value: a bad
//! setting never stops the server.

use serde::Serialize;
use serde_json::Value;
use threadradar_analysis::glyph::Theme;
use threadradar_analysis::CountedStates as States;

/// How the hover shows the glyph.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum HoverImage {
    /// An SVG data URI for VS Code, no image (the text glyph only) for other clients.
    Auto,
    /// `![](data:image/svg+xml;base64,…)`.
    Svg,
    /// A PNG rendered with resvg into the cache directory, linked as a `file:` URI.
    Png,
    /// Text only.
    None,
}

/// Which of the server's annotations the editor shows (`annotations`, issue 32). The glyph is
/// the client's own decoration (from `threadRadar/documentArtifacts`); the server filters what
/// it sends beside it. "▶ Profile" lenses on tests are actions, not annotations: `testLens` alone
/// decides them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Annotations {
    /// The glyph only: no inlay hints, no code lenses.
    Glyph,
    /// The glyph and the inlay hints (one line per declaration): no code lenses.
    Hints,
    /// Everything: hints, the declaration, file and timeline lenses, the wait and section lenses.
    All,
}

/// Everything a user can set.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Settings {
    /// Inlay hints at profiled declarations.
    pub inlay_hints: bool,
    /// Parts of the hint label after the crt percentage.
    pub hint_seconds: bool,
    pub hint_threads: bool,
    pub hint_clusters: bool,
    /// A code lens above each profiled declaration.
    pub code_lens: bool,
    /// A "Timeline" lens beside it (opens the timeline on that declaration's bars).
    pub timeline_lens: bool,
    /// The code lens at the top of each profiled file.
    pub file_lens: bool,
    pub hover: bool,
    /// Annotate classes as well as functions and methods.
    pub classes: bool,
    /// Which thread states count as runtime (default `auto`: computing samples weighted by CPU
    /// time when the run has kernel accounting, else computing samples).
    pub states: States,
    /// What every figure, hint, lens and panel counts as a unit of concurrency (`units`:
    /// `threads`, or `tasks`: the run's asyncio tasks, CPython 3.14+; see `docs/asyncio.md`).
    /// Changing it loads the active run again with the other units (and clears the thread filter,
    /// whose ids are units).
    pub units: threadradar_analysis::Units,
    /// Only annotate artifacts with at least this crt, in percent.
    pub min_crt: f64,
    /// Theme of glyph images; `None` means light.
    pub glyph_theme: Theme,
    pub hover_image: HoverImage,
    /// The client renders images in hover Markdown (`markdownImages`): `hoverImage: auto` sends
    /// it an SVG data URI. The VS Code extension says so itself (code-server and other builds
    /// name themselves otherwise); without it, a client named like VS Code still gets images.
    pub markdown_images: bool,
    /// Which annotations are sent (`annotations`: `glyph`, `hints` or `all`). A client that
    /// does not send the key gets everything, as before the setting existed; the editors'
    /// own default is `hints`.
    pub annotations: Annotations,
    /// The client opens the panels itself when asked with `threadRadar/openPanel`.
    pub panels: bool,
    /// How often the runs directories are checked, in milliseconds (besides file watching).
    pub poll_ms: u64,
    /// Send `threadRadar/changed` when the run, the run list, the thread filter or the settings
    /// change (for clients without `workspace/inlayHint/refresh`, and for editor decorations).
    pub notify_changes: bool,
    /// What `threadradar.record` launches when it is given no command.
    pub record_command: Vec<String>,
    /// `threadradar.record` samples the program's Python subprocesses too.
    pub record_subprocesses: bool,
    /// The interpreter the editor has selected (VS Code: the Python extension's active
    /// environment), used for tests when the project configures none.
    pub python: Option<String>,
    /// "▶ Profile" lenses on tests.
    pub test_lens: bool,
    /// How many times `threadradar.record` and `threadradar.profileTest` run the program when the
    /// request names no count: more than 1 makes a run set (issue 17).
    pub repeat: u32,
    /// The keys of the project's `[tool.threadradar]` that the editor overrides (issue 19):
    /// `None` leaves each to the project's file, then to the default. `testCommand`: in
    /// [`crate::project::ProjectConfig::test_command`]'s form (`Some(None)` is pytest).
    pub test_command: Option<Option<Vec<String>>>,
    /// `intervalMs`: milliseconds between samples of `threadradar.profileTest` and
    /// `threadradar.record`.
    pub interval_ms: Option<f64>,
    /// `runsDir`: where runs are written and listed; relative to each workspace folder.
    pub runs_dir: Option<String>,
    /// `keepRuns`: after a test run, older runs without a label or pin are deleted.
    pub keep_runs: Option<usize>,
    /// `include` / `exclude`: the overview's default artifact patterns.
    pub include: Option<Vec<String>>,
    pub exclude: Option<Vec<String>>,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            inlay_hints: true,
            hint_seconds: true,
            hint_threads: true,
            hint_clusters: true,
            code_lens: true,
            timeline_lens: true,
            file_lens: true,
            hover: true,
            classes: true,
            states: States::Auto,
            units: threadradar_analysis::Units::Threads,
            min_crt: 0.1,
            glyph_theme: Theme::Light,
            hover_image: HoverImage::Auto,
            markdown_images: false,
            annotations: Annotations::All,
            panels: false,
            poll_ms: 1000,
            notify_changes: false,
            record_command: vec!["python3".into(), "-m".into(), "pytest".into()],
            record_subprocesses: true,
            python: None,
            test_lens: true,
            repeat: 1,
            test_command: None,
            interval_ms: None,
            runs_dir: None,
            keep_runs: None,
            include: None,
            exclude: None,
        }
    }
}

impl Settings {
    /// Applies the keys present in `value` (the settings or `{"threadradar": settings}`) and
    /// returns a sentence for each key that was ignored.
    pub fn update(&mut self, value: &Value) -> Vec<String> {
        let obj = match value.get("threadradar").or(value.get("threadRadar")).unwrap_or(value) {
            Value::Object(o) => o,
            Value::Null => return Vec::new(),
            _ => return vec!["the settings are not an object".into()],
        };
        let mut ignored = Vec::new();
        for (key, v) in obj {
            let ok = match key.as_str() {
                "inlayHints" => set_bool(&mut self.inlay_hints, v),
                "hintSeconds" => set_bool(&mut self.hint_seconds, v),
                "hintThreads" => set_bool(&mut self.hint_threads, v),
                "hintClusters" => set_bool(&mut self.hint_clusters, v),
                "codeLens" => set_bool(&mut self.code_lens, v),
                "timelineLens" => set_bool(&mut self.timeline_lens, v),
                "fileLens" => set_bool(&mut self.file_lens, v),
                "hover" => set_bool(&mut self.hover, v),
                "classes" => set_bool(&mut self.classes, v),
                "panels" => set_bool(&mut self.panels, v),
                "notifyChanges" => set_bool(&mut self.notify_changes, v),
                "recordSubprocesses" => set_bool(&mut self.record_subprocesses, v),
                "testLens" => set_bool(&mut self.test_lens, v),
                "markdownImages" => set_bool(&mut self.markdown_images, v),
                "annotations" => {
                    let a = match v.as_str() {
                        Some("glyph") => Some(Annotations::Glyph),
                        Some("hints") => Some(Annotations::Hints),
                        Some("all") => Some(Annotations::All),
                        _ => None,
                    };
                    a.map(|a| self.annotations = a).is_some()
                }
                "repeat" => match v.as_u64() {
                    Some(n @ 1..=100) => {
                        self.repeat = n as u32;
                        true
                    }
                    _ => false,
                },
                "python" => match v {
                    Value::Null => {
                        self.python = None;
                        true
                    }
                    Value::String(p) => {
                        self.python = Some(p.clone()).filter(|p| !p.is_empty());
                        true
                    }
                    _ => false,
                },
                "recordCommand" => match v.as_str().map(|line| crate::cmdline::split(line).ok()).unwrap_or_else(|| v.as_array().map(|a| a.iter().map(|x| x.as_str().map(String::from)).collect::<Option<Vec<_>>>()).flatten()) {
                    Some(c) if !c.is_empty() => {
                        self.record_command = c;
                        true
                    }
                    _ => false,
                },
                "states" => match serde_json::from_value::<States>(v.clone()) {
                    Ok(s) => {
                        self.states = s;
                        true
                    }
                    Err(_) => false,
                },
                "units" => match v.as_str().map(str::parse::<threadradar_analysis::Units>) {
                    Some(Ok(u)) => set(&mut self.units, u),
                    _ => false,
                },
                "minCrt" => match v.as_f64() {
                    Some(x) if x.is_finite() && x >= 0.0 => {
                        self.min_crt = x;
                        true
                    }
                    _ => false,
                },
                "glyphTheme" => match v.as_str() {
                    Some("auto") => {
                        self.glyph_theme = Theme::Light;
                        true
                    }
                    Some(s) => Theme::parse(s).map(|t| self.glyph_theme = t).is_some(),
                    None => false,
                },
                "hoverImage" => {
                    let h = match v.as_str() {
                        Some("auto") => Some(HoverImage::Auto),
                        Some("svg") => Some(HoverImage::Svg),
                        Some("png") => Some(HoverImage::Png),
                        Some("none") => Some(HoverImage::None),
                        _ => None,
                    };
                    h.map(|h| self.hover_image = h).is_some()
                }
                // The project's keys (issue 19): `null` or an empty value (`""`, `[]`, `0`) leaves
                // the key to `[tool.threadradar]` again.
                "testCommand" => match v {
                    Value::Null => set(&mut self.test_command, None),
                    Value::String(n) => match n.trim() {
                        "" => set(&mut self.test_command, None),
                        "pytest" => set(&mut self.test_command, Some(None)),
                        "unittest" => set(&mut self.test_command, Some(Some(vec!["unittest".into()]))),
                        _ => false,
                    },
                    Value::Array(a) if a.is_empty() => set(&mut self.test_command, None),
                    Value::Object(o) if o.is_empty() => set(&mut self.test_command, None), // an empty Lua table (Neovim)
                    Value::Array(_) => match strings(v).and_then(crate::project::test_command_words) {
                        Some(c) => set(&mut self.test_command, Some(c)),
                        None => false,
                    },
                    _ => false,
                },
                "intervalMs" => match v {
                    Value::Null => set(&mut self.interval_ms, None),
                    _ => match v.as_f64() {
                        Some(ms) if ms == 0.0 => set(&mut self.interval_ms, None),
                        Some(ms) if ms.is_finite() && (0.05..=10_000.0).contains(&ms) => set(&mut self.interval_ms, Some(ms)),
                        _ => false,
                    },
                },
                "runsDir" => match v {
                    Value::Null => set(&mut self.runs_dir, None),
                    Value::String(d) => set(&mut self.runs_dir, Some(d.trim().to_string()).filter(|d| !d.is_empty())),
                    _ => false,
                },
                "keepRuns" => match v {
                    Value::Null => set(&mut self.keep_runs, None),
                    _ => match v.as_u64() {
                        Some(0) => set(&mut self.keep_runs, None),
                        Some(n @ 1..=1_000_000) => set(&mut self.keep_runs, Some(n as usize)),
                        _ => false,
                    },
                },
                "include" => set_patterns(&mut self.include, v),
                "exclude" => set_patterns(&mut self.exclude, v),
                "pollMs" => match v.as_u64() {
                    Some(ms) => {
                        self.poll_ms = ms.clamp(100, 60_000);
                        true
                    }
                    None => false,
                },
                _ => true, // unknown keys (other tools' settings) are not an error
            };
            if !ok {
                ignored.push(format!("ignored the setting {key} = {v}: wrong type or value"));
            }
        }
        ignored
    }
}

impl Settings {
    /// Inlay hints are sent: `inlayHints` and an `annotations` level that shows them.
    pub fn sends_hints(&self) -> bool {
        self.inlay_hints && self.annotations != Annotations::Glyph
    }

    /// The figures' code lenses (declaration, file, timeline, wait and section lenses) are sent.
    pub fn sends_lenses(&self) -> bool {
        self.annotations == Annotations::All
    }

    /// The editor's overrides of the project's test configuration.
    pub fn overrides(&self) -> crate::project::Overrides {
        crate::project::Overrides { test_command: self.test_command.clone(), interval_ms: self.interval_ms, runs_dir: self.runs_dir.clone(), keep_runs: self.keep_runs }
    }
}

fn set<T>(slot: &mut T, v: T) -> bool {
    *slot = v;
    true
}

/// A list of strings, else `None`.
fn strings(v: &Value) -> Option<Vec<String>> {
    v.as_array()?.iter().map(|x| x.as_str().map(String::from)).collect()
}

/// `include` / `exclude`: a list of regular expressions (`null` or `[]`: the project's); a
/// pattern that does not compile keeps the previous value.
fn set_patterns(slot: &mut Option<Vec<String>>, v: &Value) -> bool {
    match v {
        Value::Null => set(slot, None),
        Value::Object(o) if o.is_empty() => set(slot, None), // an empty Lua table (Neovim)
        _ => match strings(v) {
            Some(p) if p.is_empty() => set(slot, None),
            Some(p) if threadradar_analysis::filter::ArtifactFilter::new(&p, &[]).is_ok() => set(slot, Some(p)),
            _ => false,
        },
    }
}

fn set_bool(slot: &mut bool, v: &Value) -> bool {
    match v.as_bool() {
        Some(b) => {
            *slot = b;
            true
        }
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn wrapped_or_bare_and_bad_values_keep_the_old_value() {
        let mut s = Settings::default();
        assert!(s.update(&json!({"threadradar": {"inlayHints": false, "states": "all", "minCrt": 2.5}})).is_empty());
        assert!(!s.inlay_hints);
        assert_eq!(s.states, States::All);
        let ignored = s.update(&json!({"minCrt": "lots", "glyphTheme": "dark", "whatever": 1}));
        assert_eq!(ignored.len(), 1);
        assert_eq!(s.min_crt, 2.5);
        assert_eq!(s.glyph_theme, Theme::Dark);
        assert_eq!(s.update(&json!(7)).len(), 1);
        assert!(s.update(&Value::Null).is_empty());
    }

    #[test]
    fn units_are_threads_or_tasks() {
        use threadradar_analysis::Units;
        let mut s = Settings::default();
        assert_eq!(s.units, Units::Threads);
        assert!(s.update(&json!({"threadradar": {"units": "tasks"}})).is_empty());
        assert_eq!(s.units, Units::Tasks);
        let ignored = s.update(&json!({"units": "fibres"}));
        assert!(ignored.len() == 1 && ignored[0].contains("units"), "{ignored:?}");
        assert_eq!(s.units, Units::Tasks, "a bad value keeps the previous one");
    }

    #[test]
    fn annotations_levels_and_the_image_flag() {
        let mut s = Settings::default();
        assert_eq!((s.annotations, s.sends_hints(), s.sends_lenses(), s.markdown_images), (Annotations::All, true, true, false), "a client without the keys gets everything");
        assert!(s.update(&json!({"threadradar": {"annotations": "hints", "markdownImages": true}})).is_empty());
        assert_eq!((s.sends_hints(), s.sends_lenses(), s.markdown_images), (true, false, true));
        assert!(s.update(&json!({"annotations": "glyph"})).is_empty());
        assert_eq!((s.sends_hints(), s.sends_lenses()), (false, false));
        assert_eq!(s.update(&json!({"annotations": "everything", "markdownImages": "yes"})).len(), 2, "a bad value is one sentence each");
        assert_eq!((s.annotations, s.markdown_images), (Annotations::Glyph, true), "and keeps the previous value");
        assert!(s.update(&json!({"annotations": "all", "inlayHints": false})).is_empty());
        assert_eq!((s.sends_hints(), s.sends_lenses()), (false, true), "inlayHints: false still turns the hints off");
    }

    #[test]
    fn project_overrides_parse_clear_and_keep_the_old_value_on_a_bad_one() {
        let mut s = Settings::default();
        assert_eq!(s.overrides(), crate::project::Overrides::default(), "nothing overridden by default");
        let template = json!(["{python}", "-m", "pytest", "-x", "{tests}"]);
        let ignored = s.update(&json!({"threadradar": {
            "testCommand": template, "intervalMs": 5, "runsDir": " profiles/editor ", "keepRuns": 3,
            "include": ["pool\\.py$"], "exclude": ["^tests/"]
        }}));
        assert!(ignored.is_empty(), "{ignored:?}");
        let words = |a: &[&str]| a.iter().map(|w| w.to_string()).collect::<Vec<_>>();
        assert_eq!(s.test_command, Some(Some(words(&["{python}", "-m", "pytest", "-x", "{tests}"]))));
        assert_eq!(s.interval_ms, Some(5.0));
        assert_eq!(s.runs_dir.as_deref(), Some("profiles/editor"));
        assert_eq!(s.keep_runs, Some(3));
        assert_eq!(s.include, Some(words(&["pool\\.py$"])));
        assert_eq!(s.exclude, Some(words(&["^tests/"])));
        let o = s.overrides();
        assert_eq!((o.interval_ms, o.keep_runs, o.runs_dir.as_deref()), (Some(5.0), Some(3), Some("profiles/editor")));
        assert_eq!(o.test_command, s.test_command);

        // Wrong types and values: one sentence each, the previous value stays.
        let ignored = s.update(&json!({
            "testCommand": "nose", "intervalMs": "fast", "runsDir": 3, "keepRuns": -1, "include": ["("], "exclude": [1]
        }));
        assert_eq!(ignored.len(), 6, "{ignored:?}");
        assert!(ignored.iter().all(|i| i.starts_with("ignored the setting ") && i.ends_with(": wrong type or value")), "{ignored:?}");
        for bad in [json!({"intervalMs": 0.01}), json!({"intervalMs": 20000}), json!({"keepRuns": 2.5}), json!({"testCommand": ["{python}", ""]}), json!({"testCommand": [1]})] {
            assert_eq!(s.update(&bad).len(), 1, "{bad}");
        }
        assert_eq!(s.test_command, Some(Some(words(&["{python}", "-m", "pytest", "-x", "{tests}"]))));
        assert_eq!((s.interval_ms, s.keep_runs, s.runs_dir.as_deref()), (Some(5.0), Some(3), Some("profiles/editor")));
        assert_eq!(s.include, Some(words(&["pool\\.py$"])));

        // Runner names; a one-word ["pytest"] is pytest too (VS Code's setting is a list).
        assert!(s.update(&json!({"testCommand": "unittest"})).is_empty());
        assert_eq!(s.test_command, Some(Some(words(&["unittest"]))));
        assert!(s.update(&json!({"testCommand": ["pytest"]})).is_empty());
        assert_eq!(s.test_command, Some(None));
        assert!(s.update(&json!({"testCommand": "pytest", "intervalMs": 0.05})).is_empty());
        assert_eq!((s.test_command.clone(), s.interval_ms), (Some(None), Some(0.05)));

        // null, or the empty value VS Code sends by default, leaves each key to the project again.
        assert!(s.update(&json!({"testCommand": [], "intervalMs": 0, "runsDir": "", "keepRuns": 0, "include": [], "exclude": null})).is_empty());
        assert_eq!(s.overrides(), crate::project::Overrides::default());
        assert_eq!((s.include.clone(), s.exclude.clone()), (None, None));
        assert!(s.update(&json!({"testCommand": "unittest", "intervalMs": 1, "runsDir": "r", "keepRuns": 1, "include": ["a"]})).is_empty());
        assert!(s.update(&json!({"testCommand": null, "intervalMs": null, "runsDir": null, "keepRuns": null, "include": null})).is_empty());
        assert_eq!(s, Settings::default());
        // An empty Lua table arrives from Neovim as `{}`.
        assert!(s.update(&json!({"testCommand": "unittest", "exclude": ["x"]})).is_empty());
        assert!(s.update(&json!({"testCommand": {}, "exclude": {}})).is_empty());
        assert_eq!(s, Settings::default());
    }
}
