//! SVG → PNG for the glyph images (`threadradar radar -o x.png`, hover images, Neovim's kitty
//! graphics), through resvg. Lives outside `analysis`, which does no I/O: resvg reads the
//! system's fonts, and this module loads them once per process, not once per image.

use resvg::{tiny_skia, usvg};
use std::sync::{Arc, OnceLock};

/// Why an SVG could not be rasterised.
#[derive(Debug, thiserror::Error)]
pub enum RasterError {
    #[error("the SVG could not be parsed: {0}")]
    Parse(String),
    #[error("a {0} px image is too large or empty: pass 1 to 8192 px")]
    Size(u32),
    #[error("the PNG could not be encoded: {0}")]
    Encode(String),
}

/// The system's fonts, loaded on first use and shared by every later image.
fn fonts() -> Arc<usvg::fontdb::Database> {
    static FONTS: OnceLock<Arc<usvg::fontdb::Database>> = OnceLock::new();
    FONTS
        .get_or_init(|| {
            let mut db = usvg::fontdb::Database::new();
            db.load_system_fonts();
            Arc::new(db)
        })
        .clone()
}

/// Rasterises an SVG so that its height is `height_px` (the width keeps the aspect ratio), as a
/// PNG with a transparent background.
pub fn png(svg: &str, height_px: u32) -> Result<Vec<u8>, RasterError> {
    if height_px == 0 || height_px > 8192 {
        return Err(RasterError::Size(height_px));
    }
    let opt = usvg::Options { fontdb: fonts(), ..usvg::Options::default() };
    let tree = usvg::Tree::from_str(svg, &opt).map_err(|e| RasterError::Parse(e.to_string()))?;
    let size = tree.size();
    let scale = height_px as f32 / size.height();
    let w = (size.width() * scale).round().max(1.0) as u32;
    let mut pixmap = tiny_skia::Pixmap::new(w, height_px).ok_or(RasterError::Size(height_px))?;
    resvg::render(&tree, tiny_skia::Transform::from_scale(scale, scale), &mut pixmap.as_mut());
    pixmap.encode_png().map_err(|e| RasterError::Encode(e.to_string()))
}
