//! The guest harness's own promises: a scenario boots, loads its modules, reads an NVMe drive and
//! brings its files back; a missing module, a kernel panic and a scenario past its limit each fail
//! with their reason instead of hanging.
mod guest_common;

#[test]
fn a_guest_boots_reads_nvme_and_brings_its_results_back() {
    let g = guest_common::run("smoke");
    g.assert_ok();
    let run = g.json("run.json");
    let verified = &run["result"]["verify"];
    assert!(
        g.log.contains("0 mismatches"),
        "no verification line\n{}",
        g.context()
    );
    assert!(
        !verified.is_null() || g.log.contains("reads checked"),
        "{}",
        g.context()
    );
    assert!(
        g.text("modules.txt").contains("null_blk"),
        "null_blk not loaded\n{}",
        g.context()
    );
}

#[test]
fn a_missing_module_a_panic_and_a_timeout_fail_with_their_reason() {
    let g = guest_common::run("selftest-missing-module");
    assert_ne!(g.status, 0);
    assert!(
        g.harness.contains("needs module no_such_module"),
        "{}",
        g.context()
    );

    let g = guest_common::run("selftest-panic");
    assert_ne!(g.status, 0);
    assert!(g.harness.contains("panicked"), "{}", g.context());

    let t = std::time::Instant::now();
    let g = guest_common::run("selftest-timeout");
    assert_ne!(g.status, 0);
    assert!(g.harness.contains("past its limit"), "{}", g.context());
    assert!(
        t.elapsed().as_secs() < 120,
        "a 10 s limit took {:?}",
        t.elapsed()
    );
}
