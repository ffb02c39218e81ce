//! `threadradar sections --exact RUN`: the table of exact sections (`record --exact-locks`).

use super::sections::ms;
use std::io::Write;
use threadradar_analysis::locksections::ExactSectionsView;

pub fn print(view: &ExactSectionsView, cwd: &str, out: &mut impl Write) -> std::io::Result<()> {
    let short = |p: &str| p.strip_prefix(cwd).map(|f| f.trim_start_matches('/').to_string()).unwrap_or_else(|| p.to_string());
    writeln!(
        out,
        "Exact sections from {} lock events ({} lost) of the interpreter's lock functions (uprobes); places from the samples inside.",
        view.events, view.lost_events
    )?;
    if let Some(w) = &view.stopped {
        writeln!(out, "{w}")?;
    }
    for l in &view.locks {
        writeln!(out)?;
        let place = l.place.as_deref().map(|p| format!("{} ({} of its executions)", short(p), l.place_count)).unwrap_or_else(|| "no sample fell inside".into());
        let object = l.object.as_deref().map(|o| format!(" ({o})")).unwrap_or_default();
        writeln!(out, "lock {}{object}  at {place}", l.lock)?;
        writeln!(
            out,
            "  {} executions  held {}  median {}  p99 {}  max {}  waited {} in total, {} hand-offs",
            l.executions.len(),
            ms(l.total_hold_s),
            ms(l.median_s),
            ms(l.p99_s),
            ms(l.max_s),
            ms(l.waited_s),
            l.handoffs
        )?;
        for e in &l.executions {
            let from = e.waited_for.as_deref().map(|w| format!(" from {w}")).unwrap_or_default();
            writeln!(out, "    {:>10.6} s  {:<12} held {:>9}  waited {:>9}{from}", e.start_s, e.thread, ms(e.duration_s), ms(e.wait_s))?;
        }
    }
    if view.unreleased + view.failed_attempts > 0 {
        writeln!(out, "\n{} acquisitions not released before the end; {} attempts that did not get the lock (tries, timeouts).", view.unreleased, view.failed_attempts)?;
    }
    Ok(())
}
