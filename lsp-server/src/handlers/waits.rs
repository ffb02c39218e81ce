//! `waits`: who waited for whom in the active run (`threadradar_analysis::waits`).

use crate::host::Host;
use crate::protocol::{EdgeBundle, ErrorCode, ProtocolError, WaitsParams, WaitsResult};
use std::collections::BTreeMap;
use threadradar_analysis::{waitcounts, waits_groups};
use threadradar_analysis::waits::{self, WaitsOptions};

pub fn waits(host: &dyn Host, p: WaitsParams) -> Result<WaitsResult, ProtocolError> {
    if let (Some(a), Some(b)) = (p.from_s, p.to_s) {
        if !(a.is_finite() && b.is_finite() && a < b) {
            return Err(ProtocolError::new(ErrorCode::InvalidParams, format!("the time range {a}–{b} s is empty: give from_s < to_s")));
        }
    }
    if p.width_px == Some(0) {
        return Err(ProtocolError::new(ErrorCode::InvalidParams, "width_px must be at least 1"));
    }
    let loaded = host.active()?;
    let run = loaded.run();
    let view = waits::waits(run, &WaitsOptions { object: p.object, from_s: p.from_s, to_s: p.to_s, no_kernel: p.no_kernel });
    let bundles = p.width_px.map(|w| {
        let from = p.from_s.unwrap_or(0.0);
        let to = p.to_s.unwrap_or(run.meta.duration_s.max(from + 1e-9));
        let px = (to - from) / w as f64;
        let mut m: BTreeMap<(i64, u32, u32, u32, u8), EdgeBundle> = BTreeMap::new();
        for (i, e) in view.edges.iter().enumerate() {
            let col = ((e.time_s - from) / px).floor() as i64;
            let b = m.entry((col, e.waker_thread, e.wakee_thread, e.object_index, e.evidence as u8)).or_insert(EdgeBundle {
                waker_thread: e.waker_thread,
                wakee_thread: e.wakee_thread,
                object_index: e.object_index,
                evidence: e.evidence,
                from_s: e.time_s,
                to_s: e.time_s,
                count: 0,
                confidence: 0.0,
                futile: 0,
                first_edge: i as u32,
            });
            b.from_s = b.from_s.min(e.time_s);
            b.to_s = b.to_s.max(e.time_s);
            b.confidence += e.confidence;
            b.count += 1;
            b.futile += e.futile as u32;
        }
        m.into_values()
            .map(|mut b| {
                b.confidence /= b.count as f64;
                b
            })
            .collect()
    });
    let counts = waitcounts::count(&view);
    let range = p.width_px.map(|w| {
        let from = p.from_s.unwrap_or(0.0);
        (w, from, p.to_s.unwrap_or(run.meta.duration_s.max(from + 1e-9)))
    });
    let groups = waits_groups::groups(&view, range);
    Ok(WaitsResult { view, bundles, counts, groups })
}
