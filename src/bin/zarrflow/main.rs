//! `zarrflow`: inspect, read, write, create and copy Zarr v3 arrays (sharded or not) on local
//! disks and object stores.
//!
//! Every subcommand takes a URL: a path, `file://`, `s3://bucket/key`, `gs://bucket/key`,
//! `az://container/key` or `http(s)://` (read-only). Errors are one line on standard error
//! and a non-zero exit status (1 for a failed operation, 2 for a usage error).
#![warn(missing_docs, missing_debug_implementations, rust_2018_idioms)]

mod cli;
mod copy;
mod create;
mod error;
mod get;
mod info;
mod parse;
mod progress;
mod select;
mod set;
mod tree;
mod values;

use std::process::ExitCode;

use clap::Parser;

use cli::{Cli, Command};

/// Keeps freed buffers from staying resident: glibc raises its mmap threshold after large
/// frees, so shard-sized buffers would come from (and stay in) the heap; a fixed threshold
/// returns them to the system, which keeps `copy` within its memory bound.
fn tune_allocator() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only adjusts allocator parameters; it is called before any other thread
    // exists, and invalid values are rejected by returning 0.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 1 << 20);
    }
}

fn main() -> ExitCode {
    tune_allocator();
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            use clap::error::ErrorKind;
            // --help and --version print to stdout and exit 0
            if matches!(
                e.kind(),
                ErrorKind::DisplayHelp
                    | ErrorKind::DisplayVersion
                    | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
            ) {
                let _ = e.print();
                return ExitCode::from(u8::try_from(e.exit_code()).unwrap_or(2));
            }
            // usage errors: one line, exit status 2
            eprintln!("zarrflow: error: {}", usage_message(&e));
            return ExitCode::from(2);
        }
    };
    init_tracing(cli.verbose);
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("zarrflow: error: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let result = runtime.block_on(run(cli.command));
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("zarrflow: error: {e}");
            ExitCode::from(e.exit_code())
        }
    }
}

/// Installs a subscriber printing events to standard error when asked for: `-v` enables
/// zarrflow's DEBUG events, `-vv` its TRACE events, and `RUST_LOG` adds its own directives
/// (EnvFilter syntax, e.g. `zarrflow=debug,object_store=debug`). Without either nothing is
/// installed, so events cost nothing and standard error holds only errors.
fn init_tracing(verbose: u8) {
    use tracing_subscriber::filter::{EnvFilter, LevelFilter};
    let env = std::env::var("RUST_LOG")
        .ok()
        .filter(|s| !s.trim().is_empty());
    let own = match verbose {
        0 => None,
        1 => Some("zarrflow=debug"),
        _ => Some("zarrflow=trace"),
    };
    if env.is_none() && own.is_none() {
        return;
    }
    let mut filter = EnvFilter::builder()
        .with_default_directive(LevelFilter::OFF.into())
        .parse_lossy(env.unwrap_or_default());
    if let Some(directive) = own.and_then(|d| d.parse().ok()) {
        filter = filter.add_directive(directive);
    }
    use std::io::IsTerminal;
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .with_timer(tracing_subscriber::fmt::time::uptime())
        .try_init();
}

/// A clap error as one line with a pointer to `--help`. A value our `value_parser` refused
/// is reported as clap words it, on one line even when the value spans several.
fn usage_message(e: &clap::Error) -> String {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    if e.kind() == ErrorKind::ValueValidation
        && let (Some(ContextValue::String(arg)), Some(ContextValue::String(value)), Some(why)) = (
            e.get(ContextKind::InvalidArg),
            e.get(ContextKind::InvalidValue),
            std::error::Error::source(e),
        )
    {
        let text = error::CliError::usage(format!("invalid value '{value}' for '{arg}': {why}"));
        return format!("{text} (see --help)");
    }
    usage_line(&e.render().to_string())
}

/// The first paragraph of clap's message, with a pointer to `--help`.
fn usage_line(rendered: &str) -> String {
    // the first paragraph (clap lists missing arguments on the lines that follow)
    let first: Vec<&str> = rendered
        .lines()
        .map(str::trim)
        .skip_while(|l| l.is_empty())
        .take_while(|l| !l.is_empty() && !l.starts_with("Usage:"))
        .collect();
    let text = first.join(" ");
    let text = text.strip_prefix("error: ").unwrap_or(&text);
    if text.is_empty() {
        return "invalid arguments (see --help)".into();
    }
    format!("{text} (see --help)")
}

async fn run(command: Command) -> error::Result<()> {
    match command {
        Command::Info(args) => info::run(args).await,
        Command::Tree(args) => tree::run(args).await,
        Command::Get(args) => get::run(args).await,
        Command::Set(args) => set::run(args).await,
        Command::Create(args) => create::run(args).await,
        Command::Copy(args) => copy::run(args).await,
    }
}
