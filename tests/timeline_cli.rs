//! `threadradar timeline` end to end: real recordings of real Python programs, checked against
//! what the programs logged about themselves; the chart, the JSON, the layouts protocol and the
//! one-sentence errors.

mod common;

use common::*;
use std::io::Write;
use std::process::{Command, Stdio};

fn json(out: &std::process::Output) -> serde_json::Value {
    assert!(out.status.success(), "threadradar failed: {}", stderr(out));
    serde_json::from_slice(&out.stdout).expect("JSON on stdout")
}

#[test]
fn bars_match_the_phases_the_program_logged() {
    let _g = serial();
    let dir = tempfile::tempdir().unwrap();
    let run_path = dir.path().join("phases.json");
    let rec = record(&run_path, &[], &[&script("phases.py")]);
    assert!(rec.status.success(), "{}", stderr(&rec));
    let logged: serde_json::Value =
        serde_json::from_str(String::from_utf8_lossy(&rec.stdout).lines().last().unwrap()).expect("the program's event log");
    let run = read(&run_path);
    let start_unix = run.meta.start_unix_ms as f64 / 1000.0;
    let period = threadradar_analysis::period::sampling_period_s(&run);
    let out = json(&threadradar(dir.path(), &["timeline", run_path.to_str().unwrap(), "--json", "--threads", "^(phaser|waiter)$"]));
    let threads = out["threads"].as_array().unwrap();
    assert_eq!(threads.len(), 2);
    for ev in logged.as_array().unwrap() {
        let (thread, phase) = (ev["thread"].as_str().unwrap(), ev["phase"].as_str().unwrap());
        let (start, end) = (ev["start"].as_f64().unwrap() - start_unix, ev["end"].as_f64().unwrap() - start_unix);
        let t = threads.iter().find(|t| t["name"] == thread).unwrap();
        // The bar of that phase's function that overlaps the logged interval most.
        let bar = t["bars"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|b| b["function"] == phase)
            .max_by(|a, b| {
                let ov = |b: &serde_json::Value| (b["end_s"].as_f64().unwrap().min(end) - b["start_s"].as_f64().unwrap().max(start)).max(0.0);
                ov(a).total_cmp(&ov(b))
            })
            .unwrap_or_else(|| panic!("no {phase} bar in {thread}"));
        // The run's clock and the program's differ by the start-up of the sampler (the start is
        // stored in whole milliseconds): allow two sampling periods and 15 ms.
        let tol = 2.0 * period + 0.015;
        // A thread is sampled from when the sampler first sees it, which can be after it started.
        let th = run.threads.iter().find(|x| x.name == thread).unwrap();
        let first_seen = run.samples[th.first_sample as usize].t as f64 / 1e9;
        let start = start.max(first_seen);
        let (bs, be) = (bar["start_s"].as_f64().unwrap(), bar["end_s"].as_f64().unwrap());
        assert!((bs - start).abs() < tol && (be - end).abs() < tol, "{thread} {phase}: logged {start:.3}–{end:.3} s, bar {bs:.3}–{be:.3} s");
        let expected = match phase {
            "compute_phase" => ("computing", None),
            "sleep_phase" => ("idle", Some("sleep")),
            _ => ("idle", Some("condition")),
        };
        assert_eq!((bar["state"].as_str().unwrap(), bar["blocked"].as_str()), expected, "{thread} {phase}: {bar}");
    }
    // The chart of the same run is valid SVG with one lane per selected thread.
    let svg_path = dir.path().join("t.svg");
    let o = threadradar(dir.path(), &["timeline", run_path.to_str().unwrap(), "-o", svg_path.to_str().unwrap(), "--threads", "phaser|waiter", "--theta", "0.5"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = std::fs::read_to_string(&svg_path).unwrap();
    let doc = roxmltree::Document::parse(&text).unwrap();
    let lanes: Vec<_> = doc.descendants().filter(|n| n.attribute("class") == Some("lane")).collect();
    assert_eq!(lanes.len(), 2);
    assert!(doc.descendants().any(|n| n.attribute("class") == Some("bar")));
    // And the overview says the waiter waited and the phaser computed for about two thirds.
    let o = threadradar(dir.path(), &["timeline", run_path.to_str().unwrap(), "--threads", "phaser|waiter"]);
    let table = String::from_utf8_lossy(&o.stdout).to_string();
    assert!(table.lines().any(|l| l.starts_with("waiter") && l.contains("idle/condition")), "{table}");
}

#[test]
fn hostile_names_are_text_in_the_chart() {
    let _g = serial();
    let dir = tempfile::tempdir().unwrap();
    let run_path = dir.path().join("hostile.json");
    let rec = record(&run_path, &["--duration", "2"], &[&script("hostile_names.py")]);
    assert!(rec.status.success(), "{}", stderr(&rec));
    for ext in ["svg", "png"] {
        let out = dir.path().join(format!("t.{ext}"));
        let o = threadradar(dir.path(), &["timeline", run_path.to_str().unwrap(), "-o", out.to_str().unwrap()]);
        assert!(o.status.success(), "{}", stderr(&o));
        if ext == "png" {
            assert_eq!(&std::fs::read(&out).unwrap()[..8], b"\x89PNG\r\n\x1a\n");
            continue;
        }
        let text = std::fs::read_to_string(&out).unwrap();
        let doc = roxmltree::Document::parse(&text).expect("the chart is well-formed XML");
        assert!(!doc.descendants().any(|n| n.has_tag_name("img") || n.has_tag_name("script")));
        let names: Vec<_> = doc.descendants().filter(|n| n.attribute("class") == Some("lane-name")).filter_map(|n| n.text()).collect();
        assert!(names.iter().any(|n| n.starts_with("<img src=x onerror=alert(1)>")), "{names:?}");
        assert!(doc.descendants().filter(|n| n.has_tag_name("title")).any(|n| n.text().is_some_and(|t| t.contains("\"><script>"))));
    }
}

#[test]
fn layouts_are_answered_line_by_line_and_bad_input_is_one_sentence() {
    let dir = tempfile::tempdir().unwrap();
    let fixture = repo().join("analysis/tests/fixtures/timeline/bug2_producer_consumer.json");
    let mut child = Command::new(bin())
        .args(["timeline", fixture.to_str().unwrap(), "--layouts"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    {
        let stdin = child.stdin.as_mut().unwrap();
        writeln!(stdin, r#"{{"width_px": 400, "theta": 1}}"#).unwrap();
        writeln!(stdin, r#"{{"from_s": 9, "to_s": 10}}"#).unwrap();
        writeln!(stdin, "not json").unwrap();
    }
    let out = child.wait_with_output().unwrap();
    let lines: Vec<serde_json::Value> = String::from_utf8_lossy(&out.stdout).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 3);
    assert_eq!(lines[0]["lanes"].as_array().unwrap().len(), 12);
    assert!(lines[0]["obtained"].as_str().unwrap().starts_with("sampled"));
    assert!(lines[1]["error"].as_str().unwrap().contains("outside the run"));
    assert!(lines[2]["error"].as_str().unwrap().contains("not a layout request"));

    let f = fixture.to_str().unwrap();
    for (args, expected) in [
        (vec!["--from", "9", "--to", "10", "--json"], "threadradar: the time range 9.000 s – 10.000 s is outside the run, which lasts 0.802 s: pass --from/--to between 0 and 0.802\n"),
        (vec!["--theta", "-1", "-o", "x.svg"], "threadradar: θ = -1 is not allowed: pass 0 for a linear axis or a positive value (per millisecond) for a logarithmic one\n"),
        // --json lays out no viewport, but a bad θ or width is still said, not ignored.
        (vec!["--json", "--theta", "-1"], "threadradar: θ = -1 is not allowed: pass 0 for a linear axis or a positive value (per millisecond) for a logarithmic one\n"),
        (vec!["--json", "--width", "0"], "threadradar: a width of 0 px cannot be drawn: pass 1 to 100000 px\n"),
        // A negative bound is a value (the range error), not an unknown option (clap's usage block).
        (vec!["--from", "-1"], "threadradar: the time range -1.000 s – 0.802 s is outside the run, which lasts 0.802 s: pass --from/--to between 0 and 0.802\n"),
        (vec!["--threads", "nobody", "--json"], ""),
        (vec!["-o", "x.gif"], "threadradar: x.gif must end in .svg or .png\n"),
    ] {
        let mut a = vec!["timeline", f];
        a.extend(args.iter());
        let o = threadradar(dir.path(), &a);
        assert_eq!(o.status.code(), Some(2), "{a:?}");
        let e = stderr(&o);
        assert_eq!(e.lines().count(), 1, "one sentence: {e}");
        if expected.is_empty() {
            assert!(e.starts_with("threadradar: the thread pattern \"nobody\" matches no thread of this run (threads: #0 MainThread"), "{e}");
        } else {
            assert_eq!(e, expected);
        }
    }
}

#[test]
fn the_json_restricted_to_a_range_has_only_overlapping_bars() {
    let dir = tempfile::tempdir().unwrap();
    let fixture = repo().join("analysis/tests/fixtures/timeline/bug2_producer_consumer.json");
    let all = json(&threadradar(dir.path(), &["timeline", fixture.to_str().unwrap(), "--json"]));
    let part = json(&threadradar(dir.path(), &["timeline", fixture.to_str().unwrap(), "--json", "--from", "0.4", "--to", "0.5"]));
    let count = |v: &serde_json::Value| v["threads"].as_array().unwrap().iter().map(|t| t["bars"].as_array().unwrap().len()).sum::<usize>();
    assert!(count(&part) > 0 && count(&part) < count(&all));
    for t in part["threads"].as_array().unwrap() {
        assert!(t["id"].is_u64() && t["name"].is_string() && t["type"].is_string());
        for b in t["bars"].as_array().unwrap() {
            assert!(b["end_s"].as_f64().unwrap() > 0.4 && b["start_s"].as_f64().unwrap() < 0.5, "{b}");
            for k in ["start_s", "end_s", "depth", "function", "file", "line", "state"] {
                assert!(!b[k].is_null(), "{k} missing in {b}");
            }
        }
    }
}
