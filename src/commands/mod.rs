//! One module per subcommand; `main.rs` only parses arguments and hands off.

pub mod completions;
pub mod demo;
pub mod info;
pub mod record;
pub mod report;
