//! `overview`, `detail`, `glyph`, `threads`: straight to `threadradar_analysis::panel`, on the
//! active run's cached analyses.

use crate::host::Host;
use crate::protocol::{GlyphResult, ProtocolError};
use threadradar_analysis::panel::{DetailRequest, DetailResponse, GlyphRequest, OverviewRequest, OverviewResponse, ThreadsRequest, ThreadsResponse};

pub fn overview(host: &dyn Host, req: OverviewRequest) -> Result<OverviewResponse, ProtocolError> {
    Ok(host.active()?.panels.overview(&req)?)
}

pub fn detail(host: &dyn Host, req: DetailRequest) -> Result<DetailResponse, ProtocolError> {
    Ok(host.active()?.panels.detail(&req)?)
}

pub fn glyph(host: &dyn Host, req: GlyphRequest) -> Result<GlyphResult, ProtocolError> {
    Ok(GlyphResult { svg: host.active()?.panels.glyph(&req)? })
}

pub fn threads(host: &dyn Host, req: ThreadsRequest) -> Result<ThreadsResponse, ProtocolError> {
    Ok(host.active()?.panels.threads(&req)?)
}
