//! `threadradar doctor [--pid N] [--json]`: one screen that says, before a recording fails, what
//! this machine allows (ptrace, perf events), what process N is (its interpreter and reader, a
//! chroot or container), where runs go and whether the project's configuration parses — each
//! line with the next step when something is missing. The probes are the profiler's
//! (`threadradar_profiler::doctor`); the project's checks are here.

use clap::Args;
use std::io::Write;
use std::path::Path;
use std::process::ExitCode;
use threadradar_lsp::project;
use threadradar_profiler::config::ProjectConfig;
use threadradar_profiler::doctor::{self, Check, Status};

#[derive(Args, Debug)]
pub struct DoctorArgs {
    /// Also check this process: may it be read, its interpreter and reader, its root.
    #[arg(long)]
    pub pid: Option<u32>,

    /// The checks as JSON (for editors): `{"version", "pid", "ok", "checks": [{"id", "status",
    /// "summary", "next"?}]}`.
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: DoctorArgs) -> anyhow::Result<ExitCode> {
    let cwd = std::env::current_dir()?;
    let mut checks = vec![doctor::ptrace_scope()];
    if let Some(pid) = args.pid {
        let access = doctor::pid_access(pid);
        let readable = access.status == Status::Ok;
        checks.push(access);
        // The interpreter needs the memory; a process that cannot be read has told why already.
        if readable {
            checks.push(doctor::interpreter(pid));
        }
        if Path::new(&format!("/proc/{pid}")).exists() {
            checks.push(doctor::root(pid));
        }
    }
    checks.push(doctor::sched());
    let (config_check, config) = config_check(&cwd);
    checks.push(config_check);
    checks.push(python_check(&cwd, config.as_ref()));
    checks.push(runs_check(&cwd, config.as_ref()));
    let ok = checks.iter().all(|c| c.status != Status::Error);
    let mut out = std::io::stdout().lock();
    if args.json {
        let doc = serde_json::json!({ "version": env!("CARGO_PKG_VERSION"), "pid": args.pid, "ok": ok, "checks": checks });
        serde_json::to_writer_pretty(&mut out, &doc)?;
        writeln!(out)?;
    } else {
        print_checks(&checks, &mut out)?;
    }
    Ok(if ok { ExitCode::SUCCESS } else { ExitCode::from(1) })
}

fn print_checks(checks: &[Check], out: &mut impl Write) -> std::io::Result<()> {
    writeln!(out, "threadradar {} doctor", env!("CARGO_PKG_VERSION"))?;
    for c in checks {
        let mark = match c.status {
            Status::Ok => "ok   ",
            Status::Warn => "warn ",
            Status::Error => "ERROR",
        };
        writeln!(out, "{mark} {:<12} {}", c.id, c.summary)?;
        if let Some(next) = &c.next {
            writeln!(out, "{:<18} next: {next}", "")?;
        }
    }
    let errors = checks.iter().filter(|c| c.status == Status::Error).count();
    match errors {
        0 => writeln!(out, "Nothing stops a recording here."),
        n => writeln!(out, "{n} problem(s) will stop a recording: see `next` above."),
    }
}

/// The project's configuration: the nearest `threadradar.toml` or `pyproject.toml` at or above
/// the current directory (as a run made here finds it), and whether it parses.
fn config_check(cwd: &Path) -> (Check, Option<ProjectConfig>) {
    let Some(root) = cwd.ancestors().find(|d| d.join("threadradar.toml").is_file() || d.join("pyproject.toml").is_file()) else {
        let c = Check::ok("config", format!("no threadradar.toml or pyproject.toml at or above {}: the defaults apply", cwd.display()));
        return (c, Some(ProjectConfig::default()));
    };
    match ProjectConfig::load(root) {
        Ok(config) => {
            let c = match &config.file {
                Some(f) => Check::ok("config", format!("{} parsed ({} of the project {})", f.display(), config.file_name(), root.display())),
                None => Check::ok("config", format!("{} has no [tool.threadradar]: the defaults apply", root.join("pyproject.toml").display())),
            };
            (c, Some(config))
        }
        Err(why) => (Check::error("config", why, "fix that line (docs/testing.md lists the keys); every command and the editors read the same file"), None),
    }
}

/// The interpreter `threadradar test` (and the editors' test runs) would use here.
fn python_check(cwd: &Path, config: Option<&ProjectConfig>) -> Check {
    let default = ProjectConfig::default();
    match project::resolve_python(cwd, config.unwrap_or(&default), None, None) {
        Ok(p) => Check::ok("python", format!("the project's interpreter is {} ({})", p.path.display(), p.source)),
        Err(why) => Check::warn("python", why, "install Python 3, or create the project's .venv (`python3 -m venv .venv`)"),
    }
}

/// Where `record` writes runs from here, and whether it can.
fn runs_check(cwd: &Path, config: Option<&ProjectConfig>) -> Check {
    let dir = config.map(|c| c.runs_dir(cwd)).unwrap_or_else(|| threadradar_profiler::runfile::runs_dir(cwd));
    let runs = threadradar_profiler::runfile::list_runs(&dir).map(|r| r.len()).unwrap_or(0);
    // The nearest directory that exists is the one that must be writable (record creates the rest).
    let existing = dir.ancestors().find(|d| d.exists()).unwrap_or(cwd);
    let writable = std::ffi::CString::new(existing.as_os_str().as_encoded_bytes())
        // SAFETY: access(2) only reads the NUL-terminated path, which lives until it returns.
        .map(|p| unsafe { libc::access(p.as_ptr(), libc::W_OK) } == 0)
        .unwrap_or(false);
    if writable {
        Check::ok("runs", format!("runs are written to {} ({runs} there now)", dir.display()))
    } else {
        Check::error(
            "runs",
            format!("runs would be written to {}, but {} is not writable by this user", dir.display(), existing.display()),
            "run threadradar from a directory you can write to, pass `-o FILE`, or set [tool.threadradar] runs-dir",
        )
    }
}
