//! A layout as a static SVG chart (`threadradar timeline RUN -o chart.svg`), written with the
//! glyph's SVG helpers: every name from the profiled program goes through
//! [`crate::glyph::escape_xml`].

use super::layout::{state_colour, Layout};
use crate::glyph::{escape_xml, f, LIGHT};
use std::fmt::Write;

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
/// and a `title`) and `rect.block` (with `data-count`).
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
    let mut body = String::new();
    for lane in &layout.lanes {
        let rows = lane.depth.clamp(1, MAX_ROWS) as f64;
        let lane_h = HEADER_PX + rows * ROW_PX;
        let _ = write!(body, r#"<g class="lane" data-thread="{}" transform="translate(0 {})">"#, lane.thread, f(y));
        let _ = write!(
            body,
            r#"<text class="lane-name" x="4" y="11" font-size="11" fill="{}">{} ({})</text>"#,
            pal.text,
            escape_xml(&lane.name),
            escape_xml(&lane.thread_type)
        );
        if lane.depth > MAX_ROWS {
            let _ = write!(body, r#"<text class="cut" x="4" y="{}" font-size="9" fill="{}">{} deeper levels not drawn</text>"#, f(lane_h - 2.0), pal.guide, lane.depth - MAX_ROWS);
        }
        for s in &lane.states {
            let _ = write!(
                body,
                r#"<rect class="state {}" x="{}" y="{}" width="{}" height="{}" fill="{}"/>"#,
                s.state.as_str(),
                f(label + s.x0 as f64),
                f(HEADER_PX),
                f((s.x1 - s.x0) as f64),
                f(rows * ROW_PX),
                state_colour(s.state)
            );
        }
        for b in lane.bars.iter().filter(|b| b.depth < MAX_ROWS) {
            let fr = &layout.frames[b.frame as usize];
            let (x, bw) = (label + b.x0 as f64, (b.x1 - b.x0) as f64);
            let by = HEADER_PX + b.depth as f64 * ROW_PX;
            let _ = write!(
                body,
                r#"<rect class="bar" data-frame="{}" x="{}" y="{}" width="{}" height="{}" fill="{}" stroke="{}" stroke-width="0.3"><title>{} ({}:{}) {:.3}–{:.3} s, {}{}</title></rect>"#,
                b.frame,
                f(x),
                f(by + 0.5),
                f(bw),
                f(ROW_PX - 1.0),
                fr.colour,
                pal.background,
                escape_xml(&fr.function),
                escape_xml(&fr.file),
                fr.line,
                b.start_s,
                b.end_s,
                b.state.as_str(),
                b.blocked.map(|k| format!(" ({})", k.as_str())).unwrap_or_default()
            );
            if bw > 40.0 {
                let chars = ((bw - 4.0) / 5.5) as usize;
                let name: String = fr.function.chars().take(chars).collect();
                let _ = write!(body, r#"<text x="{}" y="{}" font-size="9" fill="{}" clip-path="none">{}</text>"#, f(x + 2.0), f(by + 9.0), pal.text, escape_xml(&name));
            }
        }
        for b in lane.blocks.iter().filter(|b| b.depth < MAX_ROWS) {
            let _ = write!(
                body,
                r#"<rect class="block" data-count="{}" x="{}" y="{}" width="{}" height="{}" fill="{}" opacity="0.6"/>"#,
                b.count,
                f(label + b.x0 as f64),
                f(HEADER_PX + b.depth as f64 * ROW_PX + 0.5),
                f((b.x1 - b.x0) as f64),
                f(ROW_PX - 1.0),
                pal.deselected
            );
        }
        body.push_str("</g>");
        y += lane_h + GAP_PX;
    }
    // The axis.
    let _ = write!(body, r#"<g class="axis" transform="translate(0 {})"><line x1="{}" x2="{}" y1="0" y2="0" stroke="{}"/>"#, f(y), f(label), f(w), pal.guide);
    for t in &layout.axis {
        let x = label + t.x as f64;
        let anchor = if t.x <= 0.0 { "start" } else if t.x as f64 >= layout.width_px as f64 { "end" } else { "middle" };
        let _ = write!(
            body,
            r#"<line x1="{}" x2="{}" y1="0" y2="4" stroke="{}"/><text x="{}" y="15" font-size="10" text-anchor="{anchor}" fill="{}">{:.3} s</text>"#,
            f(x),
            f(x),
            pal.guide,
            f(x),
            pal.text,
            t.t_s
        );
    }
    body.push_str("</g>");
    let h = y + AXIS_PX;
    let scale = if layout.theta > 0.0 { format!("log-scaled, θ = {}/ms", layout.theta) } else { "linear".into() };
    let heading = format!(
        "Timeline {:.3}–{:.3} s of {:.3} s ({scale}); {}",
        layout.from_s, layout.to_s, layout.run_to_s, layout.obtained
    );
    let mut s = String::new();
    let _ = write!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" class="threadradar-timeline" width="{}" height="{}" viewBox="0 0 {} {}" font-family="DejaVu Sans, Verdana, sans-serif"><title>{}</title><rect width="100%" height="100%" fill="{}"/><text class="heading" x="4" y="13" font-size="11" fill="{}">{}</text>"#,
        f(w),
        f(h),
        f(w),
        f(h),
        escape_xml(&heading),
        pal.background,
        pal.text,
        escape_xml(&format!("Timeline {:.3}–{:.3} s ({scale}) · sampled every {:.1} ms: bar edges ± one period", layout.from_s, layout.to_s, layout.period_s * 1e3))
    );
    s.push_str(&body);
    s.push_str("</svg>");
    s
}
