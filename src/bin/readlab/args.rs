//! What every command's flags share: the value parsers (counts, sizes, durations, fractions), so a
//! bad value is a one-line usage error (exit 2) before any command starts, and the `--output` /
//! `--json` pair. Each command's own flags, and their conversion into the library's validated
//! config types, live beside the command (`run.rs`, `study.rs`, …); the top-level parser in
//! `main.rs`.

use clap::{Args, ValueEnum};
use readlab::error::Error;
use std::path::PathBuf;
use std::time::Duration;

/// `readlab run`'s flags that say what to replay, the whole workload: beside either, a flag of
/// the workload (each engine option, and each flag declared `conflicts_with_all = REPLAYS`) is
/// refused rather than silently overridden or ignored.
pub const REPLAYS: &[&str] = &["profile", "job"];

/// A count of at least 1 (threads, queue size, batch, …).
pub fn count(s: &str) -> Result<usize, String> {
    match s.trim().parse::<i64>() {
        Ok(v) if v >= 1 => usize::try_from(v).map_err(|_| format!("{v} is too large")),
        Ok(v) => Err(format!("must be at least 1, not {v}")),
        Err(_) if s.trim().bytes().all(|b| b.is_ascii_digit()) && !s.trim().is_empty() => {
            Err(format!("{} is too large", s.trim()))
        }
        Err(_) => Err(format!("'{s}' is not a whole number")),
    }
}

/// A thread count: at least 1, at most what one run may start.
pub fn thread_count(s: &str) -> Result<usize, String> {
    let n = count(s)?;
    if n > readlab::engine::MAX_THREADS {
        return Err(format!(
            "{n} is more threads than readlab starts (at most {})",
            readlab::engine::MAX_THREADS
        ));
    }
    Ok(n)
}

/// A size like `4k` or `1g` (powers of 1024, as in fio).
pub fn size(s: &str) -> Result<u64, Error> {
    readlab::size::parse_size(s)
}

/// A duration like `5s`, `500ms` or `2m`; a bare number means seconds.
pub fn duration(s: &str) -> Result<Duration, Error> {
    readlab::size::parse_duration(s)
}

/// A fraction written as a percentage (`10%`) or a plain fraction (`0.1`), between 0 and 1.
pub fn fraction(s: &str) -> Result<f64, String> {
    let t = s.trim();
    let v = match t.strip_suffix('%') {
        Some(p) => p.trim().parse::<f64>().map(|v| v / 100.0),
        None => t.parse::<f64>(),
    }
    .map_err(|_| format!("'{s}' is not a percentage like 10% (or a fraction like 0.1)"))?;
    // A bare number above 1 is a percentage without its sign (`10` for 10 %), which as a
    // fraction would be 1000 %: ask for the sign rather than guess.
    if !t.ends_with('%') && v > 1.0 {
        return Err(format!(
            "'{s}' would be {:.0} %; write {s}% for {s} percent (or a fraction like 0.1)",
            v * 100.0
        ));
    }
    if (0.0..=10.0).contains(&v) {
        Ok(v)
    } else {
        Err(format!("'{s}' must be between 0 % and 1000 %"))
    }
}

#[derive(Copy, Clone, Debug, ValueEnum, PartialEq, Eq)]
pub enum OutputArg {
    Table,
    Json,
}

/// The same flags on every command: `--output json` prints the command's result as JSON alone on
/// stdout, `--json FILE` also writes it to a file, `--force` lets the command's outputs replace
/// files readlab did not write.
#[derive(Args, Debug)]
pub struct JsonOut {
    /// What to print on stdout: the usual text, or the result as JSON alone.
    #[arg(long, value_enum, default_value = "table")]
    pub output: OutputArg,
    /// Also write the result as JSON to this file.
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// Replace an output file that is there and that readlab did not write (--json, -o, a file
    /// in an output directory); never a symbolic link, an input, a device, FIFO or directory.
    #[arg(long)]
    pub force: bool,
}

impl JsonOut {
    /// Whether stdout gets JSON instead of text.
    pub fn is_json(&self) -> bool {
        self.output == OutputArg::Json
    }

    /// Check `--json FILE` against the command's inputs before any work.
    pub fn check(&self, inputs: &[&std::path::Path]) -> Result<(), Error> {
        match &self.json {
            Some(p) => readlab::outpath::check_file(p, inputs, self.force),
            None => Ok(()),
        }
    }

    /// Write the result to `--json FILE` and print it with `--output json`.
    pub fn emit(&self, value: &serde_json::Value) -> anyhow::Result<()> {
        let mut text = serde_json::to_string_pretty(value)?;
        text.push('\n');
        if let Some(p) = &self.json {
            readlab::fsio::write_file(p, &text)?;
        }
        if self.is_json() {
            outp!("{text}");
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn negative_counts_are_rejected() {
        assert!(count("-1").is_err());
        assert!(count("0").is_err());
        assert_eq!(count("32").unwrap(), 32);
    }
}

/// How a command with several configurations decides between the close ones: the time it may
/// take in all, and the margin within which two are equal.
#[derive(Args, Debug, Clone)]
pub struct RaceArgs {
    /// How long the whole command may take: after the first pass, configurations within 20 % of
    /// their group leader (not already equal within the margin) are raced in interleaved
    /// rounds (1 s each; the main job's ½ s) until each is decided or the budget is spent (0:
    /// no race) [default: twice the first pass, at least 30 s more; none for runs under 0.5 s;
    /// the main job 70 s in all]
    #[arg(long, value_parser = duration)]
    pub budget: Option<Duration>,
    /// Gaps within ±this are called equal [default: 5%]
    #[arg(long, value_parser = fraction)]
    pub margin: Option<f64>,
}

impl RaceArgs {
    /// The race's rule.
    pub fn rule(&self) -> readlab::race::RaceRule {
        let default = readlab::race::RaceRule::default();
        readlab::race::RaceRule {
            margin: self.margin.unwrap_or(default.margin),
            ..default
        }
    }

    /// The flags checked where the race would be run; `no_race` says why nothing is raced.
    pub fn check(&self, no_race: Option<&str>) -> Result<(), Error> {
        readlab::race::check_flags(self.budget, self.margin, no_race)
    }

    /// When the race must end: `start` (the command's) plus the budget, or by default plus
    /// `default(first_pass)`.
    pub fn deadline(
        &self,
        start: std::time::Instant,
        first_pass: Duration,
        default: impl Fn(Duration) -> Duration,
    ) -> std::time::Instant {
        start + self.budget.unwrap_or_else(|| default(first_pass))
    }
}
