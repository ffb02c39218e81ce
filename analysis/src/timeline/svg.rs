//! A layout as a static SVG chart (`threadradar timeline RUN -o chart.svg`), written with the SVG
//! writer ([`crate::svg`]): every name from the profiled program is escaped on its way in.

use super::layout::{state_colour, Layout};
use crate::svg::{Num, Writer, FONT, LIGHT};

/// Width of the lane labels, px.
pub const LABEL_PX: u32 = 180;
const ROW_PX: f64 = 12.0;
const HEADER_PX: f64 = 14.0;
const GAP_PX: f64 = 6.0;
const AXIS_PX: f64 = 28.0;
/// Deeper rows are cut (the SVG says so); the interactive panel shows them all.
pub const MAX_ROWS: u16 = 48;

/// The chart: a title line, one lane per thread (label, state underlay, bars, lighter aggregated
/// blocks) and the time axis. Structure (tests rely on it): `svg.threadradar-timeline`, per lane a
/// `g.lane` with `data-thread`, a `text.lane-name`, `rect.state`, `rect.bar` (with `data-frame`
/// and a `title`) and `rect.block` (with `data-count`). A task's lane (`--units tasks`) has
/// `data-parent` (its loop thread's lane), a label `task of <thread>` indented under that lane, and
/// its recorded awaiting time as `rect.await` (with a `title`) under its bars.
/// The chart's height in px.
pub fn height(layout: &Layout) -> f64 {
    20.0 + layout.lanes.iter().map(|l| HEADER_PX + l.depth.clamp(1, MAX_ROWS) as f64 * ROW_PX + GAP_PX).sum::<f64>() + AXIS_PX
}

pub fn svg(layout: &Layout) -> String {
    let pal = &LIGHT;
    let label = LABEL_PX as f64;
    let w = label + layout.width_px as f64;
    let title_h = 20.0;
    let mut y = title_h;
    let mut body = Writer::fragment();
    for lane in &layout.lanes {
        let rows = lane.depth.clamp(1, MAX_ROWS) as f64;
        let lane_h = HEADER_PX + rows * ROW_PX;
        match lane.parent {
            Some(parent) => {
                body.start("g", &[("class", &"lane"), ("data-thread", &lane.thread), ("data-parent", &parent), ("transform", &format_args!("translate(0 {})", Num(y)))]);
                let of = layout.lanes.iter().find(|l| l.thread == parent).map_or(format!("#{parent}"), |l| l.name.clone());
                body.element(
                    "text",
                    &[("class", &"lane-name task"), ("x", &16), ("y", &11), ("font-size", &11), ("fill", &pal.text)],
                    format_args!("↳ {} ({}) · task of {of}", lane.name, lane.thread_type),
                );
            }
            None => {
                body.start("g", &[("class", &"lane"), ("data-thread", &lane.thread), ("transform", &format_args!("translate(0 {})", Num(y)))]);
                body.element(
                    "text",
                    &[("class", &"lane-name"), ("x", &4), ("y", &11), ("font-size", &11), ("fill", &pal.text)],
                    format_args!("{} ({})", lane.name, lane.thread_type),
                );
            }
        }
        for a in &lane.awaits {
            let what = a.span.awaits.as_deref().map_or("a future".to_string(), |t| format!("task {t}"));
            body.start(
                "rect",
                &[
                    ("class", &"await"),
                    ("x", &Num(label + a.x0 as f64)),
                    ("y", &Num(HEADER_PX + rows * ROW_PX / 2.0 - 2.0)),
                    ("width", &Num((a.x1 - a.x0) as f64)),
                    ("height", &4),
                    ("fill", &pal.guide),
                ],
            );
            body.element("title", &[], format_args!("awaiting {what}, {:.3}–{:.3} s ({}, sampled)", a.span.start_s, a.span.end_s, a.span.evidence));
            body.end("rect");
        }
        if lane.depth > MAX_ROWS {
            body.element(
                "text",
                &[("class", &"cut"), ("x", &4), ("y", &Num(lane_h - 2.0)), ("font-size", &9), ("fill", &pal.guide)],
                format_args!("{} deeper levels not drawn", lane.depth - MAX_ROWS),
            );
        }
        for s in &lane.states {
            let class = format!("state {}", s.state.as_str());
            body.empty(
                "rect",
                &[
                    ("class", &class),
                    ("x", &Num(label + s.x0 as f64)),
                    ("y", &Num(HEADER_PX)),
                    ("width", &Num((s.x1 - s.x0) as f64)),
                    ("height", &Num(rows * ROW_PX)),
                    ("fill", &state_colour(s.state)),
                ],
            );
        }
        for b in lane.bars.iter().filter(|b| b.depth < MAX_ROWS) {
            let fr = &layout.frames[b.frame as usize];
            let (x, bw) = (label + b.x0 as f64, (b.x1 - b.x0) as f64);
            let by = HEADER_PX + b.depth as f64 * ROW_PX;
            body.start(
                "rect",
                &[
                    ("class", &"bar"),
                    ("data-frame", &b.frame),
                    ("x", &Num(x)),
                    ("y", &Num(by + 0.5)),
                    ("width", &Num(bw)),
                    ("height", &Num(ROW_PX - 1.0)),
                    ("fill", &fr.colour),
                    ("stroke", &pal.background),
                    ("stroke-width", &0.3),
                ],
            );
            let blocked = b.blocked.map(|k| format!(" ({})", k.as_str())).unwrap_or_default();
            body.title(format_args!("{} ({}:{}) {:.3}–{:.3} s, {}{}", fr.function, fr.file, fr.line, b.start_s, b.end_s, b.state.as_str(), blocked));
            body.end("rect");
            if bw > 40.0 {
                let chars = ((bw - 4.0) / 5.5) as usize;
                let name: String = fr.function.chars().take(chars).collect();
                body.element("text", &[("x", &Num(x + 2.0)), ("y", &Num(by + 9.0)), ("font-size", &9), ("fill", &pal.text), ("clip-path", &"none")], name);
            }
        }
        for b in lane.blocks.iter().filter(|b| b.depth < MAX_ROWS) {
            body.empty(
                "rect",
                &[
                    ("class", &"block"),
                    ("data-count", &b.count),
                    ("x", &Num(label + b.x0 as f64)),
                    ("y", &Num(HEADER_PX + b.depth as f64 * ROW_PX + 0.5)),
                    ("width", &Num((b.x1 - b.x0) as f64)),
                    ("height", &Num(ROW_PX - 1.0)),
                    ("fill", &pal.deselected),
                    ("opacity", &0.6),
                ],
            );
        }
        body.end("g");
        y += lane_h + GAP_PX;
    }
    // The axis.
    body.start("g", &[("class", &"axis"), ("transform", &format_args!("translate(0 {})", Num(y)))]);
    body.empty("line", &[("x1", &Num(label)), ("x2", &Num(w)), ("y1", &0), ("y2", &0), ("stroke", &pal.guide)]);
    for t in &layout.axis {
        let x = Num(label + t.x as f64);
        let anchor = if t.x <= 0.0 { "start" } else if t.x as f64 >= layout.width_px as f64 { "end" } else { "middle" };
        body.empty("line", &[("x1", &x), ("x2", &x), ("y1", &0), ("y2", &4), ("stroke", &pal.guide)]);
        body.element("text", &[("x", &x), ("y", &15), ("font-size", &10), ("text-anchor", &anchor), ("fill", &pal.text)], format_args!("{:.3} s", t.t_s));
    }
    body.end("g");
    let h = y + AXIS_PX;
    let scale = if layout.theta > 0.0 { format!("log-scaled, θ = {}/ms", layout.theta) } else { "linear".into() };
    let heading = format!(
        "Timeline {:.3}–{:.3} s of {:.3} s ({scale}); {}",
        layout.from_s, layout.to_s, layout.run_to_s, layout.obtained
    );
    let mut s = Writer::document("threadradar-timeline", Num(w), Num(h), &[("font-family", &FONT)]);
    s.title(heading);
    s.empty("rect", &[("width", &"100%"), ("height", &"100%"), ("fill", &pal.background)]);
    s.element(
        "text",
        &[("class", &"heading"), ("x", &4), ("y", &13), ("font-size", &11), ("fill", &pal.text)],
        format_args!("Timeline {:.3}–{:.3} s ({scale}) · sampled every {:.1} ms: bar edges ± one period", layout.from_s, layout.to_s, layout.period_s * 1e3),
    );
    s.append(body);
    s.finish()
}
