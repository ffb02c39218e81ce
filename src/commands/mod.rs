//! One module per subcommand; `main.rs` only parses arguments and hands off.

pub mod compare;
pub mod completions;
pub mod demo;
pub mod export;
pub mod html;
pub mod import;
pub mod info;
pub mod lsp;
pub mod mcp;
pub mod radar;
pub mod record;
pub mod report;
pub mod sections;
pub mod runs;
pub mod serve;
pub mod test;
pub mod timeline;
pub mod waits;
