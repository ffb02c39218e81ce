//! `sections`: discovers the critical sections of the active run's own files as they are on disk
//! (with the project's `pyproject.toml`) and analyses every execution of each.

use crate::host::Host;
use crate::protocol::{ErrorCode, ProtocolError, SectionsParams, SectionsResult};
use threadradar_analysis::sections::{analyse, SectionOptions};
use threadradar_profiler::sections::discover_run;

pub fn sections(host: &dyn Host, req: SectionsParams) -> Result<SectionsResult, ProtocolError> {
    let mut options = SectionOptions::default();
    if let Some(f) = req.outlier_factor {
        if !(f.is_finite() && f > 0.0) {
            return Err(ProtocolError::invalid(format!("outlier_factor must be a positive number, not {f}; the default is 5")));
        }
        options.outlier_factor = f;
    }
    if let Some(q) = req.outlier_quantile {
        if !(q > 0.0 && q <= 1.0) {
            return Err(ProtocolError::invalid(format!("outlier_quantile must be in (0, 1], not {q}; the default is 0.99")));
        }
        options.outlier_quantile = q;
    }
    let loaded = host.active()?;
    let run = loaded.run();
    let found = discover_run(run, None).map_err(|e| ProtocolError::new(ErrorCode::Unprocessable, e))?;
    Ok(SectionsResult {
        view: analyse(run, &found.sections, &options),
        notes: found.notes,
        config_file: found.config_file.map(|p| p.display().to_string()),
    })
}
