//! The runner's start gate with the scripted fake engine: the gate hears every worker's set-up
//! outcome, an error from it stops the run before any I/O, and the measured run starts when the
//! gate says (after set-up, never before).

use super::{EngineFactory, Silent, StartGate, run_inner};
use crate::config::{RunConfig, Rw};
use crate::engine::fake::{Fake, Script};
use crate::engine::{Engine, EngineKind, EngineSetup};
use crate::error::{Error, Result};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// A gate that records what it was told and answers as scripted.
struct Recording {
    heard: Mutex<Vec<Option<String>>>,
    fail: bool,
    hold: Duration,
}

impl StartGate for Recording {
    fn start(&self, setup: Result<()>) -> Result<Instant> {
        self.heard
            .lock()
            .unwrap()
            .push(setup.err().map(|e| e.to_string()));
        if self.fail {
            return Err(Error::Fleet {
                message: "rank 2 failed".into(),
                bad_input: true,
            });
        }
        std::thread::sleep(self.hold);
        Ok(Instant::now())
    }
}

fn target() -> tempfile::NamedTempFile {
    let mut f = tempfile::NamedTempFile::new().unwrap();
    std::io::Write::write_all(&mut f, &vec![0u8; 64 * 4096]).unwrap();
    f
}

fn config(f: &tempfile::NamedTempFile) -> RunConfig {
    RunConfig {
        engine: EngineKind::Psync,
        direct: false,
        rw: Rw::Read,
        threads: 2,
        runtime: Duration::from_millis(300),
        ..RunConfig::new(f.path())
    }
}

#[test]
fn the_gate_hears_a_failed_set_up_and_its_error_stops_the_run() {
    let f = target();
    let cfg = config(&f);
    let open = |i: usize, setup: EngineSetup| -> Result<Box<dyn Engine>> {
        if i == 1 {
            return Err(Error::Engine("no engine here".into()));
        }
        Ok(Box::new(Fake::new(setup, Script::new())?))
    };
    let gate = Recording {
        heard: Mutex::new(Vec::new()),
        fail: true,
        hold: Duration::ZERO,
    };
    let t = Instant::now();
    let e = run_inner(&cfg, &Silent, &open as &EngineFactory, Some(&gate)).unwrap_err();
    assert!(matches!(e, Error::Fleet { .. }), "{e}");
    assert_eq!(
        *gate.heard.lock().unwrap(),
        [Some("no engine here".to_string())]
    );
    assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());
}

#[test]
fn the_run_starts_when_the_gate_says() {
    let f = target();
    let cfg = config(&f);
    let open = |_: usize, setup: EngineSetup| -> Result<Box<dyn Engine>> {
        // A set-up longer than the run is never part of the measured window.
        std::thread::sleep(Duration::from_millis(600));
        Ok(Box::new(Fake::new(
            setup,
            Script::new().delay(Duration::from_millis(1)),
        )?))
    };
    let gate = Recording {
        heard: Mutex::new(Vec::new()),
        fail: false,
        hold: Duration::from_millis(100),
    };
    let t = Instant::now();
    let r = run_inner(&cfg, &Silent, &open as &EngineFactory, Some(&gate))
        .unwrap()
        .result;
    assert_eq!(*gate.heard.lock().unwrap(), [None]);
    assert!(
        t.elapsed() >= Duration::from_millis(1000),
        "{:?}",
        t.elapsed()
    );
    assert!((0.29..=0.3).contains(&r.seconds), "{}", r.seconds);
    // Reads of 1 ms each, one at a time per thread: a window that began before the set-up
    // ended would have ended before the first read.
    assert!(r.ios >= 50, "{} reads in 0.3 s", r.ios);
}
