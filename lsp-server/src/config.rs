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
    /// Only annotate artifacts with at least this crt, in percent.
    pub min_crt: f64,
    /// Theme of glyph images; `None` means light.
    pub glyph_theme: Theme,
    pub hover_image: HoverImage,
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
            min_crt: 0.1,
            glyph_theme: Theme::Light,
            hover_image: HoverImage::Auto,
            panels: false,
            poll_ms: 1000,
            notify_changes: false,
            record_command: vec!["python3".into(), "-m".into(), "pytest".into()],
            record_subprocesses: true,
            python: None,
            test_lens: true,
            repeat: 1,
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
                "recordCommand" => match v.as_array().map(|a| a.iter().map(|x| x.as_str().map(String::from)).collect::<Option<Vec<_>>>()) {
                    Some(Some(c)) if !c.is_empty() => {
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
}
