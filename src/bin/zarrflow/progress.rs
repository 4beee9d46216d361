//! The progress bar of `copy`: shown on a terminal, silent otherwise.

use std::io::IsTerminal;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// Progress over a known number of shards and bytes.
#[derive(Debug)]
pub struct Progress {
    bar: Option<ProgressBar>,
    total_shards: u64,
}

impl Progress {
    /// A progress bar over `total_shards` shards of `total_bytes` bytes, drawn on standard
    /// error when it is a terminal and `quiet` is false.
    pub fn new(total_shards: u64, total_bytes: u64, quiet: bool) -> Progress {
        let show = !quiet && std::io::stderr().is_terminal();
        let bar = show.then(|| {
            let bar = ProgressBar::with_draw_target(
                Some(total_bytes),
                ProgressDrawTarget::stderr_with_hz(4),
            );
            let style = ProgressStyle::with_template(
                "{spinner} [{elapsed_precise}] [{wide_bar}] {msg} shards  \
                 {binary_bytes}/{binary_total_bytes}  {binary_bytes_per_sec}  ETA {eta}",
            )
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> ");
            bar.set_style(style);
            bar.set_message(format!("0/{total_shards}"));
            bar.enable_steady_tick(Duration::from_millis(250));
            bar
        });
        Progress { bar, total_shards }
    }

    /// Records that `shards` shards of `bytes` (uncompressed) are written so far.
    pub fn set(&self, shards: u64, bytes: u64) {
        if let Some(bar) = &self.bar {
            bar.set_position(bytes);
            bar.set_message(format!("{shards}/{}", self.total_shards));
        }
    }

    /// Prints a line above the bar (or nothing without a bar).
    pub fn println(&self, line: &str) {
        if let Some(bar) = &self.bar {
            bar.println(line);
        }
    }

    /// Removes the bar, leaving its last state on the screen.
    pub fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish();
        }
    }

    /// Removes the bar after an error.
    pub fn abandon(&self) {
        if let Some(bar) = &self.bar {
            bar.abandon();
        }
    }
}
