//! The view model: the JSON shape `report --json` promises, and a readable snapshot of Fig. 2.

mod common;

use common::*;
use expect_test::expect;
use serde_json::Value;
use threadradar_analysis::glyph::{text_glyph_plain, RadarLevel};
use threadradar_analysis::{Analysis, ArtifactFilter, Cluster, Level, Options, ReportView, ThreadFilter, ViewOptions};
use threadradar_profiler::run::FileKind;

fn view(level: Level, filter: ArtifactFilter) -> ReportView {
    let run = fig2();
    let a = Analysis::new(&run, &Options::default()).unwrap();
    ReportView::build(&run, &a, &ViewOptions { level, filter, ..ViewOptions::default() }).unwrap()
}

/// One line per artifact: what a reader checks by eye.
fn dump(v: &ReportView) -> String {
    let mut s = format!("FRQ {}  program {}\n", v.counted_samples, text_glyph_plain(&clusters(&v.program.clusters)));
    for a in &v.artifacts {
        let callees: Vec<String> = a.callees.iter().map(|e| format!("{} {:.3}/{:.3}", e.qualname, e.crt, e.share)).collect();
        s += &format!(
            "{:<5} crt {:.3} self {:.3} {:.3}s thr {} types {} [{}] per-thread {:?} callees {:?}\n",
            a.qualname,
            a.crt,
            a.self_crt,
            a.seconds,
            a.threads,
            a.thread_types,
            text_glyph_plain(&clusters(&a.clusters)),
            a.per_thread.iter().map(|t| format!("T{}:{:.3}", t.thread + 1, t.crt)).collect::<Vec<_>>(),
            callees
        );
    }
    s
}

fn clusters(c: &[threadradar_analysis::view::ClusterView]) -> Vec<Cluster> {
    c.iter().map(|c| Cluster { threads: c.threads.clone(), avg: c.avg, sum: c.sum }).collect()
}

#[test]
fn fig2_function_view_snapshot() {
    expect![[r#"
        FRQ 12  program ▂█×4
        A.m1  crt 0.500 self 0.333 0.018s thr 3 types 2 [▂▂×1 ▅▅×1 ▅▅×1] per-thread ["T1:0.500", "T2:0.333", "T4:0.167"] callees ["A.m2 0.083/0.167", "B.n 0.083/0.167"]
        B.n   crt 0.417 self 0.417 0.015s thr 2 types 2 [▅█×2] per-thread ["T2:0.400", "T3:0.600"] callees []
        A.m2  crt 0.250 self 0.250 0.009s thr 2 types 2 [▅▅×1 ██×1] per-thread ["T1:0.333", "T4:0.667"] callees []
    "#]]
    .assert_eq(&dump(&view(Level::Function, ArtifactFilter::all())));
}

#[test]
fn json_has_the_promised_shape() {
    let v: Value = serde_json::to_value(view(Level::Function, ArtifactFilter::all())).unwrap();
    assert!(v["run"].is_object());
    assert_eq!(v["counted_samples"], 12);
    let t = &v["threads"][0];
    for key in ["id", "name", "type", "pid", "tid", "samples", "crt", "seconds"] {
        assert!(!t[key].is_null(), "thread.{key} missing in {t}");
    }
    assert_eq!(t["type"], "Worker");
    let c = &v["program"]["clusters"][0];
    assert!(c["threads"].is_array() && c["avg"].is_number() && c["sum"].is_number());
    let a = &v["artifacts"][0];
    for key in ["kind", "name", "qualname", "file", "line", "crt", "seconds", "threads", "thread_types", "clusters", "self_crt", "callers", "callees"] {
        assert!(!a[key].is_null(), "artifact.{key} missing in {a}");
    }
    assert_eq!(a["kind"], "function");
    assert_eq!(a["qualname"], "A.m1");
    assert_eq!(a["file"], "/p/a.py");
    assert_eq!(a["line"], 10);
    assert_eq!(a["threads"], 3);
    assert_eq!(a["thread_types"], 2);
    assert!(a["callees"][0]["qualname"].is_string() && a["callees"][0]["crt"].is_number());
    let cl = view(Level::Class, ArtifactFilter::all());
    assert_eq!(serde_json::to_value(&cl).unwrap()["artifacts"][0]["kind"], "class");
    assert!(view(Level::Program, ArtifactFilter::all()).artifacts.is_empty());
}

#[test]
fn artifact_filters_choose_what_is_listed() {
    let names = |v: ReportView| v.artifacts.iter().map(|a| a.qualname.clone()).collect::<Vec<_>>();
    let only = |inc: &[&str], exc: &[&str]| {
        let s = |x: &[&str]| x.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        ArtifactFilter::new(&s(inc), &s(exc)).unwrap()
    };
    assert_eq!(names(view(Level::Function, only(&["^A\\."], &[]))), ["A.m1", "A.m2"]);
    assert_eq!(names(view(Level::Function, only(&[], &["m2$"]))), ["A.m1", "B.n"]);
    // Patterns also match the file path.
    assert_eq!(names(view(Level::Function, only(&["b\\.py"], &[]))), ["B.n"]);
    assert_eq!(names(view(Level::File, only(&[], &[]))), ["/p/a.py", "/p/b.py"]);
    assert!(names(view(Level::Function, ArtifactFilter::all().hide(FileKind::User))).is_empty());
    let err = ArtifactFilter::new(&["(".to_string()], &[]).unwrap_err().to_string();
    assert!(err.contains("--include") && err.contains("not a valid regular expression"), "{err}");
    // --top.
    let run = fig2();
    let a = Analysis::new(&run, &Options::default()).unwrap();
    let v = ReportView::build(&run, &a, &ViewOptions { top: Some(1), ..ViewOptions::default() }).unwrap();
    assert_eq!(names(v), ["A.m1"]);
}

#[test]
fn no_counted_samples_is_one_clear_error() {
    let run = fig2();
    let a = Analysis::new(&run, &Options { threads: ThreadFilter::excluding([0, 1, 2, 3]), ..Options::default() }).unwrap();
    let err = ReportView::build(&run, &a, &ViewOptions::default()).unwrap_err().to_string();
    assert!(err.contains("--states all") && err.contains("excluding 4 threads"), "{err}");
}

#[test]
fn three_level_scale() {
    assert_eq!(RadarLevel::of(0.0), RadarLevel::Low);
    assert_eq!(RadarLevel::of(0.329), RadarLevel::Low);
    assert_eq!(RadarLevel::of(0.33), RadarLevel::Medium);
    assert_eq!(RadarLevel::of(0.659), RadarLevel::Medium);
    assert_eq!(RadarLevel::of(0.66), RadarLevel::High);
    assert_eq!(RadarLevel::of(1.0), RadarLevel::High);
}
