//! One viewport of the timeline: only what can be drawn at a pixel width.
//!
//! - A bar at least [`MIN_BAR_PX`] wide is returned as it is.
//! - Narrower bars are **aggregated** (SyncTrace §IV-B2): all bars of one depth that start in one
//!   pixel column become one block that carries their count, and blocks in adjacent columns of the
//!   same row merge (their counts add). A renderer draws blocks lighter than bars.
//! - The state underlay is treated alike: runs ≥ 1 px as they are; in a column of narrower runs,
//!   the state of the run at the column's middle (a sample of the column, flagged `sampled`).
//! - **Stack folding** (SyncTrace Fig. 6): `fold.top = N` collapses the outermost N levels into one
//!   band (drawn with the bars of level N, flagged with the number of folded levels), and
//!   `fold.stdlib` folds every run of consecutive standard-library frames into one band named by
//!   its outermost frame.
//! - **Lanes that fit** (issue 32): `fold.depth = N` caps each lane at N rows — a lane as deep as
//!   MainThread's import-time stacks no longer pushes every worker below the first screen. The
//!   last row holds the frames at that depth (each covering the deeper calls it made), and the
//!   lane carries the folded levels (`folded_below`) for the renderer to show and to expand
//!   (`expand`: lanes left whole).
//!
//! Positions come from the merged axis ([`super::Axis`]), identical for every lane.

use super::axis::Axis;
use super::index::{Bar, BarState, BlockedKind, Lane, StateRun, TimelineIndex};
use super::lod::DenseLimit;
use super::focus::{self, Focus};
use super::overview::{thread_overview, ThreadOverview};
use super::{secs, TimelineError};
use crate::panel::ArtifactKey;
use serde::{Deserialize, Serialize};
use threadradar_profiler::run::{FileKind, FrameId, Run, ThreadId};

/// The narrowest bar drawn as itself, px.
pub const MIN_BAR_PX: f64 = 1.0;
/// Strides (lod.rs) narrower than this are passed in one step by the layout: under 1 px, so that
/// each such bar is narrow and the next one starts in the same or the next column, with a margin
/// far above the rounding of positions.
const DENSE_PX: f64 = 0.9;
/// The widest viewport a layout is made for, px.
pub const MAX_WIDTH_PX: u32 = 100_000;

/// Stack folding.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
#[serde(default)]
pub struct Fold {
    /// Collapse this many outermost levels into one band (0 or 1: none).
    pub top: u16,
    /// Fold runs of consecutive standard-library frames into one band each (the interpreter's
    /// import machinery, `<frozen importlib._bootstrap>`, and the modules it runs are such runs).
    pub stdlib: bool,
    /// At most this many rows per lane (after the other folds); a deeper lane's innermost levels
    /// are folded into its last row, which then holds the frames at that depth (each covers the
    /// deeper frames it called), and the lane says how many levels it folded
    /// ([`LaneLayout::folded_below`]). 0: no cap. Lanes in [`LayoutRequest::expand`] are not capped.
    #[ts(optional)]
    pub depth: Option<u16>,
}

/// Which threads get a lane, in which order.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
#[serde(rename_all = "snake_case", untagged)]
pub enum ThreadSelection {
    /// Every thread with at least one sample, by id.
    #[default]
    All,
    /// These threads, in this order.
    Ids(Vec<ThreadId>),
}

/// A viewport request. Times are seconds from the run's start.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ts_rs::TS)]
#[serde(default)]
pub struct LayoutRequest {
    /// Start of the viewport; the run's first sample when absent.
    pub from_s: Option<f64>,
    /// End of the viewport; the end of the run's last sample interval when absent.
    pub to_s: Option<f64>,
    pub width_px: u32,
    pub threads: ThreadSelection,
    /// θ of `logscale` per millisecond; 0 is linear.
    pub theta: f64,
    pub fold: Fold,
    /// An artifact whose frames are marked [`FrameInfo::highlighted`], with its place on the
    /// whole run in [`Layout::focus`].
    #[ts(optional)]
    pub highlight: Option<ArtifactKey>,
    /// Also answer the textual per-thread overview of the viewport ([`Layout::overview`]).
    #[ts(optional)]
    pub overview: Option<bool>,
    /// Threads whose lanes `fold.depth` leaves whole (the user expanded them).
    #[ts(optional)]
    pub expand: Option<Vec<ThreadId>>,
}

impl Default for LayoutRequest {
    fn default() -> Self {
        LayoutRequest { from_s: None, to_s: None, width_px: 1200, threads: ThreadSelection::All, theta: 0.0, fold: Fold::default(), highlight: None, overview: None, expand: None }
    }
}

/// A frame shown in the layout; bars refer to it by index.
#[derive(Clone, Debug, PartialEq, Serialize, ts_rs::TS)]
pub struct FrameInfo {
    /// Qualified name.
    pub function: String,
    pub file: String,
    /// The line executed at the first sample of the bar(s) that show this frame.
    pub line: u32,
    pub stdlib: bool,
    /// The frame's colour (by function name, stable across runs and viewports).
    pub colour: String,
    /// `true`: the frame is one of the highlighted artifact's functions (absent otherwise).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub highlighted: Option<bool>,
}

/// A bar as drawn.
#[derive(Clone, Debug, PartialEq, Serialize, ts_rs::TS)]
pub struct BarBox {
    pub x0: f32,
    pub x1: f32,
    pub depth: u16,
    /// Index into [`Layout::frames`].
    pub frame: u32,
    pub start_s: f64,
    pub end_s: f64,
    pub state: BarState,
    pub blocked: Option<BlockedKind>,
    /// Levels folded into this band by `fold.top` (0: not a folded band).
    pub folded_levels: u16,
    /// The band stands for consecutive standard-library frames (`fold.stdlib`).
    pub stdlib_band: bool,
}

/// Bars narrower than a pixel, aggregated.
#[derive(Clone, Debug, PartialEq, Serialize, ts_rs::TS)]
pub struct Block {
    pub x0: f32,
    pub x1: f32,
    pub depth: u16,
    /// Bars in the block.
    pub count: u32,
    pub start_s: f64,
    pub end_s: f64,
}

/// A piece of the state underlay.
#[derive(Clone, Debug, PartialEq, Serialize, ts_rs::TS)]
pub struct StateBox {
    pub x0: f32,
    pub x1: f32,
    pub state: BarState,
    pub blocked: Option<BlockedKind>,
    /// `true` when the runs in this box were narrower than a pixel and this is the state at the
    /// middle of each column, not every state of the box.
    pub sampled: bool,
}

/// One thread's lane.
#[derive(Clone, Debug, PartialEq, Serialize, ts_rs::TS)]
pub struct LaneLayout {
    pub thread: ThreadId,
    pub name: String,
    #[serde(rename = "type")]
    pub thread_type: String,
    /// `crt(th)` (Eq. 7) with computing samples counted: the thread's share of the program's
    /// computing samples, over the whole run.
    pub crt: f64,
    /// Time of the thread's first sample, s.
    pub first_s: f64,
    /// Rows (depths) after folding.
    pub depth: u16,
    /// Rows the lane would have without `fold.depth`'s cap (the other folds applied).
    pub full_depth: u16,
    /// Levels `fold.depth` folded into the lane's last row (0: none; `full_depth - depth`).
    pub folded_below: u16,
    pub states: Vec<StateBox>,
    pub bars: Vec<BarBox>,
    pub blocks: Vec<Block>,
    /// A task unit's lane: the lane (thread id) of the event-loop thread that ran it, which it
    /// follows in the default order (timeline/tasks.rs). Absent for a thread's lane.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub parent: Option<ThreadId>,
    /// A task unit's recorded awaiting time in the viewport (evidence `task-state`); absent when
    /// none was recorded.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    #[ts(as = "Option<Vec<super::tasks::AwaitBox>>", optional)]
    pub awaits: Vec<super::tasks::AwaitBox>,
}

/// A labelled position on the time axis.
#[derive(Clone, Debug, PartialEq, Serialize, ts_rs::TS)]
pub struct AxisTick {
    pub x: f32,
    pub t_s: f64,
}

/// Everything needed to draw one viewport.
#[derive(Clone, Debug, PartialEq, Serialize, ts_rs::TS)]
pub struct Layout {
    pub from_s: f64,
    pub to_s: f64,
    /// The run's first sample and the end of its last sample interval, s.
    pub run_from_s: f64,
    pub run_to_s: f64,
    pub width_px: u32,
    pub theta: f64,
    pub fold: Fold,
    /// The sampling period, s: every bar edge is uncertain by this much.
    pub period_s: f64,
    /// How the figures were obtained.
    pub obtained: &'static str,
    /// The underlay colour of each state (the one definition, shared with the SVG chart).
    pub state_colours: StateColours,
    pub axis: Vec<AxisTick>,
    pub frames: Vec<FrameInfo>,
    pub lanes: Vec<LaneLayout>,
    /// Where the highlighted artifact ran, over the whole run.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub focus: Option<Focus>,
    /// With `overview`: per shown thread (in lane order) its busy and waiting shares, longest
    /// wait and top frames over the viewport (Trümper et al.'s textual overview).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub overview: Option<Vec<ThreadOverview>>,
}

/// What every layout says about its origin.
pub const OBTAINED: &str = "sampled: bars are runs of samples with the same frame (edges uncertain by one sampling period); states are the sampler's per-sample classification; blocking kinds are inferred from the system call and the innermost Python frames";

/// [`OBTAINED`] for a run whose units are asyncio tasks.
pub const OBTAINED_TASKS: &str = "sampled: bars are runs of samples with the same frame (edges uncertain by one sampling period); states are the sampler's per-sample classification; blocking kinds are inferred from the system call and the innermost Python frames; a task's lane holds the samples at which its thread ran it (under that thread's lane), and its awaiting spans are its recorded task states (evidence task-state, read at the ticks)";

/// How a run's layout was obtained: [`OBTAINED`], or [`OBTAINED_TASKS`] with tasks as units.
pub fn obtained(run: &Run) -> &'static str {
    if crate::units::units_of(run).is_threads() {
        OBTAINED
    } else {
        OBTAINED_TASKS
    }
}

/// Lays out one viewport. `index` must have been built from `run`.
pub fn layout(run: &Run, index: &TimelineIndex, req: &LayoutRequest) -> Result<Layout, TimelineError> {
    layout_with(run, index, req, Walk::Indexed)
}

/// [`layout`] without the level-of-detail index: every pixel column of narrow bars is visited.
/// The same layout, more slowly; the reference the tests compare [`layout`] with.
#[doc(hidden)]
pub fn layout_column_by_column(run: &Run, index: &TimelineIndex, req: &LayoutRequest) -> Result<Layout, TimelineError> {
    layout_with(run, index, req, Walk::ColumnByColumn)
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Walk {
    /// Pass dense stretches of narrow bars in one step ([`super::lod`]).
    Indexed,
    ColumnByColumn,
}

fn layout_with(run: &Run, index: &TimelineIndex, req: &LayoutRequest, walk: Walk) -> Result<Layout, TimelineError> {
    if !(req.theta.is_finite() && req.theta >= 0.0) {
        return Err(TimelineError::BadTheta(req.theta));
    }
    if req.width_px == 0 || req.width_px > MAX_WIDTH_PX {
        return Err(TimelineError::BadWidth(req.width_px));
    }
    let run_from = secs(index.times[0]);
    let run_to = index.duration_s();
    let (from_s, to_s) = check_range(req.from_s, req.to_s, run_from, run_to)?;
    let all_lanes = index.lanes_for(run, req.fold.stdlib);
    let ids: Vec<ThreadId> = match &req.threads {
        ThreadSelection::All => {
            let ids: Vec<ThreadId> = all_lanes.iter().filter(|l| l.samples > 0).map(|l| l.thread).collect();
            super::tasks::grouped(run, &ids)
        }
        ThreadSelection::Ids(ids) => {
            for &id in ids {
                if id as usize >= run.threads.len() {
                    return Err(TimelineError::UnknownThread(format!("#{id}"), known_threads(run)));
                }
            }
            ids.clone()
        }
    };
    let lanes: Vec<&Lane> = ids.iter().map(|&id| &all_lanes[id as usize]).collect();
    let axis = Axis::new(index, &lanes, req.theta);
    let width = req.width_px as f64;
    let (highlight, focus) = match &req.highlight {
        Some(key) => (focus::members(run, key)?.0, Some(focus::focus(run, index, key)?)),
        None => (Vec::new(), None),
    };
    let total_computing: u64 = all_lanes.iter().map(|l| l.computing as u64).sum();
    if index.ticks() == 0 {
        return Ok(Layout {
            from_s,
            to_s,
            run_from_s: run_from,
            run_to_s: run_to,
            width_px: req.width_px,
            theta: req.theta,
            fold: req.fold,
            period_s: secs(index.period_ns),
            obtained: obtained(run),
            state_colours: StateColours::LIGHT,
            axis: Vec::new(),
            frames: Vec::new(),
            lanes: Vec::new(),
            focus,
            overview: (req.overview == Some(true)).then(Vec::new),
        });
    }
    let p0 = axis.position((from_s * 1e9).round() as u64);
    let p1 = axis.position((to_s * 1e9).round() as u64);
    let scale = if p1 > p0 { width / (p1 - p0) } else { 0.0 };
    // The first tick at or after each column's left edge, once per layout.
    let cols: Vec<u32> = (0..=req.width_px as usize + 1)
        .map(|c| if scale > 0.0 { axis.tick_at_position(p0 + c as f64 / scale).min(index.ticks() as u32) } else { 0 })
        .collect();
    // Strides under DENSE_PX are dense (lod.rs): positions are scaled milliseconds, and no span
    // of ticks is longer on the axis than `max_stretch` times its time (a millionth of rounding
    // is allowed for).
    let dense = (walk == Walk::Indexed && scale > 0.0).then(|| DenseLimit::new(DENSE_PX, scale * axis.max_stretch() * (1.0 + 1e-6) / 1e6));
    // …and the first tick at or after each column's middle.
    let mids: Vec<u32> = (0..req.width_px as usize)
        .map(|c| if scale > 0.0 { axis.tick_at_position(p0 + (c as f64 + 0.5) / scale).min(index.ticks() as u32) } else { 0 })
        .collect();
    let view = View { axis: &axis, index, p0, scale, width, cols, mids };
    // Every task's recorded awaiting spans, in one pass (none for a run of threads).
    let awaiting = super::tasks::awaiting_by_task(run, index.ticks() as u32);
    // Lanes are independent, so they are laid out in parallel; their bars carry the run's frame
    // id until the frame table numbers them below, in lane and bar order, exactly as a
    // sequential walk would.
    use rayon::prelude::*;
    let mut out: Vec<LaneLayout> = lanes.par_iter().map(|&lane| {
        let t = &run.threads[lane.thread as usize];
        let fold_top = (req.fold.top as usize).min(lane.rows.len());
        let skip = fold_top.saturating_sub(1);
        let full = lane.rows.len() - skip;
        let expanded = req.expand.as_ref().is_some_and(|e| e.contains(&lane.thread));
        let cap = match req.fold.depth {
            Some(c) if c > 0 && !expanded => (c as usize).min(full),
            _ => full,
        };
        let mut bars = Vec::new();
        let mut blocks = Vec::new();
        for (d, row) in lane.rows.iter().enumerate().skip(skip).take(cap) {
            let depth = (d - skip) as u16;
            let folded_levels = if fold_top > 1 && d == skip { fold_top as u16 } else { 0 };
            let dense_until = |i: usize| match dense {
                Some(limit) => lane.lod[d].dense_from(row, &index.times, i, limit, view.cols[req.width_px as usize]),
                None => (i, usize::MAX),
            };
            view.place(row, |b: &Bar| (b.start(), b.end()), dense_until, |b, x0, x1| {
                bars.push(BarBox {
                    x0,
                    x1,
                    depth,
                    frame: b.frame(),
                    start_s: secs(index.times[b.start() as usize]),
                    end_s: secs(index.times[b.end() as usize]),
                    state: b.state(),
                    blocked: b.blocked(),
                    folded_levels,
                    stdlib_band: b.folded(),
                })
            }, |x0, x1, count, start, end| {
                match blocks.last_mut() {
                    Some(Block { x1: px1, depth: pd, count: c, end_s, .. }) if *pd == depth && *px1 == x0 => {
                        *px1 = x1;
                        *c += count;
                        *end_s = secs(index.times[end as usize]);
                    }
                    _ => blocks.push(Block { x0, x1, depth, count, start_s: secs(index.times[start as usize]), end_s: secs(index.times[end as usize]) }),
                }
            });
        }
        // Both callbacks append to the underlay, merging adjacent boxes that look the same.
        let states = std::cell::RefCell::new(Vec::<StateBox>::new());
        let state_cursor = std::cell::Cell::new(0usize);
        let push_state = |b: StateBox| {
            let mut states = states.borrow_mut();
            match states.last_mut() {
                Some(s) if s.x1 == b.x0 && s.state == b.state && s.blocked == b.blocked && s.sampled == b.sampled => s.x1 = b.x1,
                _ => states.push(b),
            }
        };
        view.place(&lane.states, |r: &StateRun| (r.start, r.end), |i| (i, usize::MAX), |r, x0, x1| {
            push_state(StateBox { x0, x1, state: r.state, blocked: r.blocked, sampled: false })
        }, |x0, x1, _count, _start, _end| {
            // The run at the column's middle; columns come in ascending order, so the search
            // starts where the last one ended.
            let mid = view.tick_at_middle(x0, x1);
            let from = state_cursor.get();
            let i = from + gallop(&lane.states[from..], |r| r.end <= mid);
            state_cursor.set(i);
            if let Some(r) = lane.states.get(i).filter(|r| r.start <= mid) {
                push_state(StateBox { x0, x1, state: r.state, blocked: r.blocked, sampled: true });
            }
        });
        let first = lane.states.first().map_or(0, |r| r.start);
        LaneLayout {
            thread: lane.thread,
            name: t.name.clone(),
            thread_type: t.thread_type.clone(),
            crt: if total_computing == 0 { 0.0 } else { lane.computing as f64 / total_computing as f64 },
            first_s: secs(index.times[first as usize]),
            depth: cap as u16,
            full_depth: full as u16,
            folded_below: (full - cap) as u16,
            states: states.into_inner(),
            bars,
            blocks,
            parent: super::tasks::parent(run, lane.thread),
            awaits: match super::tasks::task_of(run, lane.thread) {
                Some(task) => super::tasks::await_boxes(run, &awaiting[task as usize], &index.times, view.width, |k| view.x(k)),
                None => Vec::new(),
            },
        }
    }).collect();
    // Frames are numbered in first use, in lane and bar order (through a dense map of the run's
    // frames: a hash lookup per bar was a fifth of a whole-run layout); their descriptions are
    // then made in parallel.
    let mut number = vec![u32::MAX; run.frames.len()];
    let mut order: Vec<FrameId> = Vec::new();
    for bar in out.iter_mut().flat_map(|l| l.bars.iter_mut()) {
        let n = &mut number[bar.frame as usize];
        if *n == u32::MAX {
            *n = order.len() as u32;
            order.push(bar.frame);
        }
        bar.frame = *n;
    }
    let frames: Vec<FrameInfo> = order.par_iter().map(|&f| frame_info(run, f, &highlight)).collect();
    let n_ticks = ((req.width_px / 120).max(2)) as usize;
    let axis_ticks = (0..=n_ticks)
        .map(|i| {
            let x = width * i as f64 / n_ticks as f64;
            let p = if view.scale > 0.0 { p0 + x / view.scale } else { p0 };
            AxisTick { x: x as f32, t_s: axis.time_at(p) / 1e9 }
        })
        .collect();
    Ok(Layout {
        from_s,
        to_s,
        run_from_s: run_from,
        run_to_s: run_to,
        width_px: req.width_px,
        theta: req.theta,
        fold: req.fold,
        period_s: secs(index.period_ns),
        obtained: obtained(run),
        state_colours: StateColours::LIGHT,
        axis: axis_ticks,
        frames,
        overview: (req.overview == Some(true)).then(|| thread_overview(run, index, Some(&ids), Some((from_s, to_s)))),
        lanes: out,
        focus,
    })
}

/// The viewport range, checked against the run.
pub(crate) fn check_range(from: Option<f64>, to: Option<f64>, run_from: f64, run_to: f64) -> Result<(f64, f64), TimelineError> {
    let f = from.unwrap_or(run_from);
    let t = to.unwrap_or(run_to);
    let outside = TimelineError::RangeOutside { from: f, to: t, duration: run_to };
    if from.is_none() && to.is_none() {
        return Ok((f, t));
    }
    // A bound up to 1 ms past the end is the end (rounded figures a user copied).
    if !f.is_finite() || !t.is_finite() || f < 0.0 || f >= run_to || t > run_to + 1e-3 {
        return Err(outside);
    }
    if t <= f {
        return Err(TimelineError::EmptyRange { from: f, to: t });
    }
    Ok((f, t.min(run_to)))
}

pub(crate) fn known_threads(run: &Run) -> String {
    let mut names: Vec<String> = run.threads.iter().enumerate().map(|(i, t)| format!("#{i} {}", t.name)).collect();
    if names.len() > 12 {
        let more = names.len() - 12;
        names.truncate(12);
        names.push(format!("… {more} more"));
    }
    if names.is_empty() {
        "none".into()
    } else {
        names.join(", ")
    }
}

/// The mapping of ticks to pixels in one viewport.
struct View<'a> {
    axis: &'a Axis<'a>,
    index: &'a TimelineIndex,
    p0: f64,
    scale: f64,
    width: f64,
    cols: Vec<u32>,
    mids: Vec<u32>,
}

impl View<'_> {
    fn x(&self, tick: u32) -> f64 {
        (self.axis.pos[tick as usize] - self.p0) * self.scale
    }

    /// The first tick at or after the middle of `x0..x1`.
    fn tick_at_middle(&self, x0: f32, x1: f32) -> u32 {
        let c = x0 as usize;
        if x0 >= 0.0 && c as f32 == x0 && x1 == x0 + 1.0 && c < self.mids.len() {
            return self.mids[c];
        }
        self.tick_at_x((x0 as f64 + x1 as f64) / 2.0)
    }

    /// The first tick at or after pixel `x`.
    fn tick_at_x(&self, x: f64) -> u32 {
        if self.scale <= 0.0 {
            return 0;
        }
        // (An integer test without `f64::fract`, which is a libm call here.)
        let c = x as usize;
        if x >= 0.0 && c as f64 == x && c < self.cols.len() {
            return self.cols[c];
        }
        self.axis.tick_at_position(self.p0 + x / self.scale).min(self.index.ticks() as u32)
    }

    /// Walks the visible items of one row (ascending, non-overlapping): `bar(item, x0, x1)` for
    /// each at least [`MIN_BAR_PX`] wide, `block(x0, x1, count, start_tick, end_tick)` for each
    /// pixel column's narrower ones. The cost is O(visible wide items + columns × log n), not
    /// O(items): a column of narrow items is skipped with one binary search. `dense_until(i)` is
    /// the first item at or after `i` whose stride is not under [`DENSE_PX`] (lod.rs), and the
    /// item before which no look for one is needed again (`(i, usize::MAX)` turns this off): a
    /// stretch of such items, whose columns' blocks would all merge, is passed in one step
    /// ([`View::skip_dense`]).
    fn place<T>(
        &self,
        row: &[T],
        span: impl Fn(&T) -> (u32, u32),
        mut dense_until: impl FnMut(usize) -> (usize, usize),
        mut bar: impl FnMut(&T, f32, f32),
        mut block: impl FnMut(f32, f32, u32, u32, u32),
    ) {
        if self.scale <= 0.0 {
            return;
        }
        // (Most rows of a view from the run's start begin at their first item: no search.)
        let mut i = match row.first() {
            Some(b) if self.x(span(b).1) <= 0.0 => row.partition_point(|b| self.x(span(b).1) <= 0.0),
            _ => 0,
        };
        // The right edge of what was emitted last: a column's block starts no earlier, so that
        // nothing in a row overlaps.
        let mut last_x1 = 0.0f64;
        // The last look for a dense stretch: from `.0`, the stretch ends at `.1` (the same answer
        // for every item before it), and no look is needed before `.2`.
        let mut dense = (0, 0, 0);
        while i < row.len() {
            let (s, e) = span(&row[i]);
            let x0 = self.x(s);
            if x0 >= self.width {
                break;
            }
            let x1 = self.x(e);
            if x1 - x0 >= MIN_BAR_PX {
                bar(&row[i], x0.max(0.0) as f32, x1.min(self.width) as f32);
                last_x1 = x1;
                i += 1;
                continue;
            }
            // x0 < width ≤ MAX_WIDTH_PX here, so the truncation is the floor.
            let col = x0.max(0.0) as u32 as f64;
            if !(dense.0 <= i && (i < dense.1 || i < dense.2)) {
                let (k, next_look) = dense_until(i);
                dense = (i, k, next_look);
            }
            let k = if i < dense.1 { dense.1 } else { i };
            if let Some((j, bx1)) = self.skip_dense(row, &span, i, k, col) {
                block(col.max(last_x1).min(bx1) as f32, bx1 as f32, (j - i) as u32, s, span(&row[j - 1]).1);
                last_x1 = bx1;
                i = j;
                continue;
            }
            let col_end = self.tick_at_x(col + 1.0);
            let mut j = i + 1 + gallop(&row[i + 1..], |b| span(b).0 < col_end);
            let (ls, le) = span(&row[j - 1]);
            if j - 1 > i && self.x(le) - self.x(ls) >= MIN_BAR_PX {
                j -= 1; // the last one starting in this column is wide: drawn as itself next
            }
            let end = span(&row[j - 1]).1;
            // …and ends where the next item starts, if that is inside the column.
            let next = row.get(j).map_or(f64::INFINITY, |b| self.x(span(b).0));
            let bx1 = (col + 1.0).min(self.width).min(next);
            block(col.max(last_x1).min(bx1) as f32, bx1 as f32, (j - i) as u32, s, end);
            last_x1 = bx1;
            i = j;
        }
    }

    /// For a narrow item `i` starting in column `col`, with the strides of items `i..k` all under
    /// [`DENSE_PX`]: the column walk would give every column up to the one before column `t` (the
    /// one item `k` starts in) a block, and the blocks would merge — each column holds a start and
    /// every item is narrow, so each block begins where the one before ends. This returns what
    /// that walk would end with: the first item `j` of column `t` and the right edge of the merged
    /// block, or `None` when it is not worth it or the rounding of positions makes it uncertain
    /// (then the walk goes on column by column).
    ///
    /// `j` is the first item starting at or after the tick of column `t`'s left edge. The walk
    /// ends a column's group exactly there if item `j − 1` lies in column `t − 1` both by its
    /// position and by its tick (checked below); its block then ends at `min(t, width, x(j))`.
    fn skip_dense<T>(&self, row: &[T], span: &impl Fn(&T) -> (u32, u32), i: usize, k: usize, col: f64) -> Option<(usize, f64)> {
        if k < i + 2 {
            return None;
        }
        let last = k.min(row.len() - 1);
        let t = self.x(span(&row[last]).0).min(self.width).max(0.0) as u32 as usize;
        if (t as f64) < col + 2.0 {
            return None;
        }
        let t_tick = self.cols[t];
        // Column `t` holds item `last`, and each column holds a start, so `j` is near `last`.
        let j = i + 1 + gallop_back(&row[i + 1..=last], |b| span(b).0 < t_tick);
        if j > k {
            return None;
        }
        let (ls, le) = span(&row[j - 1]);
        let lx = self.x(ls);
        let in_col = lx >= (t - 1) as f64 && lx < t as f64 && ls >= self.cols[t - 1];
        if !in_col || self.x(le) - lx >= MIN_BAR_PX {
            return None;
        }
        let next = row.get(j).map_or(f64::INFINITY, |b| self.x(span(b).0));
        Some((j, (t as f64).min(self.width).min(next)))
    }
}

/// `slice.partition_point(pred)` for an answer expected near the start: exponential then binary
/// search, so a column of a few narrow bars costs a few comparisons.
fn gallop<T>(slice: &[T], pred: impl Fn(&T) -> bool) -> usize {
    let mut hi = 1;
    while hi < slice.len() && pred(&slice[hi]) {
        hi *= 2;
    }
    let lo = hi / 2;
    let hi = hi.min(slice.len());
    if hi == 0 {
        return 0;
    }
    if lo == 0 && !pred(&slice[0]) {
        return 0;
    }
    lo + slice[lo..hi].partition_point(&pred)
}

/// `slice.partition_point(pred)` for an answer expected near the end: exponential search back
/// from the end, then binary search.
fn gallop_back<T>(slice: &[T], pred: impl Fn(&T) -> bool) -> usize {
    let n = slice.len();
    let mut step = 1;
    // Invariant: every item at or after `hi` fails `pred`.
    let mut hi = n;
    while hi > 0 && !pred(&slice[hi - 1]) {
        let lo = hi.saturating_sub(step);
        if pred(&slice[lo]) {
            return lo + 1 + slice[lo + 1..hi - 1].partition_point(&pred);
        }
        hi = lo;
        step *= 2;
    }
    hi
}

/// What a layout says of one of the run's frames; `highlight`: per function, highlighted (empty:
/// none).
fn frame_info(run: &Run, frame: FrameId, highlight: &[bool]) -> FrameInfo {
    let fr = &run.frames[frame as usize];
    let f = &run.functions[fr.function as usize];
    let function = run.str(f.qualname).to_string();
    FrameInfo {
        colour: frame_colour(&function),
        function,
        file: run.file_path(f.file).to_string(),
        line: if fr.line > 0 { fr.line } else { f.line },
        stdlib: run.files[f.file as usize].kind == FileKind::Stdlib,
        highlighted: highlight.get(fr.function as usize).copied().filter(|&h| h),
    }
}

/// A frame's colour: a hue from a hash of its function's name (FNV-1a), at a fixed saturation and
/// lightness that keep black text readable; the same function has the same colour in every lane,
/// viewport and run.
pub fn frame_colour(function: &str) -> String {
    let mut h: u32 = 0x811c_9dc5;
    for b in function.bytes() {
        h = (h ^ b as u32).wrapping_mul(0x0100_0193);
    }
    let hue = (h % 360) as f64;
    hsl_hex(hue, 0.55, 0.72)
}

fn hsl_hex(h: f64, s: f64, l: f64) -> String {
    let c = (1.0 - (2.0 * l - 1.0).abs()) * s;
    let hp = h / 60.0;
    let x = c * (1.0 - (hp % 2.0 - 1.0).abs());
    let (r, g, b) = match hp as u32 {
        0 => (c, x, 0.0),
        1 => (x, c, 0.0),
        2 => (0.0, c, x),
        3 => (0.0, x, c),
        4 => (x, 0.0, c),
        _ => (c, 0.0, x),
    };
    let m = l - c / 2.0;
    let to = |v: f64| ((v + m) * 255.0).round().clamp(0.0, 255.0) as u8;
    format!("#{:02x}{:02x}{:02x}", to(r), to(g), to(b))
}

/// The underlay colours of the three states.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, ts_rs::TS)]
pub struct StateColours {
    pub computing: &'static str,
    pub gil: &'static str,
    pub idle: &'static str,
}

impl StateColours {
    pub const LIGHT: StateColours = StateColours { computing: "#cfe8cf", gil: "#f6d9a8", idle: "#e4e4e4" };
}

/// The underlay colour of a state (light and dark variants are the renderer's business; these are
/// the light theme's, shared by the SVG chart and the canvas renderer through the layout's users).
pub fn state_colour(state: BarState) -> &'static str {
    let c = StateColours::LIGHT;
    match state {
        BarState::Computing => c.computing,
        BarState::Gil => c.gil,
        BarState::Idle => c.idle,
    }
}
