//! Tests in a Python module as pytest collects them (found with tree-sitter in the current text,
//! by the project's `python_classes` / `python_functions`), the pytest command that runs one
//! under the recorder, and its outcome from pytest's JUnit XML report.

use crate::project::PytestConventions;
use std::path::Path;
use threadradar_profiler::run::TestOutcome;

/// What a test item is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TestKind {
    /// A module-level test function.
    Function,
    /// A `Test*` class or a `unittest.TestCase` subclass.
    Class,
    /// A test method of such a class.
    Method,
}

/// A test found in a module.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TestItem {
    pub kind: TestKind,
    /// The node id after `file::`: `test_x`, `TestPool`, `TestPool::test_map`.
    pub id: String,
    /// 0-based line of the `def` / `class` keyword.
    pub line: u32,
    pub is_async: bool,
    /// A `unittest.TestCase` class or one of its methods.
    pub unittest: bool,
}

/// The tests of a module's text, in source order. Parametrized tests are one item (pytest runs
/// every parameter for the function's node id); fixtures are not tests.
pub fn discover(text: &str, conv: &PytestConventions) -> Vec<TestItem> {
    let mut parser = tree_sitter::Parser::new();
    if parser.set_language(&tree_sitter_python::LANGUAGE.into()).is_err() {
        return Vec::new();
    }
    let Some(tree) = parser.parse(text, None) else { return Vec::new() };
    let src = text.as_bytes();
    let mut out = Vec::new();
    // Classes of this module that are `unittest.TestCase`s, so that a subclass of one is too.
    let mut testcases: Vec<String> = Vec::new();
    let root = tree.root_node();
    let mut cursor = root.walk();
    for child in root.named_children(&mut cursor) {
        let Some(def) = definition(child) else { continue };
        let name = def.child_by_field_name("name").and_then(|n| n.utf8_text(src).ok()).unwrap_or("");
        match def.kind() {
            "function_definition" if conv.is_test_function(name) => {
                out.push(TestItem {
                    kind: TestKind::Function,
                    id: name.into(),
                    line: def.start_position().row as u32,
                    is_async: is_async(def),
                    unittest: false,
                });
            }
            "class_definition" => {
                let bases = def.child_by_field_name("superclasses").and_then(|b| b.utf8_text(src).ok()).unwrap_or("");
                let unittest = bases.trim_matches(['(', ')']).split(',').map(str::trim).any(|b| b.ends_with("TestCase") || testcases.iter().any(|t| t == b));
                if unittest {
                    testcases.push(name.to_string());
                }
                let Some(body) = def.child_by_field_name("body") else { continue };
                let mut methods = Vec::new();
                let mut has_init = false;
                let mut c2 = body.walk();
                for m in body.named_children(&mut c2) {
                    let Some(f) = definition(m).filter(|f| f.kind() == "function_definition") else { continue };
                    let mname = f.child_by_field_name("name").and_then(|n| n.utf8_text(src).ok()).unwrap_or("");
                    has_init |= mname == "__init__";
                    let is_test = if unittest { mname.starts_with("test") } else { conv.is_test_function(mname) };
                    if is_test {
                        methods.push(TestItem {
                            kind: TestKind::Method,
                            id: format!("{name}::{mname}"),
                            line: f.start_position().row as u32,
                            is_async: is_async(f),
                            unittest,
                        });
                    }
                }
                // pytest skips a `Test*` class with an `__init__` (it warns that it cannot collect it).
                if unittest || (conv.is_test_class(name) && !has_init) {
                    out.push(TestItem { kind: TestKind::Class, id: name.into(), line: def.start_position().row as u32, is_async: false, unittest });
                    out.extend(methods);
                }
            }
            _ => {}
        }
    }
    out
}

/// The definition of a statement, through any decorators.
fn definition(node: tree_sitter::Node) -> Option<tree_sitter::Node> {
    match node.kind() {
        "function_definition" | "class_definition" => Some(node),
        "decorated_definition" => node.child_by_field_name("definition"),
        _ => None,
    }
}

fn is_async(f: tree_sitter::Node) -> bool {
    f.child(0).is_some_and(|c| c.kind() == "async")
}

/// The command that runs `args` with `python`, from the project's template (`{python}` and
/// `{tests}` are replaced; without `{tests}` the arguments go at the end) or
/// `PYTHON -m pytest ARGS`, with pytest's cache off and the JUnit report written to `junit`.
pub fn pytest_command(python: &Path, template: Option<&[String]>, args: &[String], junit: &Path) -> Vec<String> {
    let py = python.display().to_string();
    let default = ["{python}".to_string(), "-m".into(), "pytest".into(), "{tests}".into()];
    let template = template.unwrap_or(&default);
    let mut cmd = Vec::new();
    let mut placed = false;
    for t in template {
        if t == "{tests}" {
            cmd.extend(args.iter().cloned());
            placed = true;
        } else {
            cmd.push(t.replace("{python}", &py));
        }
    }
    if !placed {
        cmd.extend(args.iter().cloned());
    }
    cmd.extend(["-p".to_string(), "no:cacheprovider".into(), format!("--junitxml={}", junit.display())]);
    cmd
}

/// Counts and the first failure from a JUnit XML report as pytest writes it. A `<testcase>`
/// without a name is not a test: pytest writes one (`<testcase time="0.000" />`) for the test it
/// was running when it was interrupted (Ctrl-C), which neither passed nor failed.
pub fn junit_outcome(xml: &str) -> Result<TestOutcome, String> {
    let doc = roxmltree::Document::parse(xml).map_err(|e| format!("pytest's JUnit report is not valid XML: {e}"))?;
    let mut o = TestOutcome::default();
    for case in doc.descendants().filter(|n| n.has_tag_name("testcase") && n.attribute("name").is_some_and(|a| !a.is_empty())) {
        let child = |tag: &str| case.children().find(|c| c.has_tag_name(tag));
        let (bad, counter) = match (child("failure"), child("error")) {
            (Some(f), _) => (Some(f), 1),
            (None, Some(e)) => (Some(e), 2),
            (None, None) if child("skipped").is_some() => (None, 3),
            _ => (None, 0),
        };
        match counter {
            1 => o.failed += 1,
            2 => o.errors += 1,
            3 => o.skipped += 1,
            _ => o.passed += 1,
        }
        if let (Some(b), None) = (bad, &o.first_failure) {
            let name = case.attribute("name").unwrap_or("?");
            let msg = b.attribute("message").unwrap_or_else(|| b.text().unwrap_or("")).lines().next().unwrap_or("").trim();
            let msg: String = msg.chars().take(300).collect();
            o.first_failure = Some(if msg.is_empty() { name.to_string() } else { format!("{name}: {msg}") });
        }
    }
    Ok(o)
}

/// `2 passed, 1 failed` (the counts that are not 0), or `no tests ran`.
pub fn outcome_words(o: &TestOutcome) -> String {
    let parts: Vec<String> = [(o.passed, "passed"), (o.failed, "failed"), (o.errors, "errors"), (o.skipped, "skipped")]
        .iter()
        .filter(|(n, _)| *n > 0)
        .map(|(n, w)| if *w == "errors" && *n == 1 { "1 error".to_string() } else { format!("{n} {w}") })
        .collect();
    if parts.is_empty() {
        "no tests ran".into()
    } else {
        parts.join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_functions_classes_testcases_async_and_parametrized() {
        let src = r#"import pytest, unittest

@pytest.fixture
def pool():
    return 1

@pytest.mark.parametrize("n", [1, 2])
def test_param(n, pool):
    pass

async def test_async():
    pass

def helper():
    pass

class TestPool:
    def test_map(self):
        pass
    def helper(self):
        pass

class TestWithInit:
    def __init__(self):
        pass
    def test_never(self):
        pass

class PoolCase(unittest.TestCase):
    def test_case(self):
        pass
    async def test_case_async(self):
        pass

class MorePoolCase(PoolCase):
    def test_more(self):
        pass

class Helper:
    def test_not_collected(self):
        pass
"#;
        let items = discover(src, &PytestConventions::default());
        let ids: Vec<(&str, u32)> = items.iter().map(|i| (i.id.as_str(), i.line)).collect();
        assert_eq!(
            ids,
            vec![
                ("test_param", 7),
                ("test_async", 10),
                ("TestPool", 16),
                ("TestPool::test_map", 17),
                ("PoolCase", 28),
                ("PoolCase::test_case", 29),
                ("PoolCase::test_case_async", 31),
                ("MorePoolCase", 34),
                ("MorePoolCase::test_more", 35)
            ]
        );
        assert!(items[1].is_async && !items[0].is_async);
        assert!(items[4].unittest && items[5].unittest && !items[2].unittest);
        assert!(items[7].unittest && items[8].unittest, "a subclass of the module's TestCase is one too");
    }

    #[test]
    fn junit_counts_and_first_failure() {
        let xml = r#"<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest" errors="0" failures="1" skipped="1" tests="4">
<testcase classname="t" name="test_ok" time="0.1"/>
<testcase classname="t" name="test_bad" time="0.1"><failure message="assert 3 == 4&#10;more">long</failure></testcase>
<testcase classname="t" name="test_skip" time="0"><skipped message="no"/></testcase>
<testcase classname="t" name="test_err" time="0"><error message="fixture broke"/></testcase>
</testsuite></testsuites>"#;
        let o = junit_outcome(xml).unwrap();
        assert_eq!((o.passed, o.failed, o.skipped, o.errors), (1, 1, 1, 1));
        assert_eq!(o.first_failure.as_deref(), Some("test_bad: assert 3 == 4"));
        assert_eq!(outcome_words(&o), "1 passed, 1 failed, 1 error, 1 skipped");
        assert!(junit_outcome("<testsuites>").unwrap_err().contains("not valid XML"));
    }

    #[test]
    fn junit_of_an_interrupted_run_counts_only_named_tests() {
        // What pytest writes after a Ctrl-C during its second test: the interrupted test is a
        // nameless, empty testcase, which is no test that passed.
        let xml = r#"<?xml version="1.0" encoding="utf-8"?><testsuites name="pytest tests"><testsuite name="pytest" errors="0" failures="0" skipped="0" tests="1" time="2.688"><testcase classname="test_a" name="test_ok" time="0.005" /><testcase time="0.000" /></testsuite></testsuites>"#;
        let o = junit_outcome(xml).unwrap();
        assert_eq!((o.passed, o.failed, o.skipped, o.errors), (1, 0, 0, 0));
        // Interrupted in its only test: nothing ran to the end.
        let only = r#"<testsuites><testsuite name="pytest" tests="0"><testcase time="0.000" /><testcase name="" time="0.000" /></testsuite></testsuites>"#;
        let o = junit_outcome(only).unwrap();
        assert_eq!((o.passed, o.failed, o.skipped, o.errors), (0, 0, 0, 0));
        assert_eq!(outcome_words(&o), "no tests ran");
    }

    #[test]
    fn commands_from_template_or_default() {
        let py = Path::new("/v/bin/python");
        let j = Path::new("/tmp/j.xml");
        assert_eq!(
            pytest_command(py, None, &["t.py::test_a".into()], j),
            vec!["/v/bin/python", "-m", "pytest", "t.py::test_a", "-p", "no:cacheprovider", "--junitxml=/tmp/j.xml"]
        );
        let tpl: Vec<String> = vec!["{python}".into(), "-X".into(), "dev".into(), "-m".into(), "pytest".into(), "-x".into()];
        assert_eq!(pytest_command(py, Some(&tpl), &["a".into()], j)[..7], ["/v/bin/python", "-X", "dev", "-m", "pytest", "-x", "a"]);
    }
}
