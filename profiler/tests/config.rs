//! The one schema of `[tool.threadradar]` / `threadradar.toml` (`threadradar_profiler::config`),
//! from real files: what it reads, both spellings of every key, and one sentence with the file and
//! the line for each way a key or value can be wrong.

use std::path::PathBuf;
use threadradar_profiler::config::*;

#[test]
fn editor_overrides_win_over_the_file_key_by_key() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::write(
        root.join("threadradar.toml"),
        "test-command = [\"{python}\", \"-m\", \"pytest\", \"-x\", \"{tests}\"]\ninterval-ms = 2\nruns-dir = \"profiles\"\nkeep-runs = 5\n",
    )
    .unwrap();
    let file = ProjectConfig::load(root).unwrap();
    // Nothing set: the file decides.
    assert_eq!(file.clone().overridden(&Overrides::default(), root), file);
    assert_eq!(folder_runs_dir(root, &Overrides::default()), root.join("profiles"));
    // Each override replaces its key only.
    let o = Overrides { interval_ms: Some(7.5), ..Default::default() };
    let c = file.clone().overridden(&o, root);
    assert_eq!((c.interval_ms, c.keep_runs, c.runs_dir.clone()), (Some(7.5), Some(5), Some(root.join("profiles"))));
    assert_eq!(c.test_command.as_deref().map(|t| t.len()), Some(5));
    let o = Overrides { test_command: Some(None), runs_dir: Some("elsewhere/runs".into()), keep_runs: Some(2), ..Default::default() };
    let c = file.clone().overridden(&o, root);
    assert_eq!(c.test_command, None, "pytest replaces the file's template");
    assert_eq!(c.runs_dir(root), root.join("elsewhere/runs"));
    assert_eq!(c.keep_runs, Some(2));
    assert_eq!(c.interval_ms, Some(2.0));
    assert_eq!(folder_runs_dir(root, &o), root.join("elsewhere/runs"));
    // Absolute and home-relative directories.
    let o = Overrides { runs_dir: Some("/tmp/tr-runs".into()), ..Default::default() };
    assert_eq!(folder_runs_dir(root, &o), PathBuf::from("/tmp/tr-runs"));
    if let Some(home) = std::env::var_os("HOME").filter(|h| !h.is_empty()) {
        let o = Overrides { runs_dir: Some("~/tr".into()), ..Default::default() };
        assert_eq!(o.runs_dir_in(root), Some(PathBuf::from(home).join("tr")));
    }
    assert_eq!(Overrides { runs_dir: Some("  ".into()), ..Default::default() }.runs_dir_in(root), None);
    // No file: the default directory, or the override.
    let empty = tempfile::tempdir().unwrap();
    assert_eq!(folder_runs_dir(empty.path(), &Overrides::default()), empty.path().join(".threadradar/runs"));
}

#[test]
fn test_command_arguments_round_trip() {
    assert_eq!(parse_test_command("pytest"), Ok(None));
    assert_eq!(parse_test_command("unittest"), Ok(Some(vec!["unittest".to_string()])));
    assert_eq!(parse_test_command("[\"pytest\"]"), Ok(None));
    let t = vec!["{python}".to_string(), "-m".into(), "pytest".into(), "-k".into(), "a b".into(), "{tests}".into()];
    assert_eq!(parse_test_command(&test_command_arg(Some(&t))), Ok(Some(t.clone())));
    assert_eq!(test_command_arg(None), "pytest");
    assert_eq!(test_command_arg(Some(&["unittest".to_string()])), "unittest");
    for bad in ["nose", "[]", "[\"\"]", "[1]", "[\"{python}\""] {
        let e = parse_test_command(bad).unwrap_err();
        assert!(e.starts_with("the test command ") && e.contains("JSON list of words like"), "{bad}: {e}");
    }
}

#[test]
fn config_reads_validates_and_names_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    assert_eq!(ProjectConfig::load(root).unwrap(), ProjectConfig::default());
    std::fs::write(
        root.join("pyproject.toml"),
        "[project]\nname = \"x\"\n\n[tool.threadradar]\npython = \".venv/bin/python\"\ninterval-ms = 2\nkeep-runs = 5\nstates = \"all\"\n",
    )
    .unwrap();
    let c = ProjectConfig::load(root).unwrap();
    assert_eq!(c.python, Some(root.join(".venv/bin/python")));
    assert_eq!(c.interval_ms, Some(2.0));
    assert_eq!(c.keep_runs, Some(5));
    assert_eq!(c.states.as_deref(), Some("all"));
    std::fs::write(root.join("pyproject.toml"), "[project]\nname = \"x\"\n\n[tool.threadradar]\nintervall = 2\n").unwrap();
    let e = ProjectConfig::load(root).unwrap_err();
    assert!(e.starts_with("unknown key `intervall` in [tool.threadradar] ") && e.contains("pyproject.toml line 5"), "{e}");
    std::fs::write(root.join("pyproject.toml"), "[tool.threadradar]\n\nkeep-runs = \"many\"\n").unwrap();
    let e = ProjectConfig::load(root).unwrap_err();
    assert!(e.contains("pyproject.toml line 3: "), "{e}");
    // A wrong type names the key and what it takes.
    assert!(e.starts_with("[tool.threadradar] ") && e.contains("line 3: `keep-runs` must be a whole number of runs, at least 1 ("), "{e}");
    std::fs::write(root.join("pyproject.toml"), "[tool.threadradar]\ninclude = [\n  \"a\",\n  3,\n]\n").unwrap();
    let e = ProjectConfig::load(root).unwrap_err();
    assert!(e.contains("pyproject.toml line 4: `include` must be a list of regular expressions, as strings ("), "{e}");
    // Out of range: the key, the file and the value's line.
    let py = root.join("pyproject.toml");
    for (toml, want) in [
        ("[project]\nname = \"x\"\n\n[tool.threadradar]\nstates = \"all\"\ninterval-ms = 0\n", "interval-ms in [tool.threadradar] {} line 6 must be between 0.05 and 10000 milliseconds (it is 0)"),
        ("[tool.threadradar]\n\nkeep-runs = 0\n", "keep-runs in [tool.threadradar] {} line 3 must be at least 1 (leave it out to keep every run)"),
        ("[tool.threadradar]\ntest-command = \"nose\"\n", "test-command in [tool.threadradar] {} line 2 is \"nose\": write \"pytest\", \"unittest\" or a template"),
        ("[tool.threadradar]\ninterval-ms = 2\ntest-command = [\n]\n", "test-command in [tool.threadradar] {} line 3 is empty: write e.g."),
        // An empty interpreter is its own sentence, not "the interpreter  does not exist".
        ("[tool.threadradar]\npython = \"\"\n", "python in [tool.threadradar] {} line 2 is empty: write the interpreter's path (\".venv/bin/python\") or name"),
    ] {
        std::fs::write(&py, toml).unwrap();
        let e = ProjectConfig::load(root).unwrap_err();
        assert!(e.starts_with(&want.replace("{}", &py.display().to_string())), "{toml:?}: {e}");
    }
    std::fs::write(root.join("threadradar.toml"), "python = 3\n").unwrap();
    let e = ProjectConfig::load(root).unwrap_err();
    assert!(e.contains("threadradar.toml line 1: `python` must be the interpreter's path or name, as a string ("), "{e}");
    std::fs::write(root.join("threadradar.toml"), "\nkeep-runs = 0\n").unwrap();
    let e = ProjectConfig::load(root).unwrap_err();
    assert_eq!(e, format!("keep-runs in {} line 2 must be at least 1 (leave it out to keep every run)", root.join("threadradar.toml").display()));
}


#[test]
fn every_key_is_read_in_kebab_case_and_in_snake_case() {
    let kebab = "[tool.threadradar]\npython = \"python3\"\ntest-command = \"unittest\"\ninterval-ms = 2\nstates = \"cpu\"\ninclude = [\"a\"]\nexclude = [\"b\"]\nruns-dir = \"r\"\nkeep-runs = 4\nsynchronized = [\"@m.sync\"]\ncritical-sections = [{ file = \"app/x.py\", line = 12, end-line = 20, lock = \"g\" }]\n";
    let snake = kebab.replace("test-command", "test_command").replace("interval-ms", "interval_ms").replace("runs-dir", "runs_dir").replace("keep-runs", "keep_runs").replace("critical-sections", "critical_sections").replace("end-line", "end_line");
    assert_ne!(kebab, snake);
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let py = root.join("pyproject.toml");
    std::fs::write(&py, kebab).unwrap();
    let a = ProjectConfig::load(root).unwrap();
    std::fs::write(&py, &snake).unwrap();
    let b = ProjectConfig::load(root).unwrap();
    assert_eq!(a, b);
    assert_eq!(a.test_command, Some(vec!["unittest".to_string()]));
    assert_eq!((a.interval_ms, a.states.as_deref(), a.keep_runs), (Some(2.0), Some("cpu"), Some(4)));
    assert_eq!(a.runs_dir, Some(root.join("r")));
    assert_eq!(a.synchronized, ["m.sync"]);
    assert_eq!(a.critical_sections, [ConfiguredSection { file: root.join("app/x.py").display().to_string(), line: 12, end_line: Some(20), lock: Some("g".into()) }]);
    // The array-of-tables form, and threadradar.toml (which wins) at the top level.
    std::fs::write(root.join("threadradar.toml"), "[[critical-sections]]\nfile = \"/abs.py\"\nline = 3\n").unwrap();
    let c = ProjectConfig::load(root).unwrap();
    assert_eq!(c.critical_sections[0].file, "/abs.py");
    assert_eq!(c.file, Some(root.join("threadradar.toml")));
}

#[test]
fn a_bad_critical_section_or_state_is_one_sentence_with_its_line() {
    let dir = tempfile::tempdir().unwrap();
    let py = dir.path().join("pyproject.toml");
    let at = py.display().to_string();
    for (toml, want) in [
        ("[tool.threadradar]\nsynchronized = \"x\"\n", format!("[tool.threadradar] {at} line 2: `synchronized` must be a list of decorator names")),
        ("[tool.threadradar]\ncritical_sections = [\n  {file = \"x.py\"},\n]\n", format!("a critical section in [tool.threadradar] {at} line 3 has no `line`")),
        ("[tool.threadradar]\ncritical-sections = [{file = \"x.py\", line = 5, end-line = 2}]\n", format!("a critical section in [tool.threadradar] {at} line 2 has line 5 and end-line 2")),
        ("[tool.threadradar]\n\ncritical-sections = [{file = \"x.py\", line = 5, ends = 2}]\n", format!("unknown key `ends` in a critical section in [tool.threadradar] {at} line 3: its keys are file, line, end-line, lock")),
        ("[tool.threadradar]\nstates = \"busy\"\n", format!("states in [tool.threadradar] {at} line 2 is \"busy\": write one of auto, computing,")),
        ("[tool.threadradar]\nkeep_runs = \"many\"\n", format!("[tool.threadradar] {at} line 2: `keep-runs` must be a whole number of runs")),
        ("[tool.threadradar\n", format!("{at} line 1: ")),
    ] {
        std::fs::write(&py, toml).unwrap();
        let e = ProjectConfig::load(dir.path()).unwrap_err();
        assert!(e.starts_with(&want), "{toml:?}:\n got  {e}\n want {want}");
        assert!(!e.contains('\n'), "one sentence: {e}");
    }
}

#[test]
fn the_project_of_a_directory_is_the_nearest_one_above_it() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let deep = root.join("pkg/sub");
    std::fs::create_dir_all(&deep).unwrap();
    assert_eq!(ProjectConfig::find(&deep).unwrap(), ProjectConfig::default());
    std::fs::write(root.join("pyproject.toml"), "[tool.threadradar]\nsynchronized = [\"m.s\"]\n").unwrap();
    let c = ProjectConfig::find(&deep).unwrap();
    assert_eq!((c.synchronized.as_slice(), c.file.as_deref()), (&["m.s".to_string()][..], Some(root.join("pyproject.toml").as_path())));
    // A named file: its keys, relative paths from its directory.
    let named = root.join("pkg/other.toml");
    std::fs::write(&named, "critical_sections = [{file = \"a.py\", line = 1}]\n").unwrap();
    assert_eq!(ProjectConfig::load_file(&named).unwrap().critical_sections[0].file, root.join("pkg/a.py").display().to_string());
    let e = ProjectConfig::load_file(&root.join("nope.toml")).unwrap_err();
    assert!(e.contains("does not exist"), "{e}");
}
