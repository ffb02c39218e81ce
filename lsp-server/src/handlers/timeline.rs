//! `timeline`: one viewport of the active run's timeline (`threadradar_analysis::timeline`); the
//! run's timeline index is built once, on first use, and kept with the loaded run.

use crate::host::Host;
use crate::protocol::ProtocolError;
use threadradar_analysis::timeline::layout::{self, Layout, LayoutRequest};

pub fn timeline(host: &dyn Host, req: LayoutRequest) -> Result<Layout, ProtocolError> {
    let loaded = host.active()?;
    let index = loaded.timeline()?;
    Ok(layout::layout(loaded.run(), &index, &req)?)
}
