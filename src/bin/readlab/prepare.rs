//! `readlab prepare`: fill a file or device with verifiable data and say how fast it went.

use crate::args::{JsonOut, size};
use crate::progress::Progress;
use clap::Args;
use readlab::prepare::PrepareConfig;
use readlab::units::{Style, format_bytes};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Args, Debug)]
pub struct PrepareArgs {
    /// File or block device to fill.
    pub path: PathBuf,
    /// Bytes to write (e.g. 256M, 1G); default for a block device: all of it.
    #[arg(long, allow_hyphen_values = true, value_parser = size)]
    pub size: Option<u64>,
    /// Destroy data readlab did not write (any block device, any foreign file).
    #[arg(long)]
    pub overwrite: bool,
    #[command(flatten)]
    pub out_json: JsonOut,
}

impl PrepareArgs {
    pub fn to_config(&self) -> PrepareConfig {
        PrepareConfig {
            path: self.path.clone(),
            size: self.size,
            overwrite: self.overwrite,
        }
    }
}

pub fn run(a: &PrepareArgs) -> anyhow::Result<ExitCode> {
    a.out_json.check(&[&a.path])?;
    let progress = Progress::new(a.out_json.is_json());
    let p = match readlab::prepare::prepare(&a.to_config(), &progress) {
        Err(e @ readlab::Error::Interrupted { .. }) => {
            progress.finish();
            errln!("readlab: {e}");
            return Ok(crate::progress::interrupted_exit());
        }
        r => r?,
    };
    progress.finish();
    if let Some(asked) = a.size.filter(|&n| n != p.size) {
        errln!(
            "readlab: note: --size {asked} B rounded up to {} B, whole 4 KiB sectors (what readlab's data pattern and verification are made of)",
            p.size
        );
    }
    a.out_json
        .emit(&serde_json::to_value(readlab::schema::PrepareJson::of(&p))?)?;
    if a.out_json.is_json() {
        return Ok(ExitCode::SUCCESS);
    }
    outln!(
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
