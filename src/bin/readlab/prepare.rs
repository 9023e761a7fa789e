//! `readlab prepare`: fill a file or device with verifiable data and say how fast it went.

use crate::args::PrepareArgs;
use crate::progress::Progress;
use readlab::units::{Style, format_bytes};
use std::process::ExitCode;

pub fn run(a: &PrepareArgs) -> anyhow::Result<ExitCode> {
    a.out_json.check(&[&a.path])?;
    let progress = Progress::new(a.out_json.is_json());
    let p = match readlab::prepare::prepare(&a.to_config(), &progress) {
        Err(e @ readlab::Error::Interrupted { .. }) => {
            progress.finish();
            eprintln!("readlab: {e}");
            return Ok(crate::progress::interrupted_exit());
        }
        r => r?,
    };
    progress.finish();
    a.out_json.emit(&serde_json::json!({
        "schema": "readlab.prepare/1",
        "path": p.path,
        "size": p.size,
        "file_id": format!("{:016x}", p.file_id),
        "direct": p.direct,
        "seconds": p.seconds,
    }))?;
    if a.out_json.is_json() {
        return Ok(ExitCode::SUCCESS);
    }
    println!(
        "prepared {}: {} ({} B) in {:.2} s, {:.0} MiB/s, {}, file id {:016x}",
        p.path.display(),
        format_bytes(p.size as f64, Style::Table),
        p.size,
        p.seconds,
        p.size as f64 / p.seconds.max(1e-9) / (1u64 << 20) as f64,
        if p.direct {
            "O_DIRECT"
        } else {
            "buffered (no O_DIRECT here)"
        },
        p.file_id
    );
    Ok(ExitCode::SUCCESS)
}
