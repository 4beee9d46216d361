//! What zarrflow's own zarrs codec plugins (`lz4`, `lzma`, `crc32`, `delta`,
//! `scale_offset`, ...) share: registration with zarrs' codec plugins under their v3 name
//! and v2 id, and the zarrs traits of a codec that works on whole chunks, one thread per
//! chunk. Each codec module then holds only what is its own: configuration, encode, decode
//! and bounds.

use serde::Serialize;
use zarrs::metadata::Configuration;

/// Registers `$codec` with zarrs' codec plugins (so chains and v2 → v3 conversions find
/// it) under its Zarr v3 name and, when given, its Zarr v2 (numcodecs) id.
macro_rules! register_codec {
    ($codec:ident, v3: $v3:literal $(, v2: $v2:literal)?) => {
        zarrs::plugin::impl_extension_aliases!($codec, v3: $v3, [] $(, v2: $v2, [])?);

        inventory::submit! {
            zarrs::array::codec::api::CodecPluginV3::new::<$codec>()
        }

        $(
            const _: &str = $v2;
            inventory::submit! {
                zarrs::array::codec::api::CodecPluginV2::new::<$codec>()
            }
        )?
    };
}

/// zarrs' `CodecTraitsV3` / `CodecTraitsV2` of a numcodecs array→array `$codec` built by
/// `$codec::new` from its `$configuration` (numcodecs' `$id`), which Zarr v3 must state.
macro_rules! numcodecs_array_codec_create {
    ($codec:ident, $configuration:ty, $id:literal) => {
        impl zarrs::array::codec::api::CodecTraitsV3 for $codec {
            fn create(
                metadata: &zarrs::metadata::v3::MetadataV3,
            ) -> Result<zarrs::array::codec::api::Codec, zarrs::plugin::PluginCreateError> {
                let configuration = metadata.configuration().ok_or_else(|| {
                    zarrs::plugin::PluginCreateError::Other(
                        concat!($id, " needs a configuration").into(),
                    )
                })?;
                Ok(zarrs::array::codec::api::Codec::ArrayToArray(
                    std::sync::Arc::new($codec::new(super::numcodecs_configuration::<
                        $configuration,
                    >(configuration, $id)?)?),
                ))
            }
        }

        impl zarrs::array::codec::api::CodecTraitsV2 for $codec {
            fn create(
                metadata: &zarrs::metadata::v2::MetadataV2,
            ) -> Result<zarrs::array::codec::api::Codec, zarrs::plugin::PluginCreateError> {
                Ok(zarrs::array::codec::api::Codec::ArrayToArray(
                    std::sync::Arc::new($codec::new(super::numcodecs_configuration::<
                        $configuration,
                    >(metadata.configuration(), $id)?)?),
                ))
            }
        }
    };
}

/// zarrs' `CodecTraits` of `$codec`, a codec without partial decoding or encoding, whose
/// configuration is `$configuration` (a function of the codec giving
/// `Option<Configuration>`).
macro_rules! whole_chunk_codec {
    ($codec:ty, $configuration:expr) => {
        impl zarrs::array::codec::api::CodecTraits for $codec {
            fn as_any(&self) -> &dyn std::any::Any {
                self
            }

            fn configuration(
                &self,
                _version: zarrs::plugin::ZarrVersion,
                _options: &zarrs::array::codec::api::CodecMetadataOptions,
            ) -> Option<zarrs::metadata::Configuration> {
                let configuration: fn(&$codec) -> Option<zarrs::metadata::Configuration> =
                    $configuration;
                configuration(self)
            }

            fn partial_decoder_capability(
                &self,
            ) -> zarrs::array::codec::api::PartialDecoderCapability {
                zarrs::array::codec::api::PartialDecoderCapability {
                    partial_read: false,
                    partial_decode: false,
                }
            }

            fn partial_encoder_capability(
                &self,
            ) -> zarrs::array::codec::api::PartialEncoderCapability {
                zarrs::array::codec::api::PartialEncoderCapability {
                    partial_encode: false,
                }
            }
        }
    };
}

/// zarrs' `ArrayCodecTraits` of an array→array `$codec` that works on a chunk with one
/// thread (chunks are decoded in parallel around it).
macro_rules! one_thread_per_chunk {
    ($codec:ty) => {
        impl zarrs::array::codec::api::ArrayCodecTraits for $codec {
            fn recommended_concurrency(
                &self,
                _shape: &[std::num::NonZeroU64],
                _data_type: &zarrs::array::DataType,
            ) -> Result<
                zarrs::array::codec::api::RecommendedConcurrency,
                zarrs::array::codec::api::CodecError,
            > {
                Ok(zarrs::array::codec::api::RecommendedConcurrency::new_maximum(1))
            }
        }
    };
}

/// `value` (a configuration struct) as a zarrs configuration object.
pub(crate) fn configuration_of<T: Serialize>(value: &T) -> Option<Configuration> {
    match serde_json::to_value(value).ok()? {
        serde_json::Value::Object(map) => Some(Configuration::from(map)),
        _ => None,
    }
}
