//! `traceCompare`: two runs matched as traces (`threadradar_analysis::tracediff`) and laid out for
//! the trace compare panel (`web/tracecompare.js`): the server computes every position and
//! statement, the page only draws them.

use super::compare::{two_runs, SetSides};
use crate::host::Host;
use crate::protocol::{CompareBar, CompareEdge, PairLane, ProtocolError, Shift, TraceCompareParams, TraceCompareResult, TraceSide};
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use threadradar_analysis::panel::{Panels, Params};
use threadradar_analysis::timeline::TimelineIndex;
use threadradar_analysis::tracediff::{self, Stretch, TraceDiff, TraceFrame, TraceOptions};
use threadradar_analysis::{CompareOptions, Comparison, FilterSpec, Level};
use threadradar_profiler::run::{FileKind, Run};

pub fn trace_compare(host: &dyn Host, p: TraceCompareParams) -> Result<TraceCompareResult, ProtocolError> {
    if p.width_px == 0 {
        return Err(ProtocolError::invalid("width_px must be at least 1: pass the width of the panel's time axis in pixels"));
    }
    let tau = p.tau.unwrap_or(TraceOptions::default().tau);
    if !(tau > 0.0 && tau <= 1.0) {
        return Err(ProtocolError::invalid(format!("tau {tau} is not a similarity: pass a value in (0, 1], e.g. the default 0.2")));
    }
    let sets = SetSides::resolve(host, ("a", p.a.as_deref(), p.a_runs.as_deref()), ("b", p.b.as_deref(), p.b_runs.as_deref()))?;
    // Neither side named: what `serve A --compare B` was given (the active run against B),
    // else the active run against the run recorded before it.
    let (mut a_name, mut b_name) = (sets.shown(0).or(p.a.clone()), sets.shown(1).or(p.b.clone()));
    if a_name.is_none() && b_name.is_none() {
        if let (Some(b), Ok(active)) = (host.compare_with(), host.active()) {
            if active.path != b {
                a_name = Some(active.path.to_string_lossy().into_owned());
                b_name = Some(b.to_string_lossy().into_owned());
            }
        }
    }
    let ((a_path, a), (b_path, b)) = two_runs(host, a_name.as_deref(), b_name.as_deref())?;
    // The active run keeps its timeline index; another run's is built here.
    let active = host.active().ok();
    let index = |path: &Path, panels: &Arc<Panels>| -> Result<Arc<TimelineIndex>, ProtocolError> {
        match active.as_ref().filter(|l| l.path == path) {
            Some(l) => Ok(l.timeline()?),
            None => Ok(Arc::new(TimelineIndex::new(panels.run())?)),
        }
    };
    let (ia, ib) = (index(&a_path, &a)?, index(&b_path, &b)?);
    let mut diff = TraceDiff::build(a.run(), &ia, b.run(), &ib, &TraceOptions { tau, ..TraceOptions::default() });

    // The changes in words: `compare`'s statements of the program's functions, then the trace's.
    let params = Params { exclude_threads: Vec::new(), states: host.defaults().states.resolve(&[a.run(), b.run()]), window: None };
    let (aa, ba) = (a.analysis(&params)?, b.analysis(&params)?);
    let opts = CompareOptions { level: Level::Function, filter: FilterSpec::default().build()?, top: None };
    let mut comparison = Comparison::build(a.run(), &aa, b.run(), &ba, &opts)?;
    tracediff::extend_changes(&mut comparison, &diff, a.run(), b.run());
    let significance = sets.mark(&mut comparison, (&a_path, &b_path), params.states, Level::Function, super::compare::active_units(host))?;
    // The program's own code only (as the trace's statements are): the standard library's and
    // third-party figures stay in the Compare tab's table.
    let own: std::collections::HashSet<&str> =
        comparison.artifacts.iter().filter(|x| x.file_kind == FileKind::User).map(|x| x.qualname.as_str()).collect();
    let changes: Vec<_> = comparison.changes.iter().filter(|c| c.artifact == "program" || own.contains(c.artifact.as_str())).cloned().collect();

    for g in &mut diff.groups {
        absolute(a.run(), &mut g.stack_a);
        absolute(b.run(), &mut g.stack_b);
    }
    let axis_s = diff.a_duration_s.max(diff.b_duration_s).max(1e-9);
    let px = p.width_px as f64 / axis_s;
    let mut lanes = Vec::with_capacity(diff.pairs.len());
    let mut edges = Vec::new();
    let mut first = 0;
    for (k, pair) in diff.pairs.iter().enumerate() {
        // Groups are stored by pair, then start in A.
        let end = first + diff.groups[first..].iter().take_while(|g| g.pair == k).count();
        let groups = first..end;
        first = end;
        let matched = |start: fn(&tracediff::MatchGroup) -> (f64, f64)| -> Vec<(f64, f64, Option<u32>, Option<Vec<TraceFrame>>)> {
            groups.clone().map(|g| (start(&diff.groups[g]).0, start(&diff.groups[g]).1, Some(g as u32), None)).collect()
        };
        let only = |run: &Run, s: &[Stretch]| -> Vec<(f64, f64, Option<u32>, Option<Vec<TraceFrame>>)> {
            s.iter()
                .map(|s| {
                    let mut stack = s.stack.clone();
                    absolute(run, &mut stack);
                    (s.start_s, s.duration_s, None, Some(stack))
                })
                .collect()
        };
        let mut a_bars = matched(|g| (g.a_start_s, g.a_duration_s));
        a_bars.extend(only(a.run(), &pair.only_in_a));
        let mut b_bars = matched(|g| (g.b_start_s, g.b_duration_s));
        b_bars.extend(only(b.run(), &pair.only_in_b));
        lanes.push(PairLane {
            a: pair.a.clone(),
            b: pair.b.clone(),
            paired_by: pair.paired_by,
            similarity: pair.similarity,
            matched_share: pair.matched_share,
            a_bars: bars(a_bars, px),
            b_bars: bars(b_bars, px),
        });
        // Edges: the groups bundled per (A pixel column, B pixel column, shift).
        let mut bundles: BTreeMap<(i64, i64, Shift), Vec<u32>> = BTreeMap::new();
        for g in groups {
            let x = &diff.groups[g];
            let (ax, bx) = ((x.a_start_s + x.a_duration_s / 2.0) * px, (x.b_start_s + x.b_duration_s / 2.0) * px);
            bundles.entry((ax.floor() as i64, bx.floor() as i64, x.shift)).or_default().push(g as u32);
        }
        for ((_, _, sh), mut gs) in bundles {
            let of = |g: &u32| &diff.groups[*g as usize];
            gs.sort_by(|x, y| (of(y).a_duration_s + of(y).b_duration_s).total_cmp(&(of(x).a_duration_s + of(x).b_duration_s)));
            let (da, db) = (gs.iter().map(|g| of(g).a_duration_s).sum::<f64>(), gs.iter().map(|g| of(g).b_duration_s).sum::<f64>());
            let w = |g: &u32| of(g).a_duration_s + of(g).b_duration_s;
            let total: f64 = gs.iter().map(w).sum();
            let mean = |f: &dyn Fn(&tracediff::MatchGroup) -> f64| {
                if total > 0.0 {
                    gs.iter().map(|g| f(of(g)) * w(g)).sum::<f64>() / total
                } else {
                    gs.iter().map(|g| f(of(g))).sum::<f64>() / gs.len() as f64
                }
            };
            edges.push(CompareEdge {
                lane: k as u32,
                a_x: mean(&|x| (x.a_start_s + x.a_duration_s / 2.0) * px),
                b_x: mean(&|x| (x.b_start_s + x.b_duration_s / 2.0) * px),
                a_duration_s: da,
                b_duration_s: db,
                shift_s: mean(&|x| x.shift_s),
                shift: sh,
                groups: gs,
            });
        }
    }
    let mut notes = vec![format!(
        "How this was obtained: from sampled stacks (A every {:.2} ms, B every {:.2} ms; every edge of a stretch is uncertain by one interval). Two stretches match when their stacks share at least τ = {tau} of their functions (Jaccard); a shift within ±{:.0} ms counts as the same time. Edges are bundled per pixel column.",
        diff.a_period_ms,
        diff.b_period_ms,
        diff.same_shift_s * 1e3
    )];
    notes.append(&mut diff.notes);
    notes.extend(significance);
    let side = |path: &Path, run: &Run, period_ms: f64, stack_s: f64, duration_s: f64| TraceSide {
        path: path.display().to_string(),
        name: path.file_name().map_or_else(|| path.display().to_string(), |n| n.to_string_lossy().into_owned()),
        command: run.meta.command.clone(),
        duration_s,
        period_ms,
        stack_s,
    };
    Ok(TraceCompareResult {
        a: side(&a_path, a.run(), diff.a_period_ms, diff.a_stack_s, diff.a_duration_s),
        b: side(&b_path, b.run(), diff.b_period_ms, diff.b_stack_s, diff.b_duration_s),
        tau,
        matched_share: diff.matched_share,
        same_shift_s: diff.same_shift_s,
        width_px: p.width_px,
        axis_s,
        changes,
        lanes,
        groups: diff.groups,
        edges,
        unmatched_a: diff.unmatched_a,
        unmatched_b: diff.unmatched_b,
        notes,
    })
}

/// Frames' files made absolute against the recording's directory (what `navigate` opens).
fn absolute(run: &Run, stack: &mut [TraceFrame]) {
    for f in stack {
        f.file = crate::runs::absolute(run, &f.file);
    }
}

/// One lane's stretches (start s, stack time s, group, stack) as bars in pixels, in time order;
/// a run of bars narrower than a pixel, all matched or all unmatched, becomes one bar.
fn bars(mut v: Vec<(f64, f64, Option<u32>, Option<Vec<TraceFrame>>)>, px: f64) -> Vec<CompareBar> {
    v.sort_by(|x, y| x.0.total_cmp(&y.0));
    let mut out: Vec<CompareBar> = Vec::with_capacity(v.len());
    let mut longest = 0.0;
    for (start, dur, group, stack) in v {
        let (x0, x1) = (start * px, (start + dur) * px);
        if let Some(last) = out.last_mut() {
            if last.x1 - last.x0 < 1.0 && x1 - x0 < 1.0 && x0 < last.x0 + 1.0 && last.group.is_some() == group.is_some() {
                last.x1 = last.x1.max(x1);
                last.duration_s += dur;
                last.count += 1;
                if dur > longest {
                    longest = dur;
                    last.group = group;
                    last.stack = stack;
                }
                continue;
            }
        }
        longest = dur;
        out.push(CompareBar { x0, x1, start_s: start, duration_s: dur, group, stack, count: 1 });
    }
    out
}
