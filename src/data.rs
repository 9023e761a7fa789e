//! The verifiable data format: every 4 KiB sector names its file and offset and carries a checksum,
//! so any read anywhere can be checked without keeping a copy.
//!
//! Sector layout (little-endian): magic[8] | file id u64 | sector offset u64 | xxh3(filler) u64 | filler.
//! The filler is incompressible pseudo-random data computed from (file id, offset, word index), so any
//! byte of any sector can be regenerated on its own.

use serde::{Deserialize, Serialize};
use xxhash_rust::xxh3::xxh3_64_with_seed;

pub const SECTOR: usize = 4096;
pub const MAGIC: [u8; 8] = *b"RDLAB01\0";
const HEADER: usize = 32;

/// SplitMix64's finaliser: a fast, well-mixed 64-bit hash.
fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Write the full expected contents of the sector at byte `offset` of file `id` into `out`.
pub fn fill_sector(id: u64, offset: u64, out: &mut [u8]) {
    debug_assert_eq!(out.len(), SECTOR);
    let key = mix64(id ^ mix64(offset.wrapping_add(0x9e37_79b9_7f4a_7c15)));
    for (j, w) in out[HEADER..].chunks_exact_mut(8).enumerate() {
        let v = mix64(key.wrapping_add((j as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15)));
        w.copy_from_slice(&v.to_le_bytes());
    }
    let sum = xxh3_64_with_seed(&out[HEADER..], id ^ offset);
    out[0..8].copy_from_slice(&MAGIC);
    out[8..16].copy_from_slice(&id.to_le_bytes());
    out[16..24].copy_from_slice(&offset.to_le_bytes());
    out[24..32].copy_from_slice(&sum.to_le_bytes());
}

/// Fill a buffer that starts at sector-aligned byte `offset` with consecutive sectors.
pub fn fill(id: u64, offset: u64, buf: &mut [u8]) {
    for (i, s) in buf.chunks_exact_mut(SECTOR).enumerate() {
        fill_sector(id, offset + (i * SECTOR) as u64, s);
    }
}

/// If `sector`, read at byte `offset`, has a readlab header naming that offset, its file id.
/// Only the header is checked: damage elsewhere is for `verify` to report, with its offset.
pub fn sector_file_id(sector: &[u8], offset: u64) -> Option<u64> {
    if sector.len() < SECTOR || sector[0..8] != MAGIC || sector[16..24] != offset.to_le_bytes() {
        return None;
    }
    Some(u64::from_le_bytes(sector[8..16].try_into().unwrap()))
}

/// A byte that differs from what `readlab prepare` wrote.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq, schemars::JsonSchema)]
pub struct Mismatch {
    /// Absolute byte offset in the target of the first differing byte.
    pub offset: u64,
    /// Offset of the 4 KiB sector holding it.
    pub sector: u64,
    pub expected: u8,
    pub found: u8,
}

/// Check `data`, read from byte `offset` of the target prepared with file id `id`.
/// Returns the first differing byte, if any.
pub fn verify(id: u64, offset: u64, data: &[u8]) -> Option<Mismatch> {
    let mut pos = 0usize;
    let mut expected = [0u8; SECTOR];
    while pos < data.len() {
        let abs = offset + pos as u64;
        let sector = abs - abs % SECTOR as u64;
        let in_sector = (abs - sector) as usize;
        let n = (SECTOR - in_sector).min(data.len() - pos);
        let got = &data[pos..pos + n];
        let whole = in_sector == 0 && n == SECTOR;
        let ok_fast = whole
            && got[0..8] == MAGIC
            && got[8..16] == id.to_le_bytes()
            && got[16..24] == sector.to_le_bytes()
            && xxh3_64_with_seed(&got[HEADER..], id ^ sector).to_le_bytes() == got[24..32];
        if !ok_fast {
            fill_sector(id, sector, &mut expected);
            let want = &expected[in_sector..in_sector + n];
            if let Some(i) = (0..n).find(|&i| got[i] != want[i]) {
                return Some(Mismatch {
                    offset: abs + i as u64,
                    sector,
                    expected: want[i],
                    found: got[i],
                });
            }
        }
        pos += n;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prepared_data_verifies() {
        let mut buf = vec![0u8; 4 * SECTOR];
        fill(42, 8192, &mut buf);
        assert_eq!(verify(42, 8192, &buf), None);
        assert_eq!(sector_file_id(&buf[SECTOR..], 8192 + 4096), Some(42));
        assert_eq!(sector_file_id(&buf[SECTOR..], 8192), None);
        // Unaligned, partial reads verify too.
        assert_eq!(verify(42, 8192 + 100, &buf[100..5000]), None);
    }

    #[test]
    fn any_flipped_byte_is_found_with_its_offset() {
        let mut buf = vec![0u8; 2 * SECTOR];
        fill(7, 0, &mut buf);
        for pos in [0usize, 9, 17, 25, 31, 32, 4095, 4096, 8191] {
            let mut b = buf.clone();
            b[pos] ^= 0x01;
            let m = verify(7, 0, &b).expect("flip must be detected");
            assert_eq!(m.offset, pos as u64);
            assert_eq!(m.sector, (pos / SECTOR * SECTOR) as u64);
        }
    }

    #[test]
    fn wrong_file_or_offset_is_a_mismatch() {
        let mut buf = vec![0u8; SECTOR];
        fill(1, 0, &mut buf);
        assert!(verify(2, 0, &buf).is_some());
        assert!(verify(1, 4096, &buf).is_some());
    }

    #[test]
    fn filler_is_incompressible() {
        let mut buf = vec![0u8; SECTOR];
        fill_sector(3, 0, &mut buf);
        let mut counts = [0usize; 256];
        buf[HEADER..].iter().for_each(|&b| counts[b as usize] += 1);
        // Roughly uniform bytes: no value dominates.
        assert!(counts.iter().all(|&c| c < 60), "{counts:?}");
    }
}
