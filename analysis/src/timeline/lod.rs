//! The rows' level-of-detail index: lets a zoomed-out viewport pass, in one step, a stretch of bars
//! so short and so densely packed that the per-column walk of [`super::layout`] would only have
//! turned them into one aggregated block, column after column.
//!
//! # What is stored
//!
//! A bar's **stride** is the time from its start to the start of the next bar of its row (for the
//! row's last bar: to its own end). It bounds both the bar's width and the gap after it. Per row
//! and per chunk of [`CHUNK`] consecutive bars, one byte holds an upper bound of the chunk's
//! largest stride: `⌈4 · log₂(ns)⌉`, so the bound is at most 2^¼ (19 %) above the true stride.
//! One byte per 16 bars is 1/176 of the bars' own 11 bytes each.
//!
//! # How the layout uses it
//!
//! No span on the merged axis is longer than its time: `logscale(Δt, θ) ≤ Δt`, and the axis places
//! times linearly within a span; [`super::Axis::max_stretch`] is the largest ratio of a tick
//! interval's length on the axis to its time (1 when linear, ~0.46 at θ = 1/ms on a 3 ms run). So a
//! stride of `s` ns is at most `s × max_stretch × px_per_ms / 10⁶` pixels wide. A stretch of bars
//! whose strides are all under 0.9 px ([`DenseLimit`]; under 1 px with a margin far above the
//! rounding of positions) is a stretch of narrow bars with a start in every pixel column it
//! crosses; the straightforward walk gives each of those columns one block, and adjacent blocks
//! merge into one, carrying the sum of their counts. The layout emits that one block directly
//! (how it finds where the stretch's last column ends is in `View::skip_dense` in `layout.rs`).
//! A chunk whose byte is over the limit is checked bar by bar; a dense chunk's bars are not read.

use super::index::Bar;

/// Bars per chunk of the index.
pub const CHUNK: usize = 16;

/// How many dense chunks [`RowLod::dense_until`] passes between two looks at where it is.
const STOP_CHECK: usize = 64;

/// A chunk whose largest stride is more than 2^(SCAN_CODES/4) times the limit is not read bar by
/// bar (the walk goes on column by column there).
const SCAN_CODES: i16 = 8;

/// Code of "no bound": a stride too long to be skipped at any zoom.
const UNBOUNDED: u8 = u8::MAX;

/// The level-of-detail index of one row (one depth of one lane).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RowLod {
    /// Per chunk of [`CHUNK`] bars: the code of an upper bound of its largest stride.
    max_stride: Vec<u8>,
}

/// The largest stride (ns) the index still counts as "dense" in one viewport, and its code.
#[derive(Clone, Copy, Debug)]
pub struct DenseLimit {
    /// Strides strictly below this are dense.
    ns: f64,
    /// Chunks whose code is at most this are dense throughout (-1: none).
    max_code: i16,
}

impl DenseLimit {
    /// Strides under `px` pixels at `px_per_ns` pixels per nanosecond of (unscaled) time.
    pub fn new(px: f64, px_per_ns: f64) -> DenseLimit {
        let ns = if px_per_ns > 0.0 { px / px_per_ns } else { f64::INFINITY };
        let max_code = (0..UNBOUNDED).rev().find(|&c| bound(c) < ns).map_or(-1, |c| c as i16);
        DenseLimit { ns, max_code }
    }
}

/// The time from bar `j`'s start to the next bar's start (or its own end for the last bar), ns.
#[inline]
fn stride(row: &[Bar], times: &[u64], j: usize) -> u64 {
    let s = times[row[j].start() as usize];
    let next = match row.get(j + 1) {
        Some(b) => times[b.start() as usize],
        None => times[row[j].end() as usize],
    };
    next - s
}

/// The smallest code whose bound is at least `ns`.
fn code(ns: u64) -> u8 {
    if ns <= 1 {
        return 0;
    }
    let mut c = (4.0 * (ns as f64).log2()).ceil().clamp(0.0, UNBOUNDED as f64) as u8;
    // log2 is rounded: make sure the bound holds, and that it is the smallest such code.
    while c < UNBOUNDED && bound(c) < ns as f64 {
        c += 1;
    }
    while c > 0 && bound(c - 1) >= ns as f64 {
        c -= 1;
    }
    c
}

/// The stride bound of a code, ns.
fn bound(c: u8) -> f64 {
    if c == UNBOUNDED {
        f64::INFINITY
    } else {
        (c as f64 / 4.0).exp2()
    }
}

impl RowLod {
    /// The index of one row; `times` are the index's tick times.
    pub fn new(row: &[Bar], times: &[u64]) -> RowLod {
        let max_stride = (0..row.len().div_ceil(CHUNK))
            .map(|c| {
                let max = (c * CHUNK..((c + 1) * CHUNK).min(row.len())).map(|j| stride(row, times, j)).max().unwrap_or(0);
                code(max)
            })
            .collect();
        RowLod { max_stride }
    }

    /// Heap bytes held.
    pub fn heap_bytes(&self) -> usize {
        self.max_stride.capacity()
    }

    /// The first bar at or after `i` whose stride is not dense under `limit`, or `row.len()`; the
    /// search may stop early (a smaller answer is always allowed) once it has passed tick `stop`
    /// (the end of the caller's interest), which it checks every [`STOP_CHECK`] dense chunks, so
    /// that it reads few bars of a dense stretch. `row` and `times` must be the ones the index was
    /// built from.
    pub fn dense_until(&self, row: &[Bar], times: &[u64], i: usize, limit: DenseLimit, stop: u32) -> usize {
        self.dense_from(row, times, i, limit, stop).0
    }

    /// [`RowLod::dense_until`], and where the next look can start: when bar `i`'s chunk is not read
    /// (its strides are far over the limit), the end of that chunk — no bar before it starts a
    /// dense stretch worth reading — else `i + 1`.
    pub fn dense_from(&self, row: &[Bar], times: &[u64], i: usize, limit: DenseLimit, stop: u32) -> (usize, usize) {
        if let Some(&code) = self.max_stride.get(i / CHUNK) {
            if code as i16 > limit.max_code + SCAN_CODES {
                return (i, ((i / CHUNK + 1) * CHUNK).min(row.len()));
            }
        }
        (self.scan(row, times, i, limit, stop), i + 1)
    }

    /// The search of [`RowLod::dense_until`].
    fn scan(&self, row: &[Bar], times: &[u64], i: usize, limit: DenseLimit, stop: u32) -> usize {
        let n = row.len();
        let mut j = i;
        while j < n {
            let c = j / CHUNK;
            let chunk_end = ((c + 1) * CHUNK).min(n);
            if self.max_stride[c] as i16 <= limit.max_code {
                // A dense chunk: its bars are not read at all.
                j = chunk_end;
                if (j / CHUNK) % STOP_CHECK == 0 && j < n && row[j].start() >= stop {
                    return j;
                }
                continue;
            }
            if self.max_stride[c] as i16 > limit.max_code + SCAN_CODES {
                // Strides far above the limit: such a chunk rarely holds a stretch worth reading.
                return j;
            }
            while j < chunk_end {
                if (stride(row, times, j) as f64) < limit.ns {
                    j += 1;
                } else {
                    return j;
                }
            }
        }
        n
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_code_bounds_its_stride_within_a_fourth_root_of_two() {
        for ns in (0..2000u64).chain((0..64).map(|e| 1u64 << e)).chain((1..64).map(|e| (1u64 << e) - 1)).chain([u64::MAX, 3_000_000, 59_999_999]) {
            let c = code(ns);
            assert!(bound(c) >= ns as f64, "{ns}: code {c}");
            if c > 0 && c < UNBOUNDED {
                assert!(bound(c - 1) < ns as f64, "{ns}: code {c} is not the smallest");
                assert!(bound(c) <= (ns as f64) * 2f64.powf(0.25) * (1.0 + 1e-12), "{ns}: code {c}");
            }
        }
    }

    #[test]
    fn a_limit_admits_exactly_the_codes_below_it() {
        for px_per_ns in [1e-9, 3.7e-8, 1e-6, 0.5, 0.0] {
            let l = DenseLimit::new(0.5, px_per_ns);
            for c in 0..UNBOUNDED {
                assert_eq!(c as i16 <= l.max_code, bound(c) < l.ns, "{px_per_ns} {c}");
            }
        }
    }
}
