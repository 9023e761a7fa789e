//! Progress on stderr while the library works: indicatif bars for runs, preparing, studies and
//! the tuner (hidden when stderr is not a terminal), lines for the default job's steps, and
//! SIGINT (Ctrl-C) and SIGTERM turned into the observers' `cancelled()` so runs end cleanly, and
//! into the exit code that says which signal it was (130 or 143).

use indicatif::{ProgressBar, ProgressStyle};
use readlab::config::RunConfig;
use readlab::eta::Eta;
use readlab::failures::Failures;
use readlab::monitor::{MonitorOptions, Sample};
use readlab::prepare::{PrepareObserver, Prepared};
use readlab::quick::QuickObserver;
use readlab::result::Document;
use readlab::runner::{Observer, Phase, Tick};
use readlab::study::{Point, StudyName, StudyObserver};
use readlab::tune::{Candidate, TuneObserver};
use readlab::units::{Style, format_bytes, format_ns};
use readlab::warnings::Tally;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

fn bytes(n: u64) -> String {
    format_bytes(n as f64, Style::Table)
}

/// Progress on stderr: a bar per run, hidden when stderr is not a terminal.
pub struct Progress {
    bar: Mutex<Option<ProgressBar>>,
    quiet: bool,
    interrupted: Arc<AtomicBool>,
    /// `--monitor`: the monitor's options and its lines (printed above the bar).
    monitor: Option<(MonitorOptions, crate::lines::Lines)>,
    /// Several runs in a row (configurations, repetitions): the time left of them all and the
    /// run in flight.
    series: Mutex<Option<Series>>,
}

/// Runs in a row: the library's estimate of the time left, the run in flight and its label.
struct Series {
    eta: Eta,
    started: usize,
    label: String,
}

/// SIGINT and SIGTERM, caught once for the whole process.
struct Signals {
    /// Either arrived: stop what is running, keep what was measured.
    any: Arc<AtomicBool>,
    /// SIGTERM arrived.
    term: Arc<AtomicBool>,
}

fn signals() -> &'static Signals {
    static S: std::sync::OnceLock<Signals> = std::sync::OnceLock::new();
    S.get_or_init(|| {
        let s = Signals {
            any: Arc::new(AtomicBool::new(false)),
            term: Arc::new(AtomicBool::new(false)),
        };
        use signal_hook::consts::{SIGINT, SIGTERM};
        // A second signal while the first is being honoured ends the process at once.
        let _ = signal_hook::flag::register_conditional_shutdown(SIGINT, 130, s.any.clone());
        let _ = signal_hook::flag::register_conditional_shutdown(SIGTERM, 143, s.any.clone());
        let _ = signal_hook::flag::register(SIGINT, s.any.clone());
        let _ = signal_hook::flag::register(SIGTERM, s.any.clone());
        let _ = signal_hook::flag::register(SIGTERM, s.term.clone());
        // The library's waits before a run (connecting to an NBD server) look at it too.
        readlab::interrupt::watch(s.any.clone());
        s
    })
}

/// Catch SIGINT and SIGTERM from now on (a command that shows no progress but waits on the
/// network: `info nbd://…`); a second signal still ends the process at once.
pub fn catch_signals() {
    signals();
}

/// The exit code of a command a signal interrupted: 130 for SIGINT, 143 for SIGTERM.
pub fn interrupted_exit() -> std::process::ExitCode {
    std::process::ExitCode::from(if signals().term.load(Ordering::Relaxed) {
        143
    } else {
        130
    })
}

impl Progress {
    /// A progress display (none when `quiet`) that also catches SIGINT and SIGTERM.
    pub fn new(quiet: bool) -> Progress {
        Progress {
            bar: Mutex::new(None),
            quiet,
            interrupted: signals().any.clone(),
            monitor: None,
            series: Mutex::new(None),
        }
    }

    /// Whether SIGINT or SIGTERM arrived: stop at the next occasion.
    pub fn interrupted(&self) -> bool {
        self.interrupted.load(Ordering::Relaxed)
    }

    /// Several runs follow, one per configuration, each `repeat` times (nothing is shown for a
    /// single run).
    pub fn series(&self, cfgs: &[RunConfig], repeat: usize) {
        let planned = readlab::eta::planned_series(
            cfgs.iter()
                .flat_map(|c| std::iter::repeat_n(c, repeat.max(1))),
        );
        if planned.len() > 1 {
            let mut eta = Eta::new(planned);
            eta.begin(Instant::now());
            *self.series.lock().unwrap() = Some(Series {
                eta,
                started: 0,
                label: String::new(),
            });
        }
    }

    /// The next run of the series starts (the one before it ended): on a terminal its place and
    /// the time left go on its bar, elsewhere in a plain line (none when quiet).
    pub fn step(&self, label: &str) {
        let line = {
            let mut slot = self.series.lock().unwrap();
            let Some(s) = slot.as_mut() else { return };
            if s.started > 0 {
                s.eta.point_done(Instant::now());
            }
            s.started += 1;
            s.label = label.to_string();
            series_text(s)
        };
        if !self.quiet && !std::io::IsTerminal::is_terminal(&std::io::stderr()) {
            errln!("readlab: {line}");
        }
    }

    /// Attach the monitor to the runs this observes (`--monitor`); its lines go to stderr
    /// unless quiet.
    pub fn with_monitor(mut self, on: bool) -> Progress {
        if on {
            let width = crate::err().width;
            self.monitor = Some((
                MonitorOptions::new(Vec::new(), None),
                crate::lines::Lines::new(width),
            ));
        }
        self
    }

    fn print_sample(&self, s: &Sample, print: impl Fn(&str)) {
        if let Some((_, lines)) = &self.monitor
            && !self.quiet
        {
            for l in lines.lines(s) {
                print(&l);
            }
        }
    }

    /// A line about what happens next (`racing the close configurations …`), above the bar;
    /// nothing when quiet. The series' time left no longer holds after it: it is put away.
    pub fn note(&self, line: &str) {
        *self.series.lock().unwrap() = None;
        if self.quiet {
            return;
        }
        match self.bar.lock().unwrap().as_ref() {
            Some(b) => b.println(format!("readlab: {line}")),
            None => errln!("readlab: {line}"),
        }
    }

    /// Clear the bar, if one is shown.
    pub fn finish(&self) {
        if let Some(b) = self.bar.lock().unwrap().take() {
            b.finish_and_clear();
        }
    }

    fn bar(&self, len: u64, template: &str) -> Option<ProgressBar> {
        if self.quiet {
            return None;
        }
        let mut slot = self.bar.lock().unwrap();
        if slot.is_none() {
            let b = ProgressBar::new(len);
            b.set_style(
                ProgressStyle::with_template(template)
                    .unwrap_or_else(|_| ProgressStyle::default_bar()),
            );
            *slot = Some(b);
        }
        slot.clone()
    }
}

impl Observer for Progress {
    fn tick(&self, t: &Tick) {
        let Some(b) = self.bar(
            t.planned.as_millis() as u64,
            "{spinner} [{bar:30}] {elapsed}/{duration} {msg}",
        ) else {
            return;
        };
        b.set_position((t.elapsed.as_millis() as u64).min(t.planned.as_millis() as u64));
        let phase = match t.phase {
            Phase::Ramp => "ramp",
            Phase::Measure => "measure",
            Phase::Drain => "drain",
        };
        let series = self.series.lock().unwrap().as_ref().map(series_text);
        b.set_message(match series {
            Some(s) => format!("{phase} {:.0} IOPS · {s}", t.recent_iops),
            None => format!("{phase} {:.0} IOPS", t.recent_iops),
        });
        if t.phase == Phase::Drain {
            self.finish();
        }
    }

    fn cancelled(&self) -> bool {
        self.interrupted.load(Ordering::Relaxed)
    }

    fn monitor(&self) -> Option<MonitorOptions> {
        self.monitor.as_ref().map(|m| m.0.clone())
    }

    fn monitor_sample(&self, s: &Sample) {
        // A hidden bar (stderr not a terminal) prints nothing: plain lines then.
        self.print_sample(s, |l| match self.bar.lock().unwrap().as_ref() {
            Some(b) if !b.is_hidden() => b.println(l),
            _ => errln!("{l}"),
        });
    }
}

impl PrepareObserver for Progress {
    fn progress(&self, written: u64, total: u64) {
        if let Some(b) = self.bar(
            total,
            "{spinner} prepare [{bar:30}] {bytes}/{total_bytes} {bytes_per_sec}",
        ) {
            b.set_position(written);
            if written >= total {
                self.finish();
            }
        }
    }

    fn should_stop(&self) -> bool {
        self.interrupted.load(Ordering::Relaxed)
    }
}

impl QuickObserver for Progress {
    fn preparing(&self, path: &Path, size: u64) {
        errln!(
            "readlab: preparing {} ({}) with verifiable data",
            path.display(),
            bytes(size)
        );
    }
    fn reused(&self, path: &Path) {
        errln!("readlab: reusing prepared {}", path.display());
    }
    fn prepared(&self, p: &Prepared) {
        errln!(
            "readlab: wrote {} in {:.1} s ({:.0} MiB/s{})",
            bytes(p.size),
            p.seconds,
            p.size as f64 / p.seconds.max(1e-9) / (1u64 << 20) as f64,
            if p.direct { ", O_DIRECT" } else { ", buffered" }
        );
    }
    fn starting(&self, i: usize, n: usize, cfg: &RunConfig) {
        errln!(
            "readlab: [{}/{}] {} {:?} {} x{} threads",
            i + 1,
            n,
            cfg.engine.name(),
            cfg.rw,
            bytes(cfg.bs),
            cfg.threads
        );
    }
    fn racing(&self, round: Duration) {
        self.note(&format!(
            "racing the close configurations in interleaved {} rounds",
            readlab::units::format_seconds(round.as_secs_f64())
        ));
    }
}

/// Where a series of runs is: "run 3/16 U32B1, eta 1m20s".
fn series_text(s: &Series) -> String {
    format!(
        "run {}/{} {}, eta {}",
        s.started,
        s.eta.progress().1,
        s.label,
        readlab::eta::format(s.eta.remaining(Instant::now()))
    )
}

/// Progress of a study: a bar over its points, and a line per second for long points.
pub struct StudyProgress {
    inner: Progress,
    points: Mutex<Option<ProgressBar>>,
    last_line: Mutex<Duration>,
    /// The failures of the points measured by this command.
    failures: Mutex<Failures>,
    /// Points the study skipped because they could not run here.
    not_run: AtomicUsize,
    /// The points' warnings: each said when first seen, the repeats counted for the end.
    warned: Mutex<Tally>,
    /// The time left of the study running now (the library's estimate), and the point in
    /// flight's words (its label, block size, scheduler).
    eta: Mutex<Option<Eta>>,
    current: Mutex<String>,
    /// The study's first line, said once its time is known.
    header: Mutex<Option<String>>,
}

impl StudyProgress {
    pub fn new() -> StudyProgress {
        StudyProgress {
            inner: Progress::new(false),
            points: Mutex::new(None),
            last_line: Mutex::new(Duration::ZERO),
            failures: Mutex::new(Failures::default()),
            not_run: AtomicUsize::new(0),
            warned: Mutex::new(Tally::new()),
            eta: Mutex::new(None),
            current: Mutex::new(String::new()),
            header: Mutex::new(None),
        }
    }

    /// The time left now, as shown ("eta 1m20s"), once the study's points are planned.
    fn eta_text(&self) -> Option<String> {
        let eta = self.eta.lock().unwrap();
        eta.as_ref()
            .map(|e| format!("eta {}", readlab::eta::format(e.remaining(Instant::now()))))
    }

    /// The bar's message: the point in flight and the time left.
    fn refresh(&self) {
        if let Some(b) = self.points.lock().unwrap().as_ref() {
            let current = self.current.lock().unwrap().clone();
            b.set_message(match self.eta_text() {
                Some(eta) => format!("{current} · {eta}"),
                None => current,
            });
        }
    }

    /// One point finished (measured, skipped or failed): the estimate learns how long it took.
    fn one_done(&self) {
        if let Some(e) = self.eta.lock().unwrap().as_mut() {
            e.point_done(Instant::now());
        }
    }

    /// Attach the monitor to every point (`--monitor`).
    pub fn with_monitor(mut self, on: bool) -> StudyProgress {
        self.inner = self.inner.with_monitor(on);
        self
    }

    /// The failures of the points this command measured.
    pub fn failures(&self) -> Failures {
        self.failures.lock().unwrap().clone()
    }

    /// How many points the study skipped because they could not run here.
    pub fn points_not_run(&self) -> usize {
        self.not_run.load(Ordering::Relaxed)
    }

    /// Clear the points bar, if one is shown, and count the warnings more than one point said
    /// (each was printed once, when first seen).
    pub fn finish(&self) {
        if let Some(b) = self.points.lock().unwrap().take() {
            b.finish_and_clear();
        }
        let warned = std::mem::take(&mut *self.warned.lock().unwrap());
        if let Some(counts) = warned.repeated() {
            errln!("readlab: warnings printed once above, said by more points: {counts}");
        }
    }

    fn println(&self, msg: &str) {
        match self.points.lock().unwrap().as_ref() {
            // A hidden bar (stderr is not a terminal) prints nothing: print past it.
            Some(b) if !b.is_hidden() => b.println(paint_warning(&crate::err().fit(msg))),
            _ => eprintln!("{}", paint_warning(&crate::err().fit(msg))),
        }
    }
}

impl Observer for StudyProgress {
    fn tick(&self, t: &Tick) {
        self.refresh();
        if t.planned > Duration::from_secs(5) && t.phase == Phase::Measure {
            let mut last = self.last_line.lock().unwrap();
            if t.elapsed >= *last + Duration::from_secs(1) {
                *last = t.elapsed;
                self.println(&format!(
                    "    {:>4.0} s  {:>10.0} IOPS",
                    t.elapsed.as_secs_f64(),
                    t.recent_iops
                ));
            }
        }
    }

    fn cancelled(&self) -> bool {
        self.inner.cancelled()
    }

    fn monitor(&self) -> Option<MonitorOptions> {
        self.inner.monitor()
    }

    fn monitor_sample(&self, s: &Sample) {
        self.inner.print_sample(s, |l| self.println(l));
    }
}

impl StudyObserver for StudyProgress {
    fn study_start(&self, name: StudyName, total: usize, skipped: usize) {
        let mut slot = self.points.lock().unwrap();
        if let Some(b) = slot.take() {
            b.finish_and_clear();
        }
        // Said with the time it should take once the points are planned (right after).
        *self.header.lock().unwrap() = Some(format!(
            "readlab: study {} — {} points{}",
            name.name(),
            total,
            if skipped > 0 {
                format!(", {skipped} already done")
            } else {
                String::new()
            }
        ));
        *self.eta.lock().unwrap() = None;
        if !self.inner.quiet {
            let b = ProgressBar::new(total as u64);
            b.set_style(
                ProgressStyle::with_template("{spinner} [{bar:30}] {pos}/{len} points {msg}")
                    .unwrap_or_else(|_| ProgressStyle::default_bar()),
            );
            b.set_position(skipped as u64);
            // The time left counts down between points too.
            b.enable_steady_tick(Duration::from_millis(500));
            *slot = Some(b);
        }
    }

    fn points_planned(&self, planned: &[Duration]) {
        let mut eta = Eta::new(planned.to_vec());
        eta.begin(Instant::now());
        if let Some(h) = self.header.lock().unwrap().take() {
            if planned.is_empty() {
                errln!("{h}");
            } else {
                let left = eta.remaining(Instant::now());
                errln!("{h}, about {} to run", readlab::eta::format(left));
            }
        }
        *self.eta.lock().unwrap() = Some(eta);
    }

    fn point_start(&self, index: usize, total: usize, p: &Point) {
        if let Some(h) = self.header.lock().unwrap().take() {
            errln!("{h}");
        }
        *self.last_line.lock().unwrap() = Duration::ZERO;
        let what = [
            p.cfg.label(),
            bytes(p.cfg.bs),
            p.tag.scheduler.clone().unwrap_or_default(),
        ]
        .join(" ")
        .trim_end()
        .to_string();
        *self.current.lock().unwrap() = what.clone();
        let shown = match self.points.lock().unwrap().as_ref() {
            Some(b) => {
                b.set_position(index as u64);
                !b.is_hidden()
            }
            None => true,
        };
        self.refresh();
        if !shown {
            // No bar (stderr is not a terminal): a plain line per point.
            let eta = self
                .eta_text()
                .map(|e| format!(", {e}"))
                .unwrap_or_default();
            errln!("readlab: point {}/{total} {what}{eta}", index + 1);
        }
    }

    fn point_done(&self, d: &Document) {
        self.one_done();
        if let Some(b) = self.points.lock().unwrap().as_ref() {
            b.inc(1);
        }
        self.failures.lock().unwrap().add(d);
        let point = format!(
            "{} {} {}",
            d.config.engine.name(),
            d.result.label,
            bytes(d.config.bs)
        );
        if let Some(lines) = d.result.failure_summary() {
            self.println(&format!("readlab: {point}: {}", lines.join("; ")));
        }
        // Each warning once: a study on a target in memory would say so at every point.
        let new = self.warned.lock().unwrap().point(&d.result.warnings);
        for w in new {
            self.println(&format!("readlab: warning: {point}: {w}"));
        }
    }

    fn point_skipped(&self, point: &Point, why: &readlab::error::Error) {
        self.one_done();
        self.not_run.fetch_add(1, Ordering::Relaxed);
        self.note(&format!("{}: skipped: {why}", point.cfg.label()));
    }

    fn point_failed(&self, point: &Point, why: &readlab::error::Error) {
        self.one_done();
        let what = format!(
            "{} {} {}",
            point.cfg.engine.name(),
            point.cfg.label(),
            bytes(point.cfg.bs)
        );
        self.failures.lock().unwrap().add_error(&what, why);
        self.note(&format!("{what}: {why}"));
    }

    fn note(&self, message: &str) {
        self.println(&format!("readlab: {message}"));
    }
}

/// Tuner progress: one line per measured point under a spinner, and each warning of the runs
/// once, when first seen.
pub struct TuneProgress {
    inner: Progress,
    warned: Mutex<Tally>,
    /// When the search started and its budget: the search ends within it, so what is left of
    /// it is the time left.
    started: Instant,
    budget: Duration,
}

impl TuneProgress {
    pub fn new(budget: Duration) -> TuneProgress {
        TuneProgress {
            inner: Progress::new(true),
            warned: Mutex::new(Tally::new()),
            started: Instant::now(),
            budget,
        }
    }

    /// Whether SIGINT or SIGTERM stopped the search.
    pub fn interrupted(&self) -> bool {
        self.inner.interrupted()
    }
}

impl Observer for TuneProgress {
    fn cancelled(&self) -> bool {
        self.inner.cancelled()
    }
}

impl TuneObserver for TuneProgress {
    fn phase(&self, what: &str) {
        let left = self.budget.saturating_sub(self.started.elapsed());
        errln!(
            "readlab: tune: {what} (at most {} left of the budget)",
            readlab::eta::format(left)
        );
    }
    fn measured(&self, c: &Candidate, doc: &Document) {
        for w in self.warned.lock().unwrap().point(&doc.result.warnings) {
            eprintln!(
                "{}",
                paint_warning(&crate::err().fit(&format!("readlab: warning: {w}")))
            );
        }
        errln!(
            "    {:<14} {:>9.0} IOPS {:>8.1} MB/s  p99.9 {:>9}  CPU {:.2} cores",
            c.label,
            c.iops,
            c.mb_s,
            format_ns(c.p999_ns as f64, Style::Table),
            c.cpu_cores
        );
    }
}

/// The answer lines (`Answer:` then one line per target, block size and access) on stdout, first
/// and followed by an empty line, fitted to its width; a pick in the answer's colour on a colour
/// terminal, "too close to call" plain.
pub fn print_answer(text: &str) {
    if text.is_empty() {
        return;
    }
    let t = crate::out();
    for line in text.lines() {
        let fitted = t.fit(line);
        for l in fitted.lines() {
            if line.starts_with("Answer:") {
                outln!("{}", t.heading(l));
            } else if line.contains("too close to call") {
                outln!("{l}");
            } else {
                outln!("{}", t.answer(l));
            }
        }
    }
    outln!();
}

/// One warning on stderr, fitted to its width and coloured on a colour terminal.
pub fn warn(w: &str) {
    eprintln!(
        "{}",
        paint_warning(&crate::err().fit(&format!("readlab: warning: {w}")))
    );
}

/// The warnings of runs, one line each on stderr: a warning many of them share once, with how
/// many runs said it, the rest under the configuration that said it.
pub fn print_warnings(docs: &[Document]) {
    let say = |w: String| {
        eprintln!(
            "{}",
            paint_warning(&crate::err().fit(&format!("readlab: warning: {w}")))
        )
    };
    if let [doc] = docs {
        for w in &doc.result.warnings {
            say(w.clone());
        }
        return;
    }
    let warnings: Vec<&[String]> = docs.iter().map(|d| d.result.warnings.as_slice()).collect();
    let grouped = readlab::warnings::group(&warnings);
    for b in &grouped.banners {
        let runs = if b.points == 1 { "run" } else { "runs" };
        say(format!("{} ({} {runs})", b.text, b.points));
    }
    for (d, rest) in docs.iter().zip(grouped.rest) {
        for w in rest {
            say(format!(
                "{} {}: {w}",
                d.config.engine.name(),
                d.result.label
            ));
        }
    }
}

/// Text whose first line starts `readlab: warning:`, that line coloured as a warning on a
/// colour terminal (stderr's); anything else as it is.
pub fn paint_warning(text: &str) -> String {
    if !text.starts_with("readlab: warning:") {
        return text.to_string();
    }
    let t = crate::err();
    text.lines()
        .map(|l| t.warning(l))
        .collect::<Vec<_>>()
        .join("\n")
}

/// What `study` prints on stdout: the verdict fitted to the terminal, then where the summary's
/// tables are and how to draw them (the tables themselves are too wide for a terminal).
pub fn where_it_is(
    docs: &[readlab::result::Document],
    summary: &std::path::Path,
    out: &std::path::Path,
) -> String {
    let term = crate::out();
    let mut s = readlab::verdict::text_for_within(docs, term.width);
    if !s.is_empty() {
        s.push('\n');
    }
    s.push_str(&format!(
        "Summary tables: {}\nCharts and tables in one page: readlab report {}\n",
        summary.display(),
        out.display()
    ));
    term.fit(&s)
}
