//! `zarrflow`: inspect, read, write, create and copy Zarr v3 arrays (sharded or not) on local
//! disks and object stores.
//!
//! Every subcommand takes a URL: a path, `file://`, `s3://bucket/key`, `gs://bucket/key`,
//! `az://container/key` or `http(s)://` (read-only). Errors are one line on standard error
//! and a non-zero exit status (1 for a failed operation, 2 for a usage error). When the
//! reader of standard output closes it early, the process ends quietly, killed by `SIGPIPE`
//! (a shell reports status 141), as `cat` and `git` do.
#![warn(missing_docs, missing_debug_implementations, rust_2018_idioms)]

mod ancestors;
mod cli;
mod consolidate;
mod copy;
mod count;
mod create;
mod error;
mod get;
mod info;
mod input;
mod outfile;
mod output;
mod parse;
mod prefault;
mod progress;
mod quote;
mod select;
mod set;
mod summary;
mod tree;
mod values;
mod vlen;

use std::process::ExitCode;

use clap::Parser;

use cli::{Cli, Command};

/// Keeps freed buffers from staying resident: glibc raises its mmap threshold after large
/// frees, so shard-sized buffers would come from (and stay in) the heap; a fixed threshold
/// returns them to the system, which keeps `copy` within its memory bound.
///
/// And bounds glibc's malloc arenas to twice the cores (at least 4) unless
/// `MALLOC_ARENA_MAX` says otherwise: each arena reserves 64 MiB of address space, and glibc
/// makes up to 8 per core as threads contend, so on 2 cores a `get` under load reserved up
/// to 891 MiB of them and ran out of `ulimit -v 1000000` (tests/cli_bounds.rs): an aborted
/// allocation in CI, a hang in 1 of 48 loaded runs here; none of 64 with the bound.
fn tune_allocator() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let arenas = i32::try_from(2 * cores).unwrap_or(i32::MAX).max(4);
        let user_set = std::env::var_os("MALLOC_ARENA_MAX").is_some();
        // SAFETY: mallopt only adjusts allocator parameters; it is called before any other
        // thread exists, and invalid values are rejected by returning 0.
        unsafe {
            libc::mallopt(libc::M_MMAP_THRESHOLD, 1 << 20);
            if !user_set {
                libc::mallopt(libc::M_ARENA_MAX, arenas);
            }
        }
    }
}

fn main() -> ExitCode {
    tune_allocator();
    // for bounding echoes in messages (`args()` would panic on an argument that is not UTF-8)
    let args: Vec<String> = std::env::args_os()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
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
                return match e.print() {
                    Ok(()) => ExitCode::from(u8::try_from(e.exit_code()).unwrap_or(2)),
                    Err(io) => report(output::stdout_error(io), &args),
                };
            }
            // usage errors: one line, exit status 2
            let line = quote::bound_echoes(&usage_message(&e), &args);
            output::eprint_line(&format!("zarrflow: error: {line}"));
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
            output::eprint_line(&format!(
                "zarrflow: error: cannot start the async runtime: {e}"
            ));
            return ExitCode::FAILURE;
        }
    };
    let result = runtime.block_on(run(cli.command));
    match &result {
        // Everything the command started has finished (it awaits all its work): the
        // runtime's idle threads need no joining, the process's exit ends them. Measured on
        // `get` of the benchmark's sub-box: 0.4-0.6 ms less (best and median of 40 runs)
        // than waiting for each to wake up and exit on 2 cores.
        Ok(()) => runtime.shutdown_background(),
        // a failed command may leave blocking work (a file being written) in flight: it
        // finishes before the process ends, as before
        Err(_) => drop(runtime),
    }
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => report(e, &args),
    }
}

/// Reports a failed command on standard error (its echoes of long arguments bounded) and
/// returns its exit status; a closed standard output ends the process as `SIGPIPE` would.
fn report(e: error::CliError, args: &[String]) -> ExitCode {
    if e.is_output_closed() {
        return die_of_sigpipe(e.exit_code());
    }
    output::eprint_line(&format!(
        "zarrflow: error: {}",
        quote::bound_echoes(&e.to_string(), args)
    ));
    ExitCode::from(e.exit_code())
}

/// Ends the process quietly after its reader closed standard output: killed by `SIGPIPE`, as
/// `cat` or `git` are (the Rust runtime ignores the signal, so the write failed with `EPIPE`
/// instead; git's `check_pipe` does the same). A shell reports status 141, `128 + SIGPIPE`,
/// which `status` is, should the signal not end the process.
fn die_of_sigpipe(status: u8) -> ExitCode {
    #[cfg(unix)]
    // SAFETY: `signal` and `raise` are async-signal-safe libc calls with valid arguments; the
    // default action of SIGPIPE terminates the process, which is the intent.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
        libc::raise(libc::SIGPIPE);
    }
    ExitCode::from(status)
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
        // a failed write to standard error is dropped: reporting it would panic
        .log_internal_errors(false)
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
        let value = quote::quoted(value);
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
        Command::Consolidate(args) => consolidate::run(args).await,
    }
}
