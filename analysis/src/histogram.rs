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

/// A distribution of durations on a log axis (bins of equal ratio), as the Sections panel draws
/// it: the client draws the bins, it never computes them.
#[derive(Clone, Debug, Default, PartialEq, Serialize, ts_rs::TS)]
pub struct LogHistogram {
    /// The axis' ends, seconds: the shortest and the longest duration, widened to at least a
    /// factor 10^0.2 apart.
    pub from_s: f64,
    pub to_s: f64,
    /// Every bin in order, empty ones included.
    pub bins: Vec<LogBin>,
    /// The durations counted (the positive ones).
    pub count: u32,
}

/// One bin of a [`LogHistogram`].
#[derive(Clone, Debug, PartialEq, Serialize, ts_rs::TS)]
pub struct LogBin {
    pub from_s: f64,
    pub to_s: f64,
    pub count: u32,
}

/// The log histogram of the positive `durations` (seconds): 2·⌈√n⌉ bins, between 5 and 30, each
/// holding the durations from its lower end up to (not including) its upper one, the longest in
/// the last. Empty (no bins) when no duration is positive.
pub fn log_histogram(durations: impl IntoIterator<Item = f64>) -> LogHistogram {
    let logs: Vec<f64> = durations.into_iter().filter(|d| *d > 0.0 && d.is_finite()).map(f64::log10).collect();
    if logs.is_empty() {
        return LogHistogram::default();
    }
    let (mut lo, mut hi) = logs.iter().fold((f64::MAX, f64::MIN), |(l, h), &x| (l.min(x), h.max(x)));
    if hi - lo < 0.2 {
        lo -= 0.1;
        hi += 0.1;
    }
    let n = (2 * (logs.len() as f64).sqrt().ceil() as usize).clamp(5, 30);
    let mut counts = vec![0u32; n];
    for x in &logs {
        counts[(((x - lo) / (hi - lo) * n as f64).floor() as usize).min(n - 1)] += 1;
    }
    let edge = |k: usize| 10f64.powf(lo + (hi - lo) * k as f64 / n as f64);
    let bins = counts.into_iter().enumerate().map(|(k, count)| LogBin { from_s: edge(k), to_s: edge(k + 1), count }).collect();
    LogHistogram { from_s: edge(0), to_s: edge(n), bins, count: logs.len() as u32 }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_log_histogram_counts_every_positive_duration_once() {
        let h = log_histogram([0.001, 0.002, 0.01, 0.1, 0.1, 0.0, -1.0]);
        assert_eq!((h.count, h.bins.len()), (5, 6));
        assert_eq!(h.bins.iter().map(|b| b.count).sum::<u32>(), 5);
        // log10: −3, −2.7 | | | −2 | | −1, −1 in sixths of [−3, −1]; the longest in the last bin.
        assert_eq!(h.bins.iter().map(|b| b.count).collect::<Vec<_>>(), [2, 0, 0, 1, 0, 2]);
        assert!((h.from_s - 0.001).abs() < 1e-12 && (h.to_s - 0.1).abs() < 1e-12);
        assert!(h.bins.windows(2).all(|w| (w[0].to_s - w[1].from_s).abs() < 1e-15));
    }

    #[test]
    fn equal_durations_are_widened_and_none_gives_no_bins() {
        let h = log_histogram([0.01, 0.01]);
        assert!((h.from_s - 10f64.powf(-2.1)).abs() < 1e-12 && h.bins.iter().map(|b| b.count).sum::<u32>() == 2);
        assert!(log_histogram([0.0]).bins.is_empty());
    }
}
