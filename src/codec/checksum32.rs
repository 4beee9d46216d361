//! numcodecs' 32-bit checksum codecs that zarrs 0.23 lacks: `crc32` (zlib's CRC-32) and
//! `jenkins_lookup3` (Bob Jenkins' `hashlittle`, as HDF5 uses it). Zarr v2 ids `crc32` /
//! `jenkins_lookup3`, Zarr v3 `numcodecs.crc32` / `numcodecs.jenkins_lookup3` as
//! zarr-python 3 writes them; zarrs bytes→bytes codecs registered with zarrs' codec plugins.
//!
//! The streams are numcodecs' (`numcodecs/checksum32.py`): the data with a 4-byte
//! little-endian checksum of it, before the data for `crc32` (its `location`, `"start"` by
//! default, or `"end"`), after it for `jenkins_lookup3` (seeded with `initval`). A decode
//! checks the checksum (unless checksums are not verified, see
//! [`crate::codec::CodecPipeline::with_verify_checksums`]) and never produces more bytes
//! than it was given.

use std::borrow::Cow;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use zarrs::array::codec::api::{
    BytesToBytesCodecTraits, Codec, CodecError, CodecOptions, CodecTraitsV2, CodecTraitsV3,
    RecommendedConcurrency,
};
use zarrs::array::{ArrayBytesRaw, BytesRepresentation};
use zarrs::metadata::Configuration;
use zarrs::metadata::v2::MetadataV2;
use zarrs::metadata::v3::MetadataV3;
use zarrs::plugin::PluginCreateError;

/// Bytes of a checksum.
const CHECKSUM: usize = 4;

/// Where a checksum sits in the stored bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ChecksumLocation {
    /// Before the data (numcodecs' default for `crc32`).
    Start,
    /// After the data.
    End,
}

/// The `crc32` codec's configuration, as numcodecs writes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Crc32Configuration {
    /// Where the checksum is stored; `None` (as numcodecs writes its default) is `start`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub location: Option<ChecksumLocation>,
}

/// The `jenkins_lookup3` codec's configuration, as numcodecs writes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JenkinsLookup3Configuration {
    /// The hash's seed (numcodecs' default 0), kept as written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub initval: Option<u32>,
    /// Bytes hashed before the data. numcodecs takes them as a Python buffer, which JSON
    /// cannot hold: only `null` (none) is accepted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefix: Option<NoPrefix>,
}

/// A `prefix` of `null` (the only one JSON metadata can state, see
/// [`JenkinsLookup3Configuration::prefix`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NoPrefix;

impl Serialize for NoPrefix {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_none()
    }
}

impl<'de> Deserialize<'de> for NoPrefix {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match serde_json::Value::deserialize(d)? {
            serde_json::Value::Null => Ok(NoPrefix),
            other => Err(serde::de::Error::custom(format!(
                "a prefix ({other}) is not supported: only null"
            ))),
        }
    }
}

/// numcodecs' `crc32` checksum as a zarrs bytes→bytes codec.
#[derive(Debug, Clone)]
pub struct Crc32Codec {
    configuration: Crc32Configuration,
}

/// numcodecs' `jenkins_lookup3` checksum as a zarrs bytes→bytes codec.
#[derive(Debug, Clone)]
pub struct JenkinsLookup3Codec {
    configuration: JenkinsLookup3Configuration,
}

register_codec!(Crc32Codec, v3: "numcodecs.crc32", v2: "crc32");
register_codec!(JenkinsLookup3Codec, v3: "numcodecs.jenkins_lookup3", v2: "jenkins_lookup3");

impl Crc32Codec {
    /// The codec with `configuration`.
    pub fn new(configuration: Crc32Configuration) -> Self {
        Crc32Codec { configuration }
    }
}

impl JenkinsLookup3Codec {
    /// The codec with `configuration`.
    pub fn new(configuration: JenkinsLookup3Configuration) -> Self {
        JenkinsLookup3Codec { configuration }
    }
}

/// Bob Jenkins' `hashlittle` (lookup3.c, May 2006) of `data` seeded with `initval`: the
/// checksum HDF5 (`H5_checksum_lookup3`) and numcodecs' `jenkins_lookup3` compute. Written
/// here because no maintained crate provides this variant; checked against numcodecs'
/// results and lookup3.c's published values (tests below).
pub fn jenkins_lookup3(data: &[u8], initval: u32) -> u32 {
    fn mix(a: &mut u32, b: &mut u32, c: &mut u32) {
        *a = a.wrapping_sub(*c) ^ c.rotate_left(4);
        *c = c.wrapping_add(*b);
        *b = b.wrapping_sub(*a) ^ a.rotate_left(6);
        *a = a.wrapping_add(*c);
        *c = c.wrapping_sub(*b) ^ b.rotate_left(8);
        *b = b.wrapping_add(*a);
        *a = a.wrapping_sub(*c) ^ c.rotate_left(16);
        *c = c.wrapping_add(*b);
        *b = b.wrapping_sub(*a) ^ a.rotate_left(19);
        *a = a.wrapping_add(*c);
        *c = c.wrapping_sub(*b) ^ b.rotate_left(4);
        *b = b.wrapping_add(*a);
    }
    fn finish(mut a: u32, mut b: u32, mut c: u32) -> u32 {
        c = (c ^ b).wrapping_sub(b.rotate_left(14));
        a = (a ^ c).wrapping_sub(c.rotate_left(11));
        b = (b ^ a).wrapping_sub(a.rotate_left(25));
        c = (c ^ b).wrapping_sub(b.rotate_left(16));
        a = (a ^ c).wrapping_sub(c.rotate_left(4));
        b = (b ^ a).wrapping_sub(a.rotate_left(14));
        (c ^ b).wrapping_sub(b.rotate_left(24))
    }
    let word = |b: &[u8]| u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
    // the length is taken modulo 2^32, as lookup3.c's `(uint32_t)length`
    let start = 0xdead_beef_u32
        .wrapping_add(data.len() as u32)
        .wrapping_add(initval);
    let (mut a, mut b, mut c) = (start, start, start);
    let mut rest = data;
    while rest.len() > 12 {
        a = a.wrapping_add(word(&rest[0..4]));
        b = b.wrapping_add(word(&rest[4..8]));
        c = c.wrapping_add(word(&rest[8..12]));
        mix(&mut a, &mut b, &mut c);
        rest = &rest[12..];
    }
    if rest.is_empty() {
        return c;
    }
    // the last 1..=12 bytes, zero-padded (lookup3.c adds them byte by byte)
    let mut tail = [0u8; 12];
    tail[..rest.len()].copy_from_slice(rest);
    a = a.wrapping_add(word(&tail[0..4]));
    b = b.wrapping_add(word(&tail[4..8]));
    c = c.wrapping_add(word(&tail[8..12]));
    finish(a, b, c)
}

/// zlib's CRC-32 of `data` (what Python's `zlib.crc32` returns).
pub fn crc32(data: &[u8]) -> u32 {
    crc32fast::hash(data)
}

/// `data` with `checksum` (little-endian) at `location`.
fn with_checksum(data: &[u8], checksum: u32, location: ChecksumLocation) -> Vec<u8> {
    let mut out = Vec::with_capacity(data.len() + CHECKSUM);
    match location {
        ChecksumLocation::Start => {
            out.extend_from_slice(&checksum.to_le_bytes());
            out.extend_from_slice(data);
        }
        ChecksumLocation::End => {
            out.extend_from_slice(data);
            out.extend_from_slice(&checksum.to_le_bytes());
        }
    }
    out
}

/// The data of `encoded` without its checksum at `location`, after checking that checksum
/// with `checksum` when `verify`.
fn without_checksum<'a>(
    encoded: ArrayBytesRaw<'a>,
    location: ChecksumLocation,
    name: &str,
    verify: bool,
    checksum: impl Fn(&[u8]) -> u32,
) -> Result<ArrayBytesRaw<'a>, CodecError> {
    if encoded.len() < CHECKSUM {
        return Err(CodecError::Other(format!(
            "{name}: {} bytes are too short to hold a 4-byte checksum",
            encoded.len()
        )));
    }
    let n = encoded.len();
    let (data, stored) = match location {
        ChecksumLocation::Start => (CHECKSUM..n, 0..CHECKSUM),
        ChecksumLocation::End => (0..n - CHECKSUM, n - CHECKSUM..n),
    };
    let stored = u32::from_le_bytes(encoded[stored].try_into().expect("4 bytes"));
    if verify {
        let computed = checksum(&encoded[data.clone()]);
        if computed != stored {
            return Err(CodecError::Other(format!(
                "{name}: stored checksum {stored:#010x}, computed {computed:#010x}: the chunk is corrupt"
            )));
        }
    }
    Ok(match encoded {
        Cow::Borrowed(b) => Cow::Borrowed(&b[data]),
        Cow::Owned(mut v) => {
            v.truncate(data.end);
            v.drain(..data.start);
            Cow::Owned(v)
        }
    })
}

/// What distinguishes the two checksum codecs; the zarrs traits are implemented for both
/// by `checksum_codec!`.
trait Checksum32 {
    /// numcodecs' id, for messages.
    const NAME: &'static str;
    /// The checksum of `data`.
    fn checksum(&self, data: &[u8]) -> u32;
    /// Where it is stored.
    fn location(&self) -> ChecksumLocation;
    /// The configuration as JSON.
    fn configuration_json(&self) -> serde_json::Value;
}

impl Checksum32 for Crc32Codec {
    const NAME: &'static str = "crc32";
    fn checksum(&self, data: &[u8]) -> u32 {
        crc32(data)
    }
    fn location(&self) -> ChecksumLocation {
        self.configuration
            .location
            .unwrap_or(ChecksumLocation::Start)
    }
    fn configuration_json(&self) -> serde_json::Value {
        serde_json::to_value(self.configuration).unwrap_or_default()
    }
}

impl Checksum32 for JenkinsLookup3Codec {
    const NAME: &'static str = "jenkins_lookup3";
    fn checksum(&self, data: &[u8]) -> u32 {
        jenkins_lookup3(data, self.configuration.initval.unwrap_or(0))
    }
    fn location(&self) -> ChecksumLocation {
        ChecksumLocation::End
    }
    fn configuration_json(&self) -> serde_json::Value {
        serde_json::to_value(self.configuration).unwrap_or_default()
    }
}

/// The zarrs codec traits of a [`Checksum32`] codec `$codec` with configuration type
/// `$configuration` (which has a `Default`: numcodecs' defaults).
macro_rules! checksum_codec {
    ($codec:ident, $configuration:ty) => {
        impl CodecTraitsV3 for $codec {
            fn create(metadata: &MetadataV3) -> Result<Codec, PluginCreateError> {
                let configuration = match metadata.configuration() {
                    Some(c) => super::numcodecs_configuration::<$configuration>(
                        c,
                        <$codec as Checksum32>::NAME,
                    )?,
                    None => <$configuration>::default(),
                };
                Ok(Codec::BytesToBytes(Arc::new($codec::new(configuration))))
            }
        }

        impl CodecTraitsV2 for $codec {
            fn create(metadata: &MetadataV2) -> Result<Codec, PluginCreateError> {
                let configuration = super::numcodecs_configuration::<$configuration>(
                    metadata.configuration(),
                    <$codec as Checksum32>::NAME,
                )?;
                Ok(Codec::BytesToBytes(Arc::new($codec::new(configuration))))
            }
        }

        whole_chunk_codec!($codec, |c| match c.configuration_json() {
            serde_json::Value::Object(map) => Some(Configuration::from(map)),
            _ => None,
        });

        impl BytesToBytesCodecTraits for $codec {
            fn into_dyn(self: Arc<Self>) -> Arc<dyn BytesToBytesCodecTraits> {
                self as Arc<dyn BytesToBytesCodecTraits>
            }

            fn recommended_concurrency(
                &self,
                _decoded_representation: &BytesRepresentation,
            ) -> Result<RecommendedConcurrency, CodecError> {
                Ok(RecommendedConcurrency::new_maximum(1))
            }

            fn encoded_representation(
                &self,
                decoded_representation: &BytesRepresentation,
            ) -> BytesRepresentation {
                match *decoded_representation {
                    BytesRepresentation::FixedSize(n) => {
                        BytesRepresentation::FixedSize(n.saturating_add(CHECKSUM as u64))
                    }
                    BytesRepresentation::BoundedSize(n) => {
                        BytesRepresentation::BoundedSize(n.saturating_add(CHECKSUM as u64))
                    }
                    BytesRepresentation::UnboundedSize => BytesRepresentation::UnboundedSize,
                }
            }

            fn encode<'a>(
                &self,
                decoded_value: ArrayBytesRaw<'a>,
                _options: &CodecOptions,
            ) -> Result<ArrayBytesRaw<'a>, CodecError> {
                let checksum = self.checksum(&decoded_value);
                Ok(Cow::Owned(with_checksum(
                    &decoded_value,
                    checksum,
                    self.location(),
                )))
            }

            fn decode<'a>(
                &self,
                encoded_value: ArrayBytesRaw<'a>,
                _decoded_representation: &BytesRepresentation,
                options: &CodecOptions,
            ) -> Result<ArrayBytesRaw<'a>, CodecError> {
                without_checksum(
                    encoded_value,
                    self.location(),
                    <$codec as Checksum32>::NAME,
                    options.validate_checksums(),
                    |d| self.checksum(d),
                )
            }
        }
    };
}

checksum_codec!(Crc32Codec, Crc32Configuration);
checksum_codec!(JenkinsLookup3Codec, JenkinsLookup3Configuration);

#[cfg(test)]
mod tests {
    use super::*;
    use zarrs::array::codec::api::CodecMetadataOptions;
    use zarrs::plugin::ZarrVersion;

    #[test]
    fn lookup3_matches_its_published_values() {
        // lookup3.c's driver5: hashlittle("", 0), and the "Four score" sentence
        assert_eq!(jenkins_lookup3(b"", 0), 0xdeadbeef);
        assert_eq!(jenkins_lookup3(b"", 0xdeadbeef), 0xbd5b7dde);
        let four = b"Four score and seven years ago";
        assert_eq!(jenkins_lookup3(four, 0), 0x17770551);
        assert_eq!(jenkins_lookup3(four, 1), 0xcd628161);
    }

    /// numcodecs' own checksums (`test-data/generate.py`, `gen_checksum_vectors`): every
    /// length from 0 to 40 (each tail of lookup3's 12-byte blocks), longer ones and seeds.
    #[test]
    fn checksums_match_numcodecs() {
        let doc: serde_json::Value = serde_json::from_str(include_str!(
            "../../test-data/fixtures/numcodecs-checksum-vectors.json"
        ))
        .unwrap();
        let vectors = doc["vectors"].as_array().unwrap();
        assert!(vectors.len() > 40, "{}", vectors.len());
        for v in vectors {
            let data: Vec<u8> = (0..v["length"].as_u64().unwrap())
                .map(|i| (i * 7 + 3) as u8)
                .collect();
            let initval = v["initval"].as_u64().unwrap() as u32;
            assert_eq!(
                u64::from(jenkins_lookup3(&data, initval)),
                v["jenkins_lookup3"].as_u64().unwrap(),
                "{v}"
            );
            assert_eq!(u64::from(crc32(&data)), v["crc32"].as_u64().unwrap(), "{v}");
        }
    }

    fn round_trip(codec: &dyn BytesToBytesCodecTraits, data: &[u8]) -> Vec<u8> {
        let enc = codec
            .encode(Cow::Borrowed(data), &CodecOptions::default())
            .unwrap()
            .into_owned();
        assert_eq!(enc.len(), data.len() + 4);
        let rep = BytesRepresentation::FixedSize(data.len() as u64);
        let dec = codec
            .decode(Cow::Owned(enc.clone()), &rep, &CodecOptions::default())
            .unwrap();
        assert_eq!(dec.as_ref(), data);
        let dec = codec
            .decode(Cow::Borrowed(&enc), &rep, &CodecOptions::default())
            .unwrap();
        assert_eq!(dec.as_ref(), data);
        enc
    }

    #[test]
    fn checksums_sit_where_numcodecs_puts_them_and_corruption_is_an_error() {
        let data: Vec<u8> = (0..100u8).collect();
        let start = round_trip(&Crc32Codec::new(Crc32Configuration::default()), &data);
        assert_eq!(start[..4], crc32(&data).to_le_bytes());
        let end = Crc32Codec::new(Crc32Configuration {
            location: Some(ChecksumLocation::End),
        });
        let enc = round_trip(&end, &data);
        assert_eq!(enc[100..], crc32(&data).to_le_bytes());
        let jenkins = JenkinsLookup3Codec::new(JenkinsLookup3Configuration {
            initval: Some(9),
            prefix: None,
        });
        let enc = round_trip(&jenkins, &data);
        assert_eq!(enc[100..], jenkins_lookup3(&data, 9).to_le_bytes());
        round_trip(&jenkins, &[]);
        let rep = BytesRepresentation::FixedSize(100);
        let mut bad = enc.clone();
        bad[5] ^= 1;
        let e = jenkins
            .decode(Cow::Owned(bad.clone()), &rep, &CodecOptions::default())
            .unwrap_err();
        assert!(e.to_string().contains("corrupt"), "{e}");
        // unverified, the data comes back as stored
        let mut unchecked = CodecOptions::default();
        unchecked.set_validate_checksums(false);
        assert_eq!(
            jenkins
                .decode(Cow::Owned(bad), &rep, &unchecked)
                .unwrap()
                .len(),
            100
        );
        for short in [&[][..], &[1, 2, 3][..]] {
            assert!(
                jenkins
                    .decode(Cow::Borrowed(short), &rep, &CodecOptions::default())
                    .is_err()
            );
        }
    }

    #[test]
    fn configurations_are_numcodecs_and_kept_as_written() {
        let make = |json: &str| -> Result<Codec, PluginCreateError> {
            let m: MetadataV3 = serde_json::from_str(json).unwrap();
            if m.name().ends_with("crc32") {
                <Crc32Codec as CodecTraitsV3>::create(&m)
            } else {
                <JenkinsLookup3Codec as CodecTraitsV3>::create(&m)
            }
        };
        let config = |c: Codec| {
            let Codec::BytesToBytes(c) = c else {
                panic!("not bytes-to-bytes")
            };
            serde_json::to_value(
                c.configuration(ZarrVersion::V3, &CodecMetadataOptions::default())
                    .unwrap(),
            )
            .unwrap()
        };
        for (json, want) in [
            (r#"{"name": "numcodecs.crc32", "configuration": {}}"#, "{}"),
            (
                r#"{"name": "numcodecs.crc32", "configuration": {"location": "end"}}"#,
                r#"{"location": "end"}"#,
            ),
            (r#"{"name": "numcodecs.jenkins_lookup3"}"#, "{}"),
            (
                r#"{"name": "numcodecs.jenkins_lookup3", "configuration": {"initval": 5, "prefix": null}}"#,
                r#"{"initval": 5}"#,
            ),
        ] {
            let want: serde_json::Value = serde_json::from_str(want).unwrap();
            assert_eq!(config(make(json).unwrap()), want, "{json}");
        }
        for bad in [
            r#"{"name": "numcodecs.crc32", "configuration": {"location": "middle"}}"#,
            r#"{"name": "numcodecs.jenkins_lookup3", "configuration": {"prefix": "ab"}}"#,
            r#"{"name": "numcodecs.jenkins_lookup3", "configuration": {"initval": -1}}"#,
            r#"{"name": "numcodecs.jenkins_lookup3", "configuration": {"initval": 4294967296}}"#,
        ] {
            assert!(make(bad).is_err(), "{bad}");
        }
        let v2: MetadataV2 =
            serde_json::from_str(r#"{"id": "jenkins_lookup3", "initval": 0, "prefix": null}"#)
                .unwrap();
        assert!(<JenkinsLookup3Codec as CodecTraitsV2>::create(&v2).is_ok());
    }
}
