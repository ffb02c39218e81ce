//! The ThreadRadar glyph's data (paper §3, spec §4), independent of how it is drawn: the
//! three-level scale, the cluster colour positions, and a one-line text rendering for terminals.

use crate::analysis::Cluster;
use serde::Serialize;
use std::fmt;

/// A value on the glyph's three-level radius scale (paper §3.2): low < 33 %, medium ≥ 33 % and
/// < 66 %, high ≥ 66 %.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
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
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
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
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct GlyphCell {
    pub colour: ClusterColour,
    /// Threads in the cluster (the sector's angle).
    pub threads: usize,
    /// Level of the cluster's average (the strong sector's radius).
    pub avg: RadarLevel,
    /// Level of the cluster's sum (the weak sector's radius).
    pub sum: RadarLevel,
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
