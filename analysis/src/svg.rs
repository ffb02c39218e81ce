//! The one SVG writer: escaping, numbers, elements and the themes' palettes, used by the radar
//! glyph, the histogram and the timeline chart. Every attribute value and every text node goes
//! through [`escape`] on its way into the document, so a thread named `<script>` stays text.

use serde::Serialize;
use std::fmt::{self, Display, Write};

/// The SVG namespace of a standalone document.
pub const XMLNS: &str = "http://www.w3.org/2000/svg";
/// The font stack of every text: one that the rasteriser (resvg with the system's fonts) and
/// browsers both have.
pub const FONT: &str = "DejaVu Sans, Verdana, sans-serif";

/// Escapes text for SVG/XML content and attribute values. Control characters other than tab and
/// newline are not allowed in XML 1.0 and become U+FFFD.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let _ = Escaping(&mut out).write_str(s);
    out
}

/// A `fmt::Write` that escapes what passes through it.
struct Escaping<'a>(&'a mut String);

impl Write for Escaping<'_> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        for ch in s.chars() {
            match ch {
                '&' => self.0.push_str("&amp;"),
                '<' => self.0.push_str("&lt;"),
                '>' => self.0.push_str("&gt;"),
                '"' => self.0.push_str("&quot;"),
                '\'' => self.0.push_str("&#39;"),
                c if (c as u32) < 0x20 && c != '\n' && c != '\t' => self.0.push('\u{FFFD}'),
                c => self.0.push(c),
            }
        }
        Ok(())
    }
}

/// A number for an SVG attribute: two decimals at most, no trailing zeros, no `-0`.
pub fn num(x: f64) -> String {
    Num(x).to_string()
}

/// [`num`] as a `Display`, for attribute lists.
#[derive(Clone, Copy, Debug)]
pub struct Num(pub f64);

impl Display for Num {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = format!("{:.2}", self.0);
        let s = s.trim_end_matches('0').trim_end_matches('.');
        f.write_str(if s == "-0" { "0" } else { s })
    }
}

/// One attribute: a name and any displayable value (escaped when written).
pub type Attr<'a> = (&'a str, &'a dyn Display);

/// Writes an SVG document element by element.
#[derive(Default)]
pub struct Writer {
    out: String,
}

impl Writer {
    /// A standalone document `width` × `height` px (`xmlns`, `class`, `width`, `height`,
    /// `viewBox`, then `attrs`), open until [`Writer::finish`].
    pub fn document(class: &str, width: impl Display, height: impl Display, attrs: &[Attr]) -> Writer {
        let mut w = Writer::default();
        let view_box = format!("0 0 {width} {height}");
        let mut all: Vec<Attr> = vec![("xmlns", &XMLNS), ("class", &class), ("width", &width), ("height", &height), ("viewBox", &view_box)];
        all.extend_from_slice(attrs);
        w.start("svg", &all);
        w
    }

    /// A fragment (elements to be placed inside another document).
    pub fn fragment() -> Writer {
        Writer::default()
    }

    fn open_tag(&mut self, tag: &str, attrs: &[Attr]) {
        self.out.push('<');
        self.out.push_str(tag);
        for (name, value) in attrs {
            self.out.push(' ');
            self.out.push_str(name);
            self.out.push_str("=\"");
            let _ = write!(Escaping(&mut self.out), "{value}");
            self.out.push('"');
        }
    }

    /// `<tag attrs…>`; close it with [`Writer::end`].
    pub fn start(&mut self, tag: &str, attrs: &[Attr]) -> &mut Self {
        self.open_tag(tag, attrs);
        self.out.push('>');
        self
    }

    /// `</tag>`.
    pub fn end(&mut self, tag: &str) -> &mut Self {
        self.out.push_str("</");
        self.out.push_str(tag);
        self.out.push('>');
        self
    }

    /// `<tag attrs…/>`.
    pub fn empty(&mut self, tag: &str, attrs: &[Attr]) -> &mut Self {
        self.open_tag(tag, attrs);
        self.out.push_str("/>");
        self
    }

    /// Text content, escaped.
    pub fn text(&mut self, text: impl Display) -> &mut Self {
        let _ = write!(Escaping(&mut self.out), "{text}");
        self
    }

    /// `<tag attrs…>text</tag>`, the text escaped.
    pub fn element(&mut self, tag: &str, attrs: &[Attr], text: impl Display) -> &mut Self {
        self.start(tag, attrs).text(text).end(tag)
    }

    /// `<title>text</title>`: the tooltip of the enclosing element.
    pub fn title(&mut self, text: impl Display) -> &mut Self {
        self.element("title", &[], text)
    }

    /// Appends a fragment written by another [`Writer`].
    pub fn append(&mut self, fragment: Writer) -> &mut Self {
        self.out.push_str(&fragment.out);
        self
    }

    /// Closes the document (when it was opened with [`Writer::document`]) and returns it.
    pub fn finish(mut self) -> String {
        if self.out.starts_with("<svg") {
            self.end("svg");
        }
        self.out
    }
}

/// Light or dark background: `radar --theme`, the panels' and the language server's `theme`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, serde::Deserialize, ts_rs::TS)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[serde(rename_all = "snake_case")]
pub enum Theme {
    #[default]
    Light,
    Dark,
}

impl Theme {
    pub fn parse(s: &str) -> Option<Theme> {
        s.parse().ok()
    }
    pub fn as_str(self) -> &'static str {
        match self {
            Theme::Light => "light",
            Theme::Dark => "dark",
        }
    }
}

impl Display for Theme {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for Theme {
    type Err = crate::error::AnalysisError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "light" => Ok(Theme::Light),
            "dark" => Ok(Theme::Dark),
            _ => Err(crate::error::AnalysisError::BadValue { what: "theme", value: s.to_string(), expected: "light or dark" }),
        }
    }
}

/// The colours of one theme. Cluster colours are indexed by `glyph::ClusterColour` (low, middle,
/// high): blue, amber and red, which differ in hue *and* lightness so they stay apart at 32 px and
/// for the common colour-vision deficiencies; `weak` has the same hue at a lower saturation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, ts_rs::TS)]
pub struct Palette {
    pub strong: [&'static str; 3],
    pub weak: [&'static str; 3],
    /// Guide circles and pedestals.
    pub guide: &'static str,
    pub text: &'static str,
    pub background: &'static str,
    /// The outline of a hovered sector (the paper's orange).
    pub outline: &'static str,
    /// Deselected threads.
    pub deselected: &'static str,
}

pub const LIGHT: Palette = Palette {
    strong: ["#2f6fd0", "#e0a100", "#d42a2a"],
    weak: ["#aac3ea", "#f1dca0", "#eeb0ab"],
    guide: "#8a8a8a",
    text: "#222222",
    background: "#ffffff",
    outline: "#ff7a00",
    deselected: "#9a9a9a",
};

pub const DARK: Palette = Palette {
    strong: ["#5b9bff", "#f5c242", "#ff5c5c"],
    weak: ["#2d4a78", "#6b5a26", "#743535"],
    guide: "#9a9a9a",
    text: "#e6e6e6",
    background: "#1e1e1e",
    outline: "#ff9a2e",
    deselected: "#6e6e6e",
};

impl Palette {
    pub fn of(theme: Theme) -> &'static Palette {
        match theme {
            Theme::Light => &LIGHT,
            Theme::Dark => &DARK,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_from_the_program_stay_text() {
        let mut w = Writer::document("t", Num(10.0), Num(5.5), &[("data-name", &"<script>\"x\"</script>")]);
        w.element("text", &[("x", &Num(1.0))], "a & <b>\u{1}");
        let s = w.finish();
        assert_eq!(
            s,
            r#"<svg xmlns="http://www.w3.org/2000/svg" class="t" width="10" height="5.5" viewBox="0 0 10 5.5" data-name="&lt;script&gt;&quot;x&quot;&lt;/script&gt;"><text x="1">a &amp; &lt;b&gt;�</text></svg>"#
        );
    }

    #[test]
    fn numbers_are_short() {
        assert_eq!([num(1.0), num(-0.001), num(2.346), num(2.5)], ["1", "0", "2.35", "2.5"].map(String::from));
    }
}
