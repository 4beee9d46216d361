//! S3 suite: an in-process s3s-fs server on 127.0.0.1; fixtures are uploaded, then opened,
//! listed and read through `s3://` URLs (endpoint and credentials from options).

mod common;

use bytes::Bytes;
use common::fixtures::{entries, key, read_all, test_data};
use common::read_npy;
use common::{S3Server, files_under};
use std::sync::Arc;
use zarrflow::hierarchy::{ArrayNode, Group, NodeKind};
use zarrflow::metadata::ArraySpec;
use zarrflow::store::wrappers::CountingStore;
use zarrflow::store::{Store, StoreKey, StoreOptions};

async fn upload_dir(dst: &Store, dir: &std::path::Path) -> usize {
    use futures::StreamExt;
    let files = files_under(dir);
    let n = files.len();
    futures::stream::iter(files)
        .map(|(rel, data)| async move {
            let key = StoreKey::new(rel.as_str()).unwrap();
            dst.put(&key, Bytes::from(data)).await.unwrap();
        })
        .buffer_unordered(8)
        .collect::<Vec<_>>()
        .await;
    n
}

/// Build a small local hierarchy with zarrflow itself (used whether or not test-data exists).
async fn local_fixture() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let local = Store::open(dir.path().to_str().unwrap(), StoreOptions::default()).unwrap();
    let root = Group::create(&local, &StoreKey::root(), serde_json::Map::new(), false)
        .await
        .unwrap();
    let g = root
        .create_group("g", serde_json::Map::new())
        .await
        .unwrap();
    let spec = ArraySpec::new(vec![8, 8], "uint16")
        .shard_shape(vec![4, 4])
        .inner_chunk_shape(vec![2, 2]);
    let arr = g.create_array("a", &spec).await.unwrap();
    let meta = arr.metadata();
    for (i, j) in [(0u64, 0u64), (1, 1)] {
        let data: Vec<u8> = (0..16u16)
            .flat_map(|v| (v + 100 * i as u16 + 1).to_ne_bytes())
            .collect();
        let enc = meta
            .codecs()
            .encode(&data, &[4, 4], meta.data_type(), meta.fill_value())
            .unwrap();
        local
            .put(&arr.chunk_key(&[i, j]).unwrap(), enc)
            .await
            .unwrap();
    }
    dir
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn open_list_and_read_through_s3_urls() {
    let server = S3Server::start(&["zarr"]).await;
    let dst = Store::open("s3://zarr/local", server.options()).unwrap();
    let local = local_fixture().await;
    assert!(upload_dir(&dst, local.path()).await >= 5);

    // open and list through a fresh s3:// store
    let s3 = Store::open("s3://zarr/local", server.options()).unwrap();
    let root = Group::open(&s3, &StoreKey::root()).await.unwrap();
    assert_eq!(
        root.children().await.unwrap(),
        vec![("g".to_string(), NodeKind::Group)]
    );
    let arr = ArrayNode::open(&s3, &key("g/a")).await.unwrap();
    let all = read_all(&s3, &arr).await;
    assert_eq!(all.len(), 8 * 8 * 2);
    assert_eq!(u16::from_ne_bytes([all[0], all[1]]), 1);
    assert_eq!(u16::from_ne_bytes([all[2 * 63], all[2 * 63 + 1]]), 116);
    assert_eq!(u16::from_ne_bytes([all[2 * 7], all[2 * 7 + 1]]), 0); // missing shard: fill
    // sub-store URL and missing node message
    let err = ArrayNode::open(&s3, &key("g/missing")).await.unwrap_err();
    assert!(
        err.to_string().contains("under s3://zarr/local/g/missing;"),
        "{err}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn interop_fixtures_through_s3() {
    let Some((dir, manifest)) = test_data() else {
        eprintln!("test-data/manifest.json not present: skipped");
        return;
    };
    let server = S3Server::start(&["fixtures"]).await;
    let up = Store::open("s3://fixtures/td", server.options()).unwrap();
    // a representative subset: the hierarchy and the sharded and request-count arrays
    let wanted = |p: &str| {
        p.contains("hierarchy")
            || p.contains("sharded")
            || p.contains("reqcount")
            || p.contains("consolidated")
    };
    let mut uploaded = std::collections::BTreeSet::new();
    for a in entries(&manifest, "arrays")
        .iter()
        .chain(entries(&manifest, "groups"))
    {
        let p = a["path"].as_str().unwrap();
        if !wanted(p)
            || uploaded
                .iter()
                .any(|u: &String| p.starts_with(&format!("{u}/")))
        {
            continue;
        }
        let sub = up.sub_store(&key(p));
        upload_dir(&sub, &dir.join(p)).await;
        uploaded.insert(p.to_string());
    }
    let s3 = Store::open("s3://fixtures/td", server.options()).unwrap();
    let mut read = 0;
    for a in entries(&manifest, "arrays") {
        let p = a["path"].as_str().unwrap();
        if !wanted(p) {
            continue;
        }
        let arr = ArrayNode::open(&s3, &key(p))
            .await
            .unwrap_or_else(|e| panic!("{p}: {e}"));
        if let Some(exp) = a["expected"].as_str() {
            let (_, _, data) = read_npy(&dir.join(exp));
            assert!(read_all(&s3, &arr).await == data, "{p}");
            read += 1;
        }
    }
    assert!(read > 10, "{read}");
    for g in entries(&manifest, "groups") {
        let p = g["path"].as_str().unwrap();
        if !wanted(p) {
            continue;
        }
        let group = Group::open(&s3, &key(p)).await.unwrap();
        if let Some(children) = g["children"].as_array() {
            assert_eq!(group.children().await.unwrap().len(), children.len(), "{p}");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shard_index_suffix_read_over_s3_is_one_request() {
    let server = S3Server::start(&["bkt"]).await;
    let local = local_fixture().await;
    upload_dir(
        &Store::open("s3://bkt/x", server.options()).unwrap(),
        local.path(),
    )
    .await;
    // count requests against the real S3 backend
    let url = url::Url::parse("s3://bkt/x").unwrap();
    let mut opts: Vec<(String, String)> = server.options().backend.into_iter().collect();
    opts.sort();
    let (backend, prefix) = object_store::parse_url_opts(&url, opts).unwrap();
    let counting = CountingStore::new(backend);
    let s3 = Store::from_object_store(
        Arc::new(counting.clone()),
        prefix.as_ref(),
        "s3://bkt/x",
        StoreOptions::default(),
    )
    .unwrap();
    let arr = ArrayNode::open(&s3, &key("g/a")).await.unwrap();
    let sharding = arr.metadata().codecs().sharding().unwrap();
    let codec = sharding.index_codec(&[4, 4]).unwrap();
    counting.reset();
    let k = arr.chunk_key(&[1, 1]).unwrap();
    let index = zarrflow::hierarchy::read_shard_index(&s3, &k, &codec)
        .await
        .unwrap()
        .unwrap();
    let c = counting.counts();
    assert_eq!(
        (c.get_range, c.head, c.total()),
        (1, 0, 1),
        "{:?}",
        counting.log()
    );
    // all four inner chunks are adjacent: one coalesced request
    counting.reset();
    let ranges: Vec<_> = (0..index.len()).filter_map(|i| index.get(i)).collect();
    assert_eq!(ranges.len(), 4);
    s3.get_ranges(&k, &ranges).await.unwrap();
    assert_eq!(counting.counts().get_range, 1);
}
