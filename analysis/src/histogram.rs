//! The histogram of `crt(a, th)` (paper §6.1, Fig. 11): one square per thread in its cluster's
//! colour, x linear from 0 to the largest value, equal values stacked, fitted into a given box.

use crate::glyph::ClusterColour;
use crate::svg::{Palette, Theme, Writer, FONT};
use serde::Serialize;
use threadradar_profiler::run::ThreadId;

/// One thread of the histogram.
#[derive(Clone, Debug, PartialEq, Serialize, ts_rs::TS)]
pub struct HistogramPoint {
    pub thread: ThreadId,
    /// Shown as the square's tooltip (escaped).
    pub label: String,
    /// `crt(a, th)` as a fraction.
    pub value: f64,
    pub colour: ClusterColour,
}

/// One column of a text histogram (e.g. Neovim's): the threads whose value falls on it, lowest
/// value first, stacked.
#[derive(Clone, Debug, PartialEq, Serialize, ts_rs::TS)]
pub struct HistogramBin {
    /// 0-based column, 0 to `columns - 1`: value / largest value × (columns − 1), rounded.
    pub column: u32,
    pub threads: Vec<ThreadId>,
    pub colours: Vec<ClusterColour>,
}

/// The histogram binned into `columns` text columns (x linear from 0 to the largest value, as in
/// the SVG), so that clients draw bins and never compute them.
pub fn bins(points: &[HistogramPoint], columns: u32) -> Vec<HistogramBin> {
    let columns = columns.max(1);
    let max = points.iter().map(|p| p.value).fold(0.0_f64, f64::max);
    let mut sorted: Vec<&HistogramPoint> = points.iter().collect();
    sorted.sort_by(|a, b| a.value.total_cmp(&b.value).then(a.thread.cmp(&b.thread)));
    let mut out: Vec<HistogramBin> = Vec::new();
    for p in sorted {
        let column = if max > 0.0 { (p.value / max * (columns - 1) as f64).round() as u32 } else { 0 };
        match out.iter_mut().find(|b| b.column == column) {
            Some(b) => {
                b.threads.push(p.thread);
                b.colours.push(p.colour);
            }
            None => out.push(HistogramBin { column, threads: vec![p.thread], colours: vec![p.colour] }),
        }
    }
    out.sort_by_key(|b| b.column);
    out
}

#[derive(Clone, Debug, PartialEq)]
pub struct HistogramOptions {
    pub width: u32,
    pub height: u32,
    pub theme: Theme,
}

/// Height of the axis labels' strip under the squares.
pub const AXIS_PX: f64 = 14.0;
/// Squares never grow beyond this many px.
pub const MAX_SQUARE_PX: f64 = 16.0;

/// Where each square goes: (x, y, side) in px, in the order of `points`.
pub fn layout(points: &[HistogramPoint], width: f64, height: f64) -> Vec<(f64, f64, f64)> {
    let pad = 4.0;
    let (x0, x1) = (pad, (width - pad).max(pad + 1.0));
    let (top, bottom) = (2.0, (height - AXIS_PX).max(3.0));
    let max = points.iter().map(|p| p.value).fold(0.0_f64, f64::max);
    // Equal values (equal sample counts give bit-equal ratios) share a column.
    let key = |v: f64| (v * 1e9).round() as i64;
    let mut stacks: std::collections::HashMap<i64, usize> = Default::default();
    for p in points {
        *stacks.entry(key(p.value)).or_default() += 1;
    }
    let tallest = stacks.values().copied().max().unwrap_or(1) as f64;
    let side = ((bottom - top) / tallest).min((x1 - x0) / 4.0).clamp(0.5, MAX_SQUARE_PX);
    let mut used: std::collections::HashMap<i64, usize> = Default::default();
    points
        .iter()
        .map(|p| {
            let k = key(p.value);
            let level = used.entry(k).or_default();
            let x = if max > 0.0 { x0 + (p.value / max) * (x1 - x0 - side) } else { x0 };
            let y = bottom - side * (*level as f64 + 1.0);
            *level += 1;
            (x, y, side)
        })
        .collect()
}

/// The histogram as an SVG document exactly `width` × `height` px. Each square is a
/// `rect.sq` with `data-thread`, `data-value` and its cluster colour's name as a class.
pub fn svg(points: &[HistogramPoint], opts: &HistogramOptions) -> String {
    let pal = Palette::of(opts.theme);
    let (w, h) = (opts.width.max(20) as f64, opts.height.max(AXIS_PX as u32 + 6) as f64);
    let mut s = Writer::document("histogram", w, h, &[("data-squares", &points.len())]);
    s.title(format!("crt(a, th) of {} threads", points.len()));
    let bottom = h - AXIS_PX;
    s.empty("line", &[("class", &"axis"), ("x1", &4), ("y1", &bottom), ("x2", &(w - 4.0)), ("y2", &bottom), ("stroke", &pal.guide), ("stroke-width", &1)]);
    let max = points.iter().map(|p| p.value).fold(0.0_f64, f64::max);
    s.element("text", &[("class", &"min"), ("x", &4), ("y", &(h - 3.0)), ("font-size", &10), ("font-family", &FONT), ("fill", &pal.text)], "0%");
    s.element(
        "text",
        &[("class", &"max"), ("x", &(w - 4.0)), ("y", &(h - 3.0)), ("font-size", &10), ("font-family", &FONT), ("text-anchor", &"end"), ("fill", &pal.text)],
        format_args!("{:.1}%", max * 100.0),
    );
    for (p, (x, y, side)) in points.iter().zip(layout(points, w, h)) {
        let gap = if side > 4.0 { 1.0 } else { 0.0 };
        let class = format!("sq {}", p.colour.name());
        let (value, x, y, size) = (format!("{:.6}", p.value), format!("{:.2}", x + gap / 2.0), format!("{:.2}", y + gap / 2.0), format!("{:.2}", side - gap));
        s.start(
            "rect",
            &[("class", &class), ("data-thread", &p.thread), ("data-value", &value), ("x", &x), ("y", &y), ("width", &size), ("height", &size), ("fill", &p.colour.strong(opts.theme))],
        );
        s.title(format_args!("{}  {:.1}%", p.label, p.value * 100.0));
        s.end("rect");
    }
    s.finish()
}
