//! Every value Strata stores in LMDB ends in a checksum of its key and its bytes, checked on
//! every read: LMDB checks nothing of what its pages hold, so without it a flipped byte in a
//! record is read back as data. 32 bits of xxh3: a damaged record passes unnoticed once in
//! four billion.

use xxhash_rust::xxh3::{xxh3_64, xxh3_64_with_seed};

/// Bytes a checksum adds to each value.
pub const SEAL_BYTES: usize = 4;

fn checksum(key: &[u8], value: &[u8]) -> [u8; SEAL_BYTES] {
    let sum = xxh3_64_with_seed(value, xxh3_64(key));
    (sum as u32).to_le_bytes()
}

/// `value` followed by its checksum under `key`, into `out`.
pub fn seal_into(out: &mut Vec<u8>, key: &[u8], value: &[u8]) {
    out.clear();
    out.reserve(value.len() + SEAL_BYTES);
    out.extend_from_slice(value);
    out.extend_from_slice(&checksum(key, value));
}

/// `value` followed by its checksum under `key`.
pub fn sealed(key: &[u8], value: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    seal_into(&mut out, key, value);
    out
}

/// What was wrong with a stored value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Unsealed {
    #[error("{0} bytes, too short to hold its checksum")]
    Short(usize),
    #[error("its checksum does not match its key and bytes")]
    Mismatch,
}

/// The value stored under `key`, once its checksum holds.
pub fn unseal<'v>(key: &[u8], stored: &'v [u8]) -> Result<&'v [u8], Unsealed> {
    let Some(at) = stored.len().checked_sub(SEAL_BYTES) else {
        return Err(Unsealed::Short(stored.len()));
    };
    let (value, sum) = stored.split_at(at);
    if sum == checksum(key, value) {
        Ok(value)
    } else {
        Err(Unsealed::Mismatch)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_reads_back_only_under_its_own_key_and_bytes() {
        let stored = sealed(b"INC-1", b"summary");
        assert_eq!(unseal(b"INC-1", &stored), Ok(&b"summary"[..]));
        assert_eq!(unseal(b"INC-2", &stored), Err(Unsealed::Mismatch));
        let mut flipped = stored.clone();
        flipped[2] ^= 0x10;
        assert_eq!(unseal(b"INC-1", &flipped), Err(Unsealed::Mismatch));
        assert_eq!(unseal(b"INC-1", &stored[..3]), Err(Unsealed::Short(3)));
        assert_eq!(unseal(b"k", &sealed(b"k", b"")), Ok(&b""[..]));
    }
}
