//! The ThreadRadar glyph's data (paper §3, spec §4), independent of how it is drawn: the
//! three-level scale, the cluster colour positions, and a one-line text rendering for terminals.

use crate::analysis::Cluster;
use crate::svg::{num, Num, Writer, FONT};
use serde::Serialize;
use std::fmt;

/// A value on the glyph's three-level radius scale (paper §3.2): low < 33 %, medium ≥ 33 % and
/// < 66 %, high ≥ 66 %.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
pub enum RadarLevel {
    Low,
    Medium,
    High,
}

impl RadarLevel {
    pub fn of(fraction: f64) -> RadarLevel {
        if fraction >= 0.66 {
            RadarLevel::High
        } else if fraction >= 0.33 {
            RadarLevel::Medium
        } else {
            RadarLevel::Low
        }
    }

    /// A block whose height shows the level.
    pub fn block(self) -> char {
        match self {
            RadarLevel::Low => '▂',
            RadarLevel::Medium => '▅',
            RadarLevel::High => '█',
        }
    }
}

/// Which of the three stable cluster colours a cluster gets.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
pub enum ClusterColour {
    Low,
    Middle,
    High,
}

impl ClusterColour {
    /// The colours of `n` clusters ordered low → high: one cluster is "low", two are "low" and
    /// "high", three use all three. The lowest and highest clusters thus always look the same.
    pub fn for_clusters(n: usize) -> &'static [ClusterColour] {
        use ClusterColour::*;
        match n {
            0 => &[],
            1 => &[Low],
            2 => &[Low, High],
            _ => &[Low, Middle, High],
        }
    }
}

/// One sector of the text glyph.
///
/// Serialised with its characters (`text`, e.g. `▂▅×9`), so that no client spells the text glyph
/// itself: editors draw `text` in the cell's `colour`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(into = "GlyphCellJson")]
pub struct GlyphCell {
    pub colour: ClusterColour,
    /// Threads in the cluster (the sector's angle).
    pub threads: usize,
    /// Level of the cluster's average (the strong sector's radius).
    pub avg: RadarLevel,
    /// Level of the cluster's sum (the weak sector's radius).
    pub sum: RadarLevel,
}

/// [`GlyphCell`] as the protocol carries it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, ts_rs::TS)]
#[ts(rename = "GlyphCell")]
pub struct GlyphCellJson {
    pub colour: ClusterColour,
    /// Threads in the cluster (the sector's angle).
    pub threads: usize,
    /// Level of the cluster's average (the strong sector's radius).
    pub avg: RadarLevel,
    /// Level of the cluster's sum (the weak sector's radius).
    pub sum: RadarLevel,
    /// The cell as text: average level, sum level, thread count (`▂▅×9`).
    pub text: String,
}

impl From<GlyphCell> for GlyphCellJson {
    fn from(c: GlyphCell) -> GlyphCellJson {
        GlyphCellJson { colour: c.colour, threads: c.threads, avg: c.avg, sum: c.sum, text: c.to_string() }
    }
}

impl ts_rs::TS for GlyphCell {
    type WithoutGenerics = GlyphCell;
    type OptionInnerType = GlyphCell;
    fn name(cfg: &ts_rs::Config) -> String {
        GlyphCellJson::name(cfg)
    }
    fn inline(cfg: &ts_rs::Config) -> String {
        GlyphCellJson::inline(cfg)
    }
    fn decl(cfg: &ts_rs::Config) -> String {
        GlyphCellJson::decl(cfg)
    }
}

impl fmt::Display for GlyphCell {
    /// `▂▅×9`: average level, sum level, thread count.
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "{}{}×{}", self.avg.block(), self.sum.block(), self.threads)
    }
}

/// The text glyph of a list of clusters (low → high): one cell per cluster.
pub fn text_glyph(clusters: &[Cluster]) -> Vec<GlyphCell> {
    let colours = ClusterColour::for_clusters(clusters.len().min(3));
    clusters
        .iter()
        .zip(colours.iter().chain(std::iter::repeat(&ClusterColour::High)))
        .map(|(c, &colour)| GlyphCell { colour, threads: c.threads.len(), avg: RadarLevel::of(c.avg), sum: RadarLevel::of(c.sum) })
        .collect()
}

/// The cells joined by spaces, without colour: `▂▅×9 ██×1`.
pub fn text_glyph_plain(clusters: &[Cluster]) -> String {
    text_glyph(clusters).iter().map(|c| c.to_string()).collect::<Vec<_>>().join(" ")
}

// ---------------------------------------------------------------------------------------------
// The palette: one definition of the cluster colours, shared by the SVG glyph, the histogram,
// the web panels (through the API's `palette`) and the terminal (`ClusterColour::ansi`).
// ---------------------------------------------------------------------------------------------

// The themes and their palettes are the SVG writer's; glyph users find them here too.
pub use crate::svg::{Palette, Theme, DARK, LIGHT};

impl ClusterColour {
    pub fn index(self) -> usize {
        self as usize
    }
    /// `low`, `middle`, `high`: the CSS class names of the panels.
    pub fn name(self) -> &'static str {
        match self {
            ClusterColour::Low => "low",
            ClusterColour::Middle => "middle",
            ClusterColour::High => "high",
        }
    }
    pub fn strong(self, theme: Theme) -> &'static str {
        Palette::of(theme).strong[self.index()]
    }
    pub fn weak(self, theme: Theme) -> &'static str {
        Palette::of(theme).weak[self.index()]
    }
    /// The ANSI colour code of the terminal's text glyph (blue, yellow, red: the same hues).
    pub fn ansi(self) -> &'static str {
        match self {
            ClusterColour::Low => "34",
            ClusterColour::Middle => "33",
            ClusterColour::High => "31",
        }
    }
    /// The colour of cluster `i` of `n` (clusters ordered low → high).
    pub fn of(i: usize, n: usize) -> ClusterColour {
        ClusterColour::for_clusters(n.min(3)).get(i).copied().unwrap_or(ClusterColour::High)
    }
}

// ---------------------------------------------------------------------------------------------
// The SVG glyph (paper §3.2, Fig. 3d).
// ---------------------------------------------------------------------------------------------

/// One sector's data.
#[derive(Clone, Debug, PartialEq, Serialize, ts_rs::TS)]
pub struct RadarCluster {
    /// Threads in the cluster: the sector's angle.
    pub threads: usize,
    /// Average metric value (fraction): the strong sector's radius on the three-level scale.
    pub avg: f64,
    /// Summed metric value (fraction): the weak sector's radius.
    pub sum: f64,
}

/// Everything a ThreadRadar shows.
#[derive(Clone, Debug, Default, PartialEq, Serialize, ts_rs::TS)]
pub struct RadarSpec {
    /// Clusters low → high.
    pub clusters: Vec<RadarCluster>,
    /// Lower pedestal: threads that executed the artifact.
    pub threads: usize,
    /// Upper pedestal: their thread types.
    pub thread_types: usize,
}

impl RadarSpec {
    pub fn from_clusters(clusters: &[crate::view::ClusterView], threads: usize, thread_types: usize) -> RadarSpec {
        RadarSpec {
            clusters: clusters.iter().map(|c| RadarCluster { threads: c.threads.len(), avg: c.avg, sum: c.sum }).collect(),
            threads,
            thread_types,
        }
    }
}

impl From<&crate::view::ArtifactView> for RadarSpec {
    fn from(a: &crate::view::ArtifactView) -> RadarSpec {
        RadarSpec::from_clusters(&a.clusters, a.threads, a.thread_types)
    }
}

impl From<&crate::view::ProgramView> for RadarSpec {
    fn from(p: &crate::view::ProgramView) -> RadarSpec {
        RadarSpec::from_clusters(&p.clusters, p.threads, p.thread_types)
    }
}

/// How to draw a glyph.
#[derive(Clone, Debug, PartialEq)]
pub struct SvgOptions {
    /// Height in px; the width is [`glyph_width`]`(size)`.
    pub size: u32,
    pub theme: Theme,
    /// Adds per-sector hit areas and outline paths for hovering (the detail view).
    pub interactive: bool,
    /// An accessible title (escaped), e.g. the artifact's name.
    pub title: Option<String>,
}

impl Default for SvgOptions {
    fn default() -> Self {
        SvgOptions { size: IN_SITU_PX, theme: Theme::Light, interactive: false, title: None }
    }
}

/// The in-situ size: two editor lines.
pub const IN_SITU_PX: u32 = 32;
/// The enlarged size of the detail view.
pub const ENLARGED_PX: u32 = 200;
/// The smallest angle of a non-empty sector, in degrees (paper §7.2, Fig. 13).
pub const MIN_SECTOR_DEG: f64 = 24.0;

/// Width of a glyph `size` px high: the radar plus the pedestals on its right.
pub fn glyph_width(size: u32) -> u32 {
    (size as f64 * 1.75).round() as u32
}

/// Radius of a level on a radar of outer radius `r`: the three guide circles.
pub fn level_radius(level: RadarLevel, r: f64) -> f64 {
    match level {
        RadarLevel::Low => r / 3.0,
        RadarLevel::Medium => r * 2.0 / 3.0,
        RadarLevel::High => r,
    }
}

/// Sector angles in degrees for clusters of `counts` threads: proportional to the count, but at
/// least [`MIN_SECTOR_DEG`] for every non-empty cluster (the others shrink to make room).
pub fn sector_angles(counts: &[usize]) -> Vec<f64> {
    let nonempty = counts.iter().filter(|&&c| c > 0).count();
    if nonempty == 0 {
        return vec![0.0; counts.len()];
    }
    let min = MIN_SECTOR_DEG.min(360.0 / nonempty as f64);
    let mut fixed = vec![false; counts.len()];
    loop {
        let fixed_deg = fixed.iter().filter(|&&f| f).count() as f64 * min;
        let free: usize = counts.iter().zip(&fixed).filter(|(_, &f)| !f).map(|(&c, _)| c).sum();
        let angles: Vec<f64> = counts
            .iter()
            .zip(&fixed)
            .map(|(&c, &f)| if c == 0 { 0.0 } else if f { min } else { (360.0 - fixed_deg) * c as f64 / free as f64 })
            .collect();
        let mut changed = false;
        for (i, &a) in angles.iter().enumerate() {
            if counts[i] > 0 && !fixed[i] && a < min - 1e-9 {
                fixed[i] = true;
                changed = true;
            }
        }
        if !changed {
            return angles;
        }
    }
}

/// A point on a circle around (cx, cy), angle in degrees clockwise from 12 o'clock.
fn polar(cx: f64, cy: f64, r: f64, deg: f64) -> (f64, f64) {
    let rad = (deg - 90.0).to_radians();
    (cx + r * rad.cos(), cy + r * rad.sin())
}

/// The outline of a sector from `a0` to `a1` degrees (a full disc when the span is 360°).
pub fn sector_path(cx: f64, cy: f64, r: f64, a0: f64, a1: f64) -> String {
    if a1 - a0 >= 359.999 {
        // Two half arcs: one arc cannot start and end at the same point.
        let (x0, y0) = polar(cx, cy, r, 0.0);
        let (x1, y1) = polar(cx, cy, r, 180.0);
        return format!("M{} {}A{} {} 0 1 1 {} {}A{} {} 0 1 1 {} {}Z", num(x0), num(y0), num(r), num(r), num(x1), num(y1), num(r), num(r), num(x0), num(y0));
    }
    let (x0, y0) = polar(cx, cy, r, a0);
    let (x1, y1) = polar(cx, cy, r, a1);
    let large = if a1 - a0 > 180.0 { 1 } else { 0 };
    format!("M{} {}L{} {}A{} {} 0 {} 1 {} {}Z", num(cx), num(cy), num(x0), num(y0), num(r), num(r), large, num(x1), num(y1))
}

/// The ThreadRadar as a standalone SVG document.
///
/// Structure (stable; tests and the detail view rely on it): `svg.threadradar` with
/// `data-threads` and `data-thread-types`; `circle.guide` ×3 (`data-level` 1–3); per cluster `i`
/// a `path.weak` (`data-cluster`, `data-level-sum`, `data-r`, `data-a0`, `data-a1`) drawn before
/// the `path.strong` (`data-level-avg`, …); when interactive, `path.hit` and a hidden
/// `path.outline` per cluster; `g.pedestal.threads` (lower) and `g.pedestal.types` (upper,
/// upside down) each with a `text`.
pub fn svg(spec: &RadarSpec, opts: &SvgOptions) -> String {
    let pal = Palette::of(opts.theme);
    let h = opts.size.max(8) as f64;
    let w = glyph_width(opts.size.max(8)) as f64;
    let (cx, cy) = (h / 2.0, h / 2.0);
    let r = h / 2.0 - (h / 32.0).max(1.0);
    let stroke = (h / 64.0).max(0.5);
    let class = if opts.interactive { "threadradar interactive" } else { "threadradar" };
    let mut s = Writer::document(
        class,
        Num(w),
        Num(h),
        &[("role", &"img"), ("data-threads", &spec.threads), ("data-thread-types", &spec.thread_types), ("data-clusters", &spec.clusters.len())],
    );
    let title = opts.title.clone().unwrap_or_else(|| {
        let parts: Vec<String> = spec
            .clusters
            .iter()
            .map(|c| format!("{} threads avg {:.0}% sum {:.0}%", c.threads, c.avg * 100.0, c.sum * 100.0))
            .collect();
        format!("ThreadRadar: {} threads, {} thread types; {}", spec.threads, spec.thread_types, parts.join("; "))
    });
    s.title(title);
    let counts: Vec<usize> = spec.clusters.iter().map(|c| c.threads).collect();
    let angles = sector_angles(&counts);
    let n = spec.clusters.len();
    let mut spans = Vec::new();
    let mut a = 0.0;
    for ang in &angles {
        spans.push((a, a + ang));
        a += ang;
    }
    // Weak sectors (sums) behind, then strong sectors (averages).
    for (layer, class) in [(0, "weak"), (1, "strong")] {
        for (i, c) in spec.clusters.iter().enumerate() {
            let (a0, a1) = spans[i];
            if a1 - a0 <= 0.0 {
                continue;
            }
            let colour = ClusterColour::of(i, n);
            let (level, fill, attr) = if layer == 0 {
                (RadarLevel::of(c.sum), colour.weak(opts.theme), "data-level-sum")
            } else {
                (RadarLevel::of(c.avg), colour.strong(opts.theme), "data-level-avg")
            };
            let rr = level_radius(level, r);
            let classes = format!("{class} {}", colour.name());
            s.empty(
                "path",
                &[
                    ("class", &classes),
                    ("data-cluster", &i),
                    (attr, &(level as u8 + 1)),
                    ("data-r", &Num(rr)),
                    ("data-a0", &Num(a0)),
                    ("data-a1", &Num(a1)),
                    ("fill", &fill),
                    ("d", &sector_path(cx, cy, rr, a0, a1)),
                ],
            );
        }
    }
    for (k, lv) in [RadarLevel::Low, RadarLevel::Medium, RadarLevel::High].into_iter().enumerate() {
        s.empty(
            "circle",
            &[
                ("class", &"guide"),
                ("data-level", &(k + 1)),
                ("cx", &Num(cx)),
                ("cy", &Num(cy)),
                ("r", &Num(level_radius(lv, r))),
                ("fill", &"none"),
                ("stroke", &pal.guide),
                ("stroke-width", &Num(stroke)),
            ],
        );
    }
    if opts.interactive {
        for (i, _) in spec.clusters.iter().enumerate() {
            let (a0, a1) = spans[i];
            if a1 - a0 <= 0.0 {
                continue;
            }
            let d = sector_path(cx, cy, r, a0, a1);
            s.empty(
                "path",
                &[
                    ("class", &"outline"),
                    ("data-cluster", &i),
                    ("fill", &"none"),
                    ("stroke", &pal.outline),
                    ("stroke-width", &Num(stroke * 3.0)),
                    ("stroke-linejoin", &"round"),
                    ("visibility", &"hidden"),
                    ("d", &d),
                ],
            );
            s.empty("path", &[("class", &"hit"), ("data-cluster", &i), ("fill", &"transparent"), ("pointer-events", &"all"), ("d", &d)]);
        }
    }
    // Pedestals: lower (threads) and upper, upside down (thread types).
    let px = h + h * 0.06;
    let pw = w - px - 1.0;
    let ph = h * 0.1;
    let inset = pw * 0.18;
    let font = h * 0.3;
    let text_x = px + pw / 2.0;
    let mut pedestal = |class: &str, value: usize, base: f64, top: f64, text_y: f64| {
        let d = format!(
            "M{} {}L{} {}L{} {}L{} {}Z",
            Num(px),
            Num(base),
            Num(px + inset),
            Num(top),
            Num(px + pw - inset),
            Num(top),
            Num(px + pw),
            Num(base)
        );
        s.start("g", &[("class", &class), ("data-value", &value)]);
        s.empty("path", &[("fill", &pal.guide), ("d", &d)]);
        s.element(
            "text",
            &[("x", &Num(text_x)), ("y", &Num(text_y)), ("font-size", &Num(font)), ("font-family", &FONT), ("text-anchor", &"middle"), ("fill", &pal.text)],
            value,
        );
        s.end("g");
    };
    let lower_base = h - 1.0;
    pedestal("pedestal threads", spec.threads, lower_base, lower_base - ph, lower_base - ph - font * 0.2);
    let upper_base = 1.0;
    pedestal("pedestal types", spec.thread_types, upper_base, upper_base + ph, upper_base + ph + font * 0.95);
    s.finish()
}

