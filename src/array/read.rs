//! The read executor: plan, fetch, decode, copy into the result.
//!
//! Sharded arrays are planned twice (shard grid, then each touched shard's inner-chunk grid).
//! Per touched shard: when every inner chunk inside the array is needed the whole object is
//! fetched in one request; otherwise the index comes from the cache or one ranged request and
//! only the needed inner chunks are fetched, with coalesced ranges. Missing shards, inner
//! chunks and chunks fill their destination with the fill value without decoding anything.
//! Decoding runs on tokio's blocking pool, at most `decode_threads` at a time; copies into
//! the result run on the calling task, one contiguous run at a time.

use std::sync::Arc;

use bytes::Bytes;
use futures::{StreamExt, TryStreamExt};
use tokio::sync::Semaphore;

use crate::codec::block::ravel;
use crate::codec::{ShardIndex, ShardIndexCodec};
use crate::hierarchy::read_shard_index_versioned;
use crate::index::IndexTransform;
use crate::plan::{ChunkOp, ShardWork, plan_chunks, plan_sharded};
use crate::store::{StoreError, StoreKey};

use super::error::{ArrayError, Result};
use super::scatter::Kernel;
use super::{ShardLayout, Shared};

/// What lands in the result for one chunk operation.
enum Payload {
    /// The fill value (missing chunk, inner chunk or shard).
    Fill,
    /// A decoded chunk buffer of the operation's declared chunk shape.
    Data(Vec<u8>),
}

type Parts = Vec<(ChunkOp, Payload)>;

/// Reads the cells of `transform` (over the array's storage space) into `out`, the C-order
/// native-endian buffer of the transform's domain shape.
pub(crate) async fn read_into(
    shared: &Arc<Shared>,
    transform: &IndexTransform,
    out: &mut [u8],
) -> Result<()> {
    let elem = shared.elem;
    let cells = transform.domain().num_elements().unwrap_or(u64::MAX);
    if (out.len() as u64) != cells.saturating_mul(elem as u64) {
        return Err(ArrayError::ShapeMismatch(format!(
            "a buffer of {} bytes for {cells} elements of {elem} bytes",
            out.len()
        )));
    }
    if cells == 0 {
        return Ok(());
    }
    let decode = Arc::new(Semaphore::new(shared.options.decode_threads.max(1)));
    let concurrency = shared.options.request_concurrency.max(1);
    let fill = shared.node.metadata().fill_value().as_ne_bytes().to_vec();
    let mut stream = match &shared.shards {
        Some(layout) => {
            let plan = plan_sharded(transform, &shared.grids, &layout.inner_chunk_shape)?;
            let works: Vec<ShardWork> = plan.shards()?.collect::<Result<_, _>>()?;
            futures::stream::iter(works)
                .map(|work| read_shard(shared, layout, work, decode.clone()))
                .buffer_unordered(concurrency)
                .boxed()
        }
        None => {
            let plan = plan_chunks(transform, &shared.grids)?;
            let ops: Vec<ChunkOp> = plan.ops()?.collect::<Result<_, _>>()?;
            futures::stream::iter(ops)
                .map(|op| read_chunk(shared, op, decode.clone()))
                .buffer_unordered(concurrency)
                .boxed()
        }
    };
    while let Some(parts) = stream.try_next().await? {
        for (op, payload) in parts {
            let kernel = Kernel::new(&op)?;
            match payload {
                Payload::Fill => kernel.fill_into(&fill, out)?,
                Payload::Data(data) => kernel.gather_into(&data, out, elem)?,
            }
        }
    }
    Ok(())
}

fn key_of(shared: &Shared, coords: &[i64]) -> Result<StoreKey> {
    let coords: Vec<u64> = coords
        .iter()
        .map(|&c| {
            u64::try_from(c)
                .map_err(|_| ArrayError::Internal(format!("negative chunk coordinate {c}")))
        })
        .collect::<Result<_>>()?;
    Ok(shared.node.chunk_key(&coords)?)
}

/// Runs a decode on the blocking pool, at most `decode_threads` at a time.
async fn on_decode_pool<T: Send + 'static>(
    permits: Arc<Semaphore>,
    f: impl FnOnce() -> Result<T> + Send + 'static,
) -> Result<T> {
    let _permit = permits
        .acquire_owned()
        .await
        .map_err(|e| ArrayError::Task(e.to_string()))?;
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| ArrayError::Task(e.to_string()))?
}

async fn read_chunk(shared: &Arc<Shared>, op: ChunkOp, decode: Arc<Semaphore>) -> Result<Parts> {
    let key = key_of(shared, &op.chunk_coords)?;
    let Some(bytes) = shared.node.store().get_opt(&key).await? else {
        return Ok(vec![(op, Payload::Fill)]);
    };
    let shared = shared.clone();
    on_decode_pool(decode, move || {
        let meta = shared.node.metadata();
        let data = meta.codecs().decode(
            &bytes,
            &op.chunk_shape,
            meta.data_type(),
            meta.fill_value(),
            key.as_str(),
        )?;
        Ok(vec![(op, Payload::Data(data))])
    })
    .await
}

/// How many times a partial shard read starts again after the shard changed under it.
const MAX_READ_ATTEMPTS: usize = 8;

/// Number of inner chunks holding data of a shard whose valid region is `data_shape`.
fn inner_chunks_in(data_shape: &[u64], inner: &[u64]) -> u64 {
    data_shape
        .iter()
        .zip(inner)
        .map(|(&n, &c)| n.div_ceil(c.max(1)))
        .product()
}

async fn read_shard(
    shared: &Arc<Shared>,
    layout: &ShardLayout,
    work: ShardWork,
    decode: Arc<Semaphore>,
) -> Result<Parts> {
    let key = key_of(shared, &work.shard.chunk_coords)?;
    let store = shared.node.store();
    let shard_shape = work.shard.chunk_shape.clone();
    if !layout.partial_reads {
        // A codec wraps the sharding layer: decode the whole shard through the pipeline.
        let Some(bytes) = store.get_opt(&key).await? else {
            return Ok(vec![(work.shard, Payload::Fill)]);
        };
        let shared = shared.clone();
        return on_decode_pool(decode, move || {
            let meta = shared.node.metadata();
            let data = meta.codecs().decode(
                &bytes,
                &shard_shape,
                meta.data_type(),
                meta.fill_value(),
                key.as_str(),
            )?;
            Ok(vec![(work.shard, Payload::Data(data))])
        })
        .await;
    }
    let inner_ops: Vec<ChunkOp> = work.inner_ops()?.collect::<Result<_, _>>()?;
    let codec = layout.sharding.index_codec(&shard_shape)?;
    let needed_all = inner_ops.len() as u64
        == inner_chunks_in(&work.shard.data_shape, &layout.inner_chunk_shape);
    if needed_all {
        let (bytes, version) = match store.get_with_version(&key).await {
            Ok(read) => read,
            Err(e) if e.is_not_found() => return Ok(vec![(work.shard, Payload::Fill)]),
            Err(e) => return Err(e.into()),
        };
        let shared = shared.clone();
        return on_decode_pool(decode, move || {
            let index = codec.decode_from_shard(&bytes, key.as_str())?;
            if let Some(cache) = &shared.index_cache {
                cache.insert(key.as_str(), Arc::new(index.clone()), version);
            }
            decode_inner(&shared, &codec, &index, &key, inner_ops, |r| {
                bytes.slice(r.start as usize..r.end as usize)
            })
        })
        .await;
    }
    // The index and the inner chunks it locates must come from one version of the shard:
    // ranges are read conditionally on the version the index came from (ETag), and a shard
    // replaced in between (`Precondition`, or gone) is read again from its index.
    let cps = codec.chunks_per_shard().to_vec();
    let mut attempt = 0;
    let (index, ranges, fetched) = loop {
        attempt += 1;
        let cached = shared
            .index_cache
            .as_ref()
            .and_then(|c| c.get(key.as_str()));
        let (index, version) = match cached {
            Some(hit) => hit,
            None => match read_shard_index_versioned(store, &key, &codec).await? {
                None => return Ok(vec![(work.shard, Payload::Fill)]),
                Some((index, version)) => {
                    let index = Arc::new(index);
                    if let Some(cache) = &shared.index_cache {
                        cache.insert(key.as_str(), index.clone(), version.clone());
                    }
                    (index, version)
                }
            },
        };
        let mut ranges = Vec::new();
        for op in &inner_ops {
            if let Some(r) = index.get(linear_of(&op.chunk_coords, &cps)?) {
                ranges.push(r);
            }
        }
        match store
            .get_ranges_of_version(&key, &ranges, Some(&version))
            .await
        {
            Ok(fetched) => break (index, ranges, fetched),
            Err(StoreError::Precondition { .. } | StoreError::NotFound { .. })
                if attempt < MAX_READ_ATTEMPTS =>
            {
                if let Some(cache) = &shared.index_cache {
                    cache.invalidate(key.as_str());
                }
            }
            Err(e) => return Err(e.into()),
        }
    };
    let mut by_start: Vec<(u64, Bytes)> = ranges.iter().map(|r| r.start).zip(fetched).collect();
    by_start.sort_by_key(|(s, _)| *s);
    let shared = shared.clone();
    on_decode_pool(decode, move || {
        decode_inner(&shared, &codec, &index, &key, inner_ops, |r| {
            by_start
                .binary_search_by_key(&r.start, |(s, _)| *s)
                .map(|i| by_start[i].1.clone())
                .unwrap_or_default()
        })
    })
    .await
}

fn linear_of(coords: &[i64], chunks_per_shard: &[u64]) -> Result<usize> {
    let c: Vec<u64> = coords
        .iter()
        .map(|&v| {
            u64::try_from(v)
                .map_err(|_| ArrayError::Internal(format!("negative inner chunk coordinate {v}")))
        })
        .collect::<Result<_>>()?;
    if c.iter().zip(chunks_per_shard).any(|(v, n)| v >= n) {
        return Err(ArrayError::Internal(format!(
            "inner chunk {c:?} outside the shard's {chunks_per_shard:?} chunks"
        )));
    }
    Ok(ravel(&c, chunks_per_shard) as usize)
}

/// Decodes the inner chunks of `ops` whose bytes `bytes_of(range)` gives; absent ones fill.
fn decode_inner(
    shared: &Shared,
    codec: &ShardIndexCodec,
    index: &ShardIndex,
    key: &StoreKey,
    ops: Vec<ChunkOp>,
    bytes_of: impl Fn(&std::ops::Range<u64>) -> Bytes,
) -> Result<Parts> {
    let meta = shared.node.metadata();
    let layout = shared
        .shards
        .as_ref()
        .ok_or_else(|| ArrayError::Internal("inner chunks of an unsharded array".into()))?;
    let cps = codec.chunks_per_shard();
    let mut parts = Vec::with_capacity(ops.len());
    for op in ops {
        let Some(range) = index.get(linear_of(&op.chunk_coords, cps)?) else {
            parts.push((op, Payload::Fill));
            continue;
        };
        let bytes = bytes_of(&range);
        let name = format!("{} inner chunk {:?}", key.as_str(), op.chunk_coords);
        if bytes.len() as u64 != range.end - range.start {
            return Err(ArrayError::InvalidData {
                key: name,
                reason: format!(
                    "expected {} bytes, the store returned {}",
                    range.end - range.start,
                    bytes.len()
                ),
            });
        }
        let data = layout.sharding.inner().decode(
            &bytes,
            &layout.inner_chunk_shape,
            meta.data_type(),
            meta.fill_value(),
            &name,
        )?;
        parts.push((op, Payload::Data(data)));
    }
    Ok(parts)
}
