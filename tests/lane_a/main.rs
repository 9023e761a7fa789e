//! Lane A of `scripts/test`: end-to-end tests that measure no time, no CPU and no throughput,
//! so they may share the machine with the other lane. One test binary (each module was a
//! test file of its own) so that a build links it once, not once per file: run one module's
//! tests with `cargo test --release --test lane_a MODULE::`.

#[path = "../common/mod.rs"]
mod common;
#[path = "../nbd_common/mod.rs"]
mod nbd_common;

mod bench_vs_fio_report;
mod charts;
mod engine_options;
mod figures;
mod fio_job;
mod fio_json;
mod fio_words;
mod libaio;
mod module_graph;
mod nbd_bad_server;
mod no_harm;
mod no_harm_outputs;
mod report;
mod report_fleet;
mod report_formats;
mod run;
mod studies_cache_devices;
mod targets;
mod warn_once;

/// A file in a lane's directory that its `main.rs` does not name is never compiled, so its tests
/// would silently not run: every `tests/lane_*/X.rs` is `mod X;` of its lane, and every module
/// named has its file.
#[test]
fn every_file_of_a_lane_is_a_module_of_its_binary() {
    let tests = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    for lane in ["lane_a", "lane_b"] {
        let dir = tests.join(lane);
        let files: std::collections::BTreeSet<String> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter_map(|n| n.strip_suffix(".rs").map(str::to_string))
            .filter(|n| n != "main")
            .collect();
        let main = std::fs::read_to_string(dir.join("main.rs")).unwrap();
        let named: std::collections::BTreeSet<String> = main
            .lines()
            .filter_map(|l| l.strip_prefix("mod ")?.strip_suffix(';'))
            .filter(|m| !m.ends_with("common"))
            .map(str::to_string)
            .collect();
        assert_eq!(
            files, named,
            "tests/{lane}: files against `mod` lines of main.rs"
        );
    }
}
