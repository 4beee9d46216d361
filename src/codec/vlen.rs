//! Variable-length elements (`string`, `bytes`) through the fixed-size execution layer.
//!
//! The planner, the scatter kernels and the shard assembler move fixed-size elements. A
//! variable-length array runs through them unchanged as an array of 8-byte **handles**
//! (`u64`, native-endian): a chunk decoded by the innermost codec pipeline becomes one handle
//! per element, each naming an element stored once in the array's [`VlenPool`]; an encoded
//! chunk is built by looking its handles up. Handle 0 is always the fill value, so chunks
//! (and inner chunks) equal to the fill value are recognised and elided exactly as for
//! fixed-size types, and absent chunks read as the fill value.
//!
//! The `vlen-utf8` / `vlen-bytes` codecs (numcodecs' `VLenUTF8` / `VLenBytes` format: a
//! little-endian `u32` element count, then per element a `u32` length and its bytes) are
//! zarrs'; its decoder slices without checking lengths, so [`check_interleaved`] walks the
//! stored bytes first, checking every count and length against the bytes present, before
//! zarrs sees them. UTF-8 is checked for `string` arrays.

use std::sync::Mutex;

use super::CodecError;

/// Whether elements are UTF-8 text or arbitrary bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VlenKind {
    /// `string`: each element is valid UTF-8.
    Utf8,
    /// `bytes`: each element is any byte string.
    Bytes,
}

/// Appends `values` to `list` and returns their handles as a pool numbers them: 0 for a
/// value equal to `fill` (not appended), else its position in `list` + 1.
pub fn number_values<I, V>(fill: &[u8], values: I, list: &mut Vec<Vec<u8>>) -> Vec<u64>
where
    I: IntoIterator<Item = V>,
    V: AsRef<[u8]>,
{
    values
        .into_iter()
        .map(|v| match v.as_ref() {
            v if v == fill => 0,
            v => {
                list.push(v.to_vec());
                list.len() as u64
            }
        })
        .collect()
}

/// The elements behind the handles of one variable-length array.
///
/// Operations on the array's elements hold [`session`](Self::session) for their whole run
/// (one at a time per opened array), start with an empty pool, and empty it when done.
#[derive(Debug, Default)]
pub struct VlenPool {
    session: tokio::sync::Mutex<()>,
    values: Mutex<Vec<Vec<u8>>>,
    fill: Vec<u8>,
}

impl VlenPool {
    /// A pool whose handle 0 is `fill`.
    pub fn new(fill: Vec<u8>) -> Self {
        VlenPool {
            session: tokio::sync::Mutex::new(()),
            values: Mutex::new(Vec::new()),
            fill,
        }
    }

    /// The lock an operation holds while its handles are alive.
    pub fn session(&self) -> &tokio::sync::Mutex<()> {
        &self.session
    }

    /// The fill value's bytes.
    pub fn fill(&self) -> &[u8] {
        &self.fill
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Vec<u8>>> {
        self.values.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Stores `values` and returns their handles (0 for a value equal to the fill value).
    pub fn intern<I, V>(&self, values: I) -> Vec<u64>
    where
        I: IntoIterator<Item = V>,
        V: AsRef<[u8]>,
    {
        number_values(&self.fill, values, &mut self.lock())
    }

    /// Calls `f` with the bytes of each handle in `handles` (native-endian `u64`s).
    pub fn resolve(
        &self,
        handles: &[u8],
        mut f: impl FnMut(&[u8]),
        key: &str,
    ) -> Result<(), CodecError> {
        let pool = self.lock();
        for h in handles.chunks_exact(8) {
            let h = u64::from_ne_bytes(h.try_into().unwrap_or([0; 8]));
            if h == 0 {
                f(&self.fill);
                continue;
            }
            let v = usize::try_from(h - 1)
                .ok()
                .and_then(|i| pool.get(i))
                .ok_or_else(|| CodecError::InvalidVlen {
                    key: key.to_string(),
                    reason: format!("element handle {h} is not in the pool"),
                })?;
            f(v);
        }
        Ok(())
    }

    /// Replaces the stored elements by `values` (none equal to the fill value), moved in:
    /// their handles are their positions + 1, as [`intern`](Self::intern) would number
    /// them in an empty pool.
    pub fn load(&self, values: Vec<Vec<u8>>) {
        *self.lock() = values;
    }

    /// Takes every stored element out (the pool is empty afterwards).
    pub fn take(&self) -> Vec<Vec<u8>> {
        std::mem::take(&mut *self.lock())
    }

    /// Empties the pool.
    pub fn clear(&self) {
        self.lock().clear();
    }
}

/// Checks that `bytes` is a well-formed `vlen-utf8` / `vlen-bytes` encoding of exactly
/// `elements` elements: the count matches, every length lies within the bytes present
/// (checked before anything is sliced or allocated), nothing follows the last element,
/// and for [`VlenKind::Utf8`] every element is valid UTF-8. `key` names the chunk.
pub fn check_interleaved(
    bytes: &[u8],
    elements: u64,
    kind: VlenKind,
    key: &str,
) -> Result<(), CodecError> {
    let bad = |reason: String| CodecError::InvalidVlen {
        key: key.to_string(),
        reason,
    };
    let word = |at: usize| -> Option<u32> {
        let b = bytes.get(at..at.checked_add(4)?)?;
        Some(u32::from_le_bytes(b.try_into().ok()?))
    };
    let count = word(0).ok_or_else(|| {
        bad(format!(
            "{} bytes: too short for the element count",
            bytes.len()
        ))
    })?;
    if u64::from(count) != elements {
        return Err(bad(format!(
            "the header counts {count} elements, the chunk has {elements}"
        )));
    }
    // each element takes at least its 4-byte length: a count the bytes cannot hold is
    // refused before the walk
    let least = u64::from(count).saturating_mul(4).saturating_add(4);
    if least > bytes.len() as u64 {
        return Err(bad(format!(
            "{count} elements need at least {least} bytes, the chunk has {}",
            bytes.len()
        )));
    }
    let mut at = 4usize;
    for i in 0..count {
        let len =
            word(at).ok_or_else(|| bad(format!("element {i}: its length lies past the end")))?;
        at += 4;
        let end = at
            .checked_add(len as usize)
            .filter(|&e| e <= bytes.len())
            .ok_or_else(|| {
                bad(format!(
                    "element {i}: {len} bytes from offset {at} lie past the end ({} bytes)",
                    bytes.len()
                ))
            })?;
        if kind == VlenKind::Utf8 && std::str::from_utf8(&bytes[at..end]).is_err() {
            return Err(bad(format!("element {i} is not valid UTF-8")));
        }
        at = end;
    }
    if at != bytes.len() {
        return Err(bad(format!(
            "{} bytes follow the last element",
            bytes.len() - at
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn encode(values: &[&[u8]]) -> Vec<u8> {
        let mut out = (values.len() as u32).to_le_bytes().to_vec();
        for v in values {
            out.extend((v.len() as u32).to_le_bytes());
            out.extend(*v);
        }
        out
    }

    #[test]
    fn well_formed_encodings_pass_and_hostile_ones_are_typed_errors() {
        let ok = encode(&[b"a", b"", "h\u{e9}llo".as_bytes()]);
        check_interleaved(&ok, 3, VlenKind::Utf8, "c/0").unwrap();
        let invalid = |bytes: &[u8], n: u64, kind: VlenKind| {
            let e = check_interleaved(bytes, n, kind, "c/0").unwrap_err();
            assert!(
                matches!(&e, CodecError::InvalidVlen { key, .. } if key == "c/0"),
                "{e}"
            );
        };
        invalid(&ok[..ok.len() - 1], 3, VlenKind::Bytes); // truncated
        invalid(&ok, 2, VlenKind::Bytes); // wrong count
        invalid(&[], 0, VlenKind::Bytes); // no header
        let mut past = encode(&[b"ab"]);
        past[4..8].copy_from_slice(&u32::MAX.to_le_bytes());
        invalid(&past, 1, VlenKind::Bytes);
        let mut huge = u32::MAX.to_le_bytes().to_vec();
        huge.extend([0; 8]);
        invalid(&huge, u64::from(u32::MAX), VlenKind::Bytes);
        invalid(&encode(&[b"\xff\xfe"]), 1, VlenKind::Utf8);
        check_interleaved(&encode(&[b"\xff\xfe"]), 1, VlenKind::Bytes, "c/0").unwrap();
        let mut trailing = encode(&[b"a"]);
        trailing.push(0);
        invalid(&trailing, 1, VlenKind::Bytes);
    }

    #[test]
    fn handles_name_interned_values_and_zero_is_the_fill() {
        let pool = VlenPool::new(b"".to_vec());
        let h = pool.intern([&b"x"[..], b"", b"yz"]);
        assert_eq!(h, vec![1, 0, 2]);
        let bytes: Vec<u8> = h.iter().flat_map(|v| v.to_ne_bytes()).collect();
        let mut got = Vec::new();
        pool.resolve(&bytes, |v| got.push(v.to_vec()), "k").unwrap();
        assert_eq!(got, vec![b"x".to_vec(), vec![], b"yz".to_vec()]);
        assert!(pool.resolve(&9u64.to_ne_bytes(), |_| {}, "k").is_err());
    }
}
