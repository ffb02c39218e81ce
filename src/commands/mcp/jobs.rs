//! The MCP tools that run something: `record` (a command the user configured, for at most a
//! given time) and `profile_test` (a test pytest's rules find in a test file, by the rules and the
//! command of the editor's `threadradar.profileTest`, `threadradar_lsp::test_job`).
//!
//! Both start this binary's own `record` / `test` as a child process, as the language server does,
//! report its progress lines as MCP progress notifications (`notifications/progress` with the
//! request's progress token), and stop it on the client's cancellation the way an editor's stop
//! does (`recording::interrupt`: the recorder's Ctrl-C, so the run sampled so far is written).
//! An agent never chooses the command: `record` runs only a command given to `threadradar mcp`
//! with `--record-command`, `profile_test` only a test found in the file as it is now.

use rmcp::model::{ProgressNotificationParam, ProgressToken};
use rmcp::service::RequestContext;
use rmcp::RoleServer;
use std::path::{Path, PathBuf};
use threadradar_lsp::recording;
use threadradar_lsp::test_job::{is_pytest_progress, progress_message};
use threadradar_profiler::run::{EndReason, Run};
use tokio::sync::mpsc;

/// How a job ended.
pub struct Finished {
    pub output: PathBuf,
    /// The run, when one was written and could be read.
    pub run: Option<Run>,
    /// The recorder's own lines (`threadradar: …`), progress excepted.
    pub recorder: Vec<String>,
    pub cancelled: bool,
}

/// Runs `threadradar <args>` in `cwd` until it ends, reporting its progress and stopping it when
/// the request is cancelled.
pub async fn follow(ctx: &RequestContext<RoleServer>, args: &[String], cwd: &Path, output: PathBuf, title: &str) -> Result<Finished, String> {
    let exe = std::env::current_exe().map_err(|e| format!("cannot find the threadradar binary: {e}"))?;
    let mut child = tokio::process::Command::new(&exe)
        .args(args)
        .current_dir(cwd)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot start {}: {e}", exe.display()))?;
    let pid = child.id().unwrap_or(0);
    let (tx, mut lines) = mpsc::channel(256);
    if let Some(out) = child.stdout.take() {
        tokio::spawn(forward(out, tx.clone()));
    }
    if let Some(err) = child.stderr.take() {
        tokio::spawn(forward(err, tx));
    }
    let token: Option<ProgressToken> = ctx.meta.get_progress_token();
    let mut progress_sent = 0usize;
    let mut report = |message: String| {
        let peer = ctx.peer.clone();
        let token = token.clone();
        progress_sent += token.is_some() as usize;
        let n = progress_sent as f64;
        async move {
            if let Some(progress_token) = token {
                let _ = peer.notify_progress(ProgressNotificationParam { progress_token, progress: n, total: None, message: Some(message) }).await;
            }
        }
    };
    report(format!("{title}: starting")).await;
    let (mut recorder, mut sampled, mut pytest_line) = (Vec::new(), String::from("starting"), String::new());
    let (mut open, mut status, mut cancelled) = (true, None, false);
    while open || status.is_none() {
        tokio::select! {
            line = lines.recv(), if open => match line {
                Some(l) => {
                    if let Some(own) = recording::recorder_line(&l) {
                        match own.strip_prefix("progress ") {
                            Some(p) => {
                                sampled = p.to_string();
                                report(format!("{title}: {}", progress_message(&sampled, &pytest_line))).await;
                            }
                            None => recorder.push(own.to_string()),
                        }
                    } else if is_pytest_progress(&l) {
                        pytest_line = l.trim().to_string();
                        report(format!("{title}: {}", progress_message(&sampled, &pytest_line))).await;
                    }
                }
                None => open = false,
            },
            s = child.wait(), if status.is_none() => status = Some(s),
            _ = ctx.ct.cancelled(), if !cancelled => {
                cancelled = true;
                recording::interrupt(pid);
            }
        }
    }
    let read = output.clone();
    let run = tokio::task::spawn_blocking(move || threadradar_profiler::runfile::read(&read).ok()).await.ok().flatten();
    Ok(Finished { output, run, recorder, cancelled })
}

async fn forward<R: tokio::io::AsyncRead + Unpin>(r: R, tx: mpsc::Sender<String>) {
    use tokio::io::AsyncBufReadExt;
    let mut lines = tokio::io::BufReader::new(r).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        if tx.send(line).await.is_err() {
            break;
        }
    }
}

/// The answer: the run's path, how recording ended, the program's exit and (for a test) the
/// outcome; or why nothing was recorded.
pub fn describe(f: &Finished, what: &str) -> Result<String, String> {
    let Some(run) = &f.run else {
        let why = f.recorder.iter().rev().find(|l| !l.starts_with("testing ")).cloned().unwrap_or_else(|| "the recorder ended without writing a run".into());
        return Err(format!("nothing was recorded for {what}: {why}"));
    };
    let m = &run.meta;
    let ended = match (f.cancelled, m.end_reason) {
        (true, _) => "stopped because the request was cancelled (the run keeps what was sampled)".to_string(),
        (false, EndReason::Duration) => "stopped at the duration limit".to_string(),
        (false, EndReason::Interrupted) => "interrupted".to_string(),
        (false, EndReason::Exited) => "the program exited".to_string(),
    };
    let exit = match m.exit_status {
        Some(s) => match (s.code, s.signal) {
            (Some(c), _) => format!(", exit code {c}"),
            (None, Some(sig)) => format!(", ended by signal {sig}{}", m.stopped_with.as_deref().map(|w| format!(" (threadradar sent {w})")).unwrap_or_default()),
            _ => String::new(),
        },
        None => String::new(),
    };
    let mut text = format!(
        "Recorded {what} into {}: {:.2} s, {} samples every {} ms, {} threads; {ended}{exit}.",
        f.output.display(),
        m.duration_s,
        m.sample_count,
        m.interval_ms,
        run.threads.len()
    );
    if let Some(test) = &m.test {
        match &test.outcome {
            Some(o) => {
                text.push_str(&format!("\nOutcome of {}: {}.", test.id, threadradar_lsp::pytests::outcome_words(o)));
                if let Some(first) = &o.first_failure {
                    text.push_str(&format!(" First failure: {first}"));
                }
            }
            None => text.push_str(&format!("\nOutcome of {}: unknown (pytest wrote no report, or the run was cancelled or interrupted before its tests ended).", test.id)),
        }
    }
    if m.partial {
        text.push_str("\nThe run is partial: the recorder was killed before it finished writing.");
    }
    text.push_str("\nAsk hottest_artifacts, waits or critical_sections about it (it is now the newest run).");
    Ok(text)
}
