//! One module per subcommand; `main.rs` only parses arguments and hands off.

/// `eprintln!` that never panics: a recorder whose reader went away (an editor closed the pipe)
/// still writes its run and stops its program; the line is lost, nothing else.
macro_rules! say {
    ($($t:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr().lock(), $($t)*);
    }};
}

pub mod compare;
pub mod completions;
pub mod demo;
pub mod dump;
pub mod doctor;
pub mod export;
pub mod html;
pub mod import;
pub mod info;
pub mod lsp;
pub mod mcp;
pub mod outfile;
pub mod radar;
pub mod record;
pub mod report;
pub mod sections;
pub mod sections_exact;
pub mod runs;
pub mod runpath;
pub mod serve;
pub mod sourceroot;
pub mod test;
pub mod timeline;
pub mod waits;
