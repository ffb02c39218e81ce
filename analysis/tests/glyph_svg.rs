//! The SVG glyph and histogram, asserted on their structure (parsed as XML) and, for the glyph,
//! on rendered pixels.

use threadradar_analysis::glyph::{self, RadarCluster, RadarSpec, SvgOptions, Theme, MIN_SECTOR_DEG};
use threadradar_analysis::histogram::{self, HistogramOptions, HistogramPoint};
use threadradar_analysis::glyph::ClusterColour;

fn spec(clusters: &[(usize, f64, f64)], threads: usize, types: usize) -> RadarSpec {
    RadarSpec {
        clusters: clusters.iter().map(|&(threads, avg, sum)| RadarCluster { threads, avg, sum }).collect(),
        threads,
        thread_types: types,
    }
}

fn num(n: &roxmltree::Node, attr: &str) -> f64 {
    n.attribute(attr).unwrap_or_else(|| panic!("no {attr}")).parse().unwrap()
}

#[test]
fn sectors_angles_radii_and_pedestals() {
    // 6 threads low (avg 5 %, sum 30 %), 3 middle (avg 10 %, sum 30 %), 1 high (avg 40 %, sum 40 %).
    let s = spec(&[(6, 0.05, 0.30), (3, 0.10, 0.30), (1, 0.40, 0.40)], 10, 2);
    let svg = glyph::svg(&s, &SvgOptions { size: 96, ..Default::default() });
    let doc = roxmltree::Document::parse(&svg).unwrap();
    let root = doc.root_element();
    assert_eq!(root.attribute("height"), Some("96"));
    assert_eq!(root.attribute("data-threads"), Some("10"));
    let r = 96.0 / 2.0 - 3.0;
    let guides: Vec<f64> = doc.descendants().filter(|n| n.has_tag_name("circle") && n.attribute("class") == Some("guide")).map(|n| num(&n, "r")).collect();
    assert_eq!(guides, vec![r / 3.0, r * 2.0 / 3.0, r]);

    let strong: Vec<_> = doc.descendants().filter(|n| n.attribute("class").is_some_and(|c| c.starts_with("strong"))).collect();
    let weak: Vec<_> = doc.descendants().filter(|n| n.attribute("class").is_some_and(|c| c.starts_with("weak"))).collect();
    assert_eq!((strong.len(), weak.len()), (3, 3));
    // Weak sectors are drawn first (behind).
    let pos = |n: &roxmltree::Node| n.range().start;
    assert!(weak.iter().all(|w| strong.iter().all(|s| pos(w) < pos(s))));
    // Angles ∝ thread count: 6/10, 3/10, 1/10 of 360° = 216°, 108°, 36° (36° ≥ the minimum).
    let spans: Vec<f64> = strong.iter().map(|n| num(n, "data-a1") - num(n, "data-a0")).collect();
    assert_eq!(spans, vec![216.0, 108.0, 36.0]);
    // Strong radius = average's level; weak radius = sum's level.
    let levels: Vec<&str> = strong.iter().map(|n| n.attribute("data-level-avg").unwrap()).collect();
    assert_eq!(levels, vec!["1", "1", "2"]);
    let radii: Vec<f64> = strong.iter().map(|n| num(n, "data-r")).collect();
    assert_eq!(radii, vec![r / 3.0, r / 3.0, r * 2.0 / 3.0]);
    let weak_levels: Vec<&str> = weak.iter().map(|n| n.attribute("data-level-sum").unwrap()).collect();
    assert_eq!(weak_levels, vec!["1", "1", "2"]);
    // The arc in the path really has that radius.
    let d = strong[2].attribute("d").unwrap();
    assert!(d.contains(&format!("A{} {}", glyph_f(r * 2.0 / 3.0), glyph_f(r * 2.0 / 3.0))), "{d}");
    // Colours: low, middle, high.
    let fills: Vec<&str> = strong.iter().map(|n| n.attribute("fill").unwrap()).collect();
    assert_eq!(fills, glyph::LIGHT.strong.to_vec());
    // Pedestals: lower = threads, upper = thread types (upside down: its base at the top).
    let ped = |class: &str| doc.descendants().find(|n| n.attribute("class") == Some(class)).unwrap();
    let lower = ped("pedestal threads");
    let upper = ped("pedestal types");
    let text = |n: roxmltree::Node| n.descendants().find(|c| c.has_tag_name("text")).unwrap().text().unwrap().to_string();
    assert_eq!((text(lower), text(upper)), ("10".to_string(), "2".to_string()));
    let text_y = |n: roxmltree::Node| num(&n.descendants().find(|c| c.has_tag_name("text")).unwrap(), "y");
    assert!(text_y(upper) < text_y(lower));
}

fn glyph_f(x: f64) -> String {
    let s = format!("{:.2}", x);
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

#[test]
fn minimum_angle_keeps_a_lone_thread_visible() {
    // 1 thread against 99: 3.6° would vanish (paper Fig. 13); it gets the minimum.
    let angles = glyph::sector_angles(&[99, 1]);
    assert_eq!(angles[1], MIN_SECTOR_DEG);
    assert!((angles[0] - (360.0 - MIN_SECTOR_DEG)).abs() < 1e-9);
    let svg = glyph::svg(&spec(&[(99, 0.01, 0.9), (1, 0.1, 0.1)], 100, 1), &SvgOptions::default());
    let doc = roxmltree::Document::parse(&svg).unwrap();
    let strong: Vec<_> = doc.descendants().filter(|n| n.attribute("class").is_some_and(|c| c.starts_with("strong"))).collect();
    assert_eq!(num(&strong[1], "data-a1") - num(&strong[1], "data-a0"), MIN_SECTOR_DEG);
    // One cluster: a full disc. No cluster: guides only.
    assert_eq!(glyph::sector_angles(&[5]), vec![360.0]);
    let empty = glyph::svg(&RadarSpec::default(), &SvgOptions::default());
    assert_eq!(roxmltree::Document::parse(&empty).unwrap().descendants().filter(|n| n.has_tag_name("path") && n.attribute("data-cluster").is_some()).count(), 0);
}

#[test]
fn interactive_glyph_has_hit_areas_and_hidden_outlines() {
    let svg = glyph::svg(&spec(&[(2, 0.1, 0.2), (1, 0.8, 0.8)], 3, 1), &SvgOptions { size: 200, interactive: true, ..Default::default() });
    let doc = roxmltree::Document::parse(&svg).unwrap();
    let of = |class: &str| doc.descendants().filter(|n| n.attribute("class") == Some(class)).count();
    assert_eq!((of("hit"), of("outline")), (2, 2));
    assert!(doc.descendants().filter(|n| n.attribute("class") == Some("outline")).all(|n| n.attribute("visibility") == Some("hidden")));
}

#[test]
fn titles_are_escaped() {
    let svg = glyph::svg(&RadarSpec::default(), &SvgOptions { title: Some("\"><script>alert(1)</script>".into()), ..Default::default() });
    assert!(!svg.contains("<script"));
    let doc = roxmltree::Document::parse(&svg).unwrap();
    assert_eq!(doc.descendants().find(|n| n.has_tag_name("title")).unwrap().text(), Some("\"><script>alert(1)</script>"));
}


fn point(thread: u32, value: f64) -> HistogramPoint {
    HistogramPoint { thread, label: format!("t{thread}"), value, colour: ClusterColour::Low }
}

#[test]
fn histogram_one_square_per_thread_stacked_and_fitting() {
    let pts = vec![point(0, 0.1), point(1, 0.1), point(2, 0.1), point(3, 0.3), point(4, 0.6)];
    let (w, h) = (300, 90);
    let svg = histogram::svg(&pts, &HistogramOptions { width: w, height: h, theme: Theme::Light });
    let doc = roxmltree::Document::parse(&svg).unwrap();
    let sq: Vec<_> = doc.descendants().filter(|n| n.attribute("class").is_some_and(|c| c.starts_with("sq"))).collect();
    assert_eq!(sq.len(), 5);
    let rect = |n: &roxmltree::Node| (num(n, "x"), num(n, "y"), num(n, "width"));
    // Equal values share x and stack upwards.
    let (a, b, c) = (rect(&sq[0]), rect(&sq[1]), rect(&sq[2]));
    assert_eq!((a.0, b.0), (c.0, c.0));
    assert!(a.1 > b.1 && b.1 > c.1);
    // x is linear up to the maximum: 0.3 lies halfway between 0 and 0.6 (left edges).
    let layout = histogram::layout(&pts, w as f64, h as f64);
    let x0 = 4.0;
    let span = layout[4].0 - x0;
    assert!((layout[3].0 - x0 - span * 0.5).abs() < 1e-9);
    // Everything inside the box.
    for (x, y, s) in layout {
        assert!(x >= 0.0 && y >= 0.0 && x + s <= w as f64 && y + s <= h as f64, "{x} {y} {s}");
    }
    // Tall stacks shrink the squares to fit.
    let many: Vec<_> = (0..40).map(|i| point(i, 0.5)).collect();
    for (_, y, s) in histogram::layout(&many, 200.0, 60.0) {
        assert!(y >= 0.0 && s > 0.0);
    }
}
