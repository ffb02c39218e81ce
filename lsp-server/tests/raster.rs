//! The glyph as pixels: colours where the sectors are, numbers drawn with a system font.

use threadradar_analysis::glyph::{self, RadarCluster, RadarSpec, SvgOptions, Theme};
use threadradar_lsp::raster;

fn spec(clusters: &[(usize, f64, f64)], threads: usize, types: usize) -> RadarSpec {
    RadarSpec {
        clusters: clusters.iter().map(|&(threads, avg, sum)| RadarCluster { threads, avg, sum }).collect(),
        threads,
        thread_types: types,
    }
}

#[test]
fn bad_sizes_and_svgs_are_sentences() {
    assert!(raster::png("<svg/>", 0).unwrap_err().to_string().contains("pass 1 to 8192 px"));
    assert!(raster::png("not svg", 10).unwrap_err().to_string().starts_with("the SVG could not be parsed"));
}

#[test]
fn png_has_the_cluster_colours_where_the_sectors_are() {
    // Low cluster: right half, average low; high cluster: left half, average high.
    let s = spec(&[(1, 0.1, 0.1), (1, 0.9, 0.9)], 2, 1);
    for theme in [Theme::Light, Theme::Dark] {
        let svg = glyph::svg(&s, &SvgOptions { size: 100, theme, ..Default::default() });
        let bytes = raster::png(&svg, 100).unwrap();
        let decoder = png::Decoder::new(std::io::Cursor::new(bytes));
        let mut reader = decoder.read_info().unwrap();
        let mut buf = vec![0; reader.output_buffer_size()];
        let info = reader.next_frame(&mut buf).unwrap();
        assert_eq!((info.width, info.height), (glyph::glyph_width(100), 100));
        let ch = info.color_type.samples();
        let px = |x: u32, y: u32| {
            let i = ((y * info.width + x) as usize) * ch;
            (buf[i], buf[i + 1], buf[i + 2])
        };
        let hex = |h: &str| {
            let v = u32::from_str_radix(&h[1..], 16).unwrap();
            ((v >> 16) as u8, (v >> 8) as u8, v as u8)
        };
        let close = |a: (u8, u8, u8), b: (u8, u8, u8)| (a.0 as i32 - b.0 as i32).abs() + (a.1 as i32 - b.1 as i32).abs() + (a.2 as i32 - b.2 as i32).abs() < 12;
        let pal = glyph::Palette::of(theme);
        // Centre 50,50; r = 47. Right of centre inside level 1 (r < 15.7): low strong.
        assert!(close(px(58, 50), hex(pal.strong[0])), "{:?} {theme:?}", px(58, 50));
        // Left of centre, between the first and the third circle: high strong.
        assert!(close(px(20, 50), hex(pal.strong[2])), "{:?}", px(20, 50));
        // Right of centre beyond level 1: nothing (low sum is level 1), transparent.
        let i = ((50 * info.width + 73) as usize) * ch;
        assert_eq!(buf[i + 3], 0, "transparent outside the low sector");
        // Some dark/light text pixels of the pedestal numbers exist on the right.
        let text = hex(pal.text);
        assert!((100..glyph::glyph_width(100)).any(|x| (0..100).any(|y| close(px(x, y), text))), "pedestal numbers rendered");
    }
}
