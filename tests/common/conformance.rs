//! Store behaviour every backend must show. Each function takes a fresh (empty) store.

use bytes::Bytes;
use serde_json::json;
use zarrflow::hierarchy::{ArrayNode, Group, HierarchyError, Node, NodeKind, open_node};
use zarrflow::metadata::ArraySpec;
use zarrflow::store::{Store, StoreError, StoreKey};

fn k(s: &str) -> StoreKey {
    StoreKey::new(s).unwrap()
}

/// put / get / head / delete / list.
pub async fn put_get_delete_list(store: &Store) {
    let data = Bytes::from_static(b"hello zarr");
    store.put(&k("a/b/c.bin"), data.clone()).await.unwrap();
    store
        .put(&k("a/b/d.bin"), Bytes::from_static(b"x"))
        .await
        .unwrap();
    store
        .put(&k("a/e/zarr.json"), Bytes::from_static(b"{}"))
        .await
        .unwrap();
    store
        .put(&k("top"), Bytes::from_static(b"t"))
        .await
        .unwrap();
    assert_eq!(store.get(&k("a/b/c.bin")).await.unwrap(), data);
    assert_eq!(store.head(&k("a/b/c.bin")).await.unwrap().size, 10);
    // overwrite
    store
        .put(&k("a/b/d.bin"), Bytes::from_static(b"xy"))
        .await
        .unwrap();
    assert_eq!(
        store.get(&k("a/b/d.bin")).await.unwrap(),
        Bytes::from_static(b"xy")
    );
    // list_dir
    let root = store.list_dir(&StoreKey::root()).await.unwrap();
    assert_eq!(root.objects, vec!["top".to_string()]);
    assert_eq!(root.prefixes, vec!["a".to_string()]);
    let a = store.list_dir(&k("a")).await.unwrap();
    assert!(a.objects.is_empty());
    assert_eq!(a.prefixes, vec!["b".to_string(), "e".to_string()]);
    let b = store.list_dir(&k("a/b")).await.unwrap();
    assert_eq!(b.objects, vec!["c.bin".to_string(), "d.bin".to_string()]);
    assert!(
        store
            .list_dir(&k("nothing/here"))
            .await
            .unwrap()
            .objects
            .is_empty()
    );
    // list_prefix (recursive, relative to the store)
    let all = store.list_prefix(&k("a")).await.unwrap();
    assert_eq!(
        all,
        vec![k("a/b/c.bin"), k("a/b/d.bin"), k("a/e/zarr.json")]
    );
    // delete (idempotent)
    store.delete(&k("a/b/c.bin")).await.unwrap();
    store.delete(&k("a/b/c.bin")).await.unwrap();
    assert!(store.get_opt(&k("a/b/c.bin")).await.unwrap().is_none());
    store.delete_prefix(&k("a")).await.unwrap();
    assert!(store.list_prefix(&k("a")).await.unwrap().is_empty());
    assert_eq!(
        store.get(&k("top")).await.unwrap(),
        Bytes::from_static(b"t")
    );
}

/// A missing object is `NotFound` naming its full URL.
pub async fn not_found(store: &Store) {
    let err = store.get(&k("missing/zarr.json")).await.unwrap_err();
    let StoreError::NotFound { url } = &err else {
        panic!("{err:?}")
    };
    assert!(url.ends_with("missing/zarr.json"), "{url}");
    assert!(url.starts_with(store.url()), "{url}");
    assert!(err.to_string().contains("not found"));
    assert!(store.head(&k("missing")).await.unwrap_err().is_not_found());
    assert!(
        store
            .get_range(&k("missing"), 0..4)
            .await
            .unwrap_err()
            .is_not_found()
    );
    assert!(
        store
            .get_suffix(&k("missing"), 4)
            .await
            .unwrap_err()
            .is_not_found()
    );
}

/// Ranged, suffix and batched reads.
pub async fn ranges(store: &Store) {
    let data: Vec<u8> = (0..=255u8).cycle().take(1000).collect();
    let key = k("r/obj");
    store.put(&key, Bytes::from(data.clone())).await.unwrap();
    assert_eq!(
        &store.get_range(&key, 10..20).await.unwrap()[..],
        &data[10..20]
    );
    assert_eq!(store.get_range(&key, 5..5).await.unwrap().len(), 0);
    let tail = store.get_suffix(&key, 68).await.unwrap();
    assert_eq!(&tail.bytes[..], &data[932..]);
    assert_eq!(tail.object_size, 1000);
    let mid = store.get_range_with_size(&key, 10..20).await.unwrap();
    assert_eq!((&mid.bytes[..], mid.object_size), (&data[10..20], 1000));
    // suffix longer than the object: whole object
    assert_eq!(
        &store.get_suffix(&key, 5000).await.unwrap().bytes[..],
        &data[..]
    );
    let ranges = vec![900..1000, 0..4, 2..10, 500..500, 100..200, 150..160];
    let got = store.get_ranges(&key, &ranges).await.unwrap();
    for (r, g) in ranges.iter().zip(&got) {
        assert_eq!(&g[..], &data[r.start as usize..r.end as usize], "{r:?}");
    }
    #[allow(clippy::reversed_empty_ranges)]
    let bad = store.get_range(&key, 20..10).await.unwrap_err();
    assert!(matches!(bad, StoreError::InvalidRange { .. }), "{bad:?}");
    fetched_objects(store, &key, &data).await;
}

/// A whole object fetched once (`get_object`), then read piece by piece: pieces equal the
/// object's bytes, the version is the object's, pieces outside it are typed errors, and the
/// fetched object keeps the version it was fetched at when the object is replaced.
async fn fetched_objects(store: &Store, key: &StoreKey, data: &[u8]) {
    let object = store.get_object(key).await.unwrap();
    assert_eq!(object.size(), data.len() as u64);
    assert_eq!(object.version(), &store.head(key).await.unwrap().version);
    for r in [0..1000u64, 0..4, 10..20, 500..500, 996..1000] {
        let piece = object.read_range(r.clone()).unwrap();
        assert_eq!(&piece[..], &data[r.start as usize..r.end as usize], "{r:?}");
    }
    for r in [990..1001u64, 1000..1004, 2000..2001] {
        let err = object.read_range(r.clone()).unwrap_err();
        assert!(
            matches!(err, StoreError::InvalidRange { .. }),
            "{r:?}: {err:?}"
        );
        assert!(err.to_string().contains("r/obj"), "{err}");
    }
    // replaced after the fetch: the fetched object still reads the bytes it was fetched at
    store
        .put(key, Bytes::from(vec![0xEEu8; 2000]))
        .await
        .unwrap();
    let piece = object.read_range(100..200).unwrap();
    assert_eq!(&piece[..], &data[100..200]);
    let fresh = store.get_object(key).await.unwrap();
    assert_eq!(fresh.size(), 2000);
    assert_eq!(&fresh.read_range(0..3).unwrap()[..], &[0xEE; 3]);
    assert!(
        store
            .get_object(&k("r/missing"))
            .await
            .unwrap_err()
            .is_not_found()
    );
    store.put(key, Bytes::from(data.to_vec())).await.unwrap();
}

/// Conditional puts: create-only always; compare-and-swap when `supports_update`.
pub async fn conditional_put(store: &Store, supports_update: bool) {
    let key = k("cond/zarr.json");
    let v1 = store
        .put_if_absent(&key, Bytes::from_static(b"1"))
        .await
        .unwrap();
    let err = store
        .put_if_absent(&key, Bytes::from_static(b"2"))
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::AlreadyExists { .. }), "{err:?}");
    assert_eq!(store.get(&key).await.unwrap(), Bytes::from_static(b"1"));
    let (_, current) = store.get_with_version(&key).await.unwrap();
    if !supports_update {
        let err = store
            .put_if_match(&key, Bytes::from_static(b"3"), &current)
            .await
            .unwrap_err();
        assert!(matches!(err, StoreError::Unsupported { .. }), "{err:?}");
        return;
    }
    let v2 = store
        .put_if_match(&key, Bytes::from_static(b"2"), &current)
        .await
        .unwrap();
    assert_ne!(v1, v2);
    // the old version no longer matches
    let err = store
        .put_if_match(&key, Bytes::from_static(b"stale"), &current)
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::Precondition { .. }), "{err:?}");
    assert_eq!(store.get(&key).await.unwrap(), Bytes::from_static(b"2"));
    store
        .put_if_match(&key, Bytes::from_static(b"3"), &v2)
        .await
        .unwrap();
    assert_eq!(store.get(&key).await.unwrap(), Bytes::from_static(b"3"));
}

/// Groups and arrays: create, open, list children, update attributes.
pub async fn hierarchy(store: &Store) {
    let root = Group::create(store, &StoreKey::root(), serde_json::Map::new(), false)
        .await
        .unwrap();
    let g1 = root
        .create_group("g1", json!({"a": 1}).as_object().unwrap().clone())
        .await
        .unwrap();
    let spec = ArraySpec::new(vec![100, 100], "float32")
        .shard_shape(vec![50, 50])
        .inner_chunk_shape(vec![10, 10])
        .dimension_names(["y", "x"]);
    let mut arr = g1.create_array("arr", &spec).await.unwrap();
    root.create_group("g2", serde_json::Map::new())
        .await
        .unwrap();
    // a stray directory without zarr.json and a reserved name are not children
    store
        .put(&k("junk/file"), Bytes::from_static(b"x"))
        .await
        .unwrap();
    store
        .put(&k("__reserved/zarr.json"), Bytes::from_static(b"{}"))
        .await
        .unwrap();
    assert_eq!(
        root.children().await.unwrap(),
        vec![
            ("g1".to_string(), NodeKind::Group),
            ("g2".to_string(), NodeKind::Group)
        ]
    );
    assert_eq!(
        g1.children().await.unwrap(),
        vec![("arr".to_string(), NodeKind::Array)]
    );
    // creating again fails
    let err = g1.create_array("arr", &spec).await.unwrap_err();
    assert!(
        matches!(err, HierarchyError::AlreadyExists { .. }),
        "{err:?}"
    );
    let err = root
        .create_group("bad/name", serde_json::Map::new())
        .await
        .unwrap_err();
    assert!(matches!(err, HierarchyError::InvalidName { .. }), "{err:?}");
    // open
    let opened = ArrayNode::open(store, &k("g1/arr")).await.unwrap();
    assert_eq!(opened.metadata().shape(), &[100, 100]);
    assert_eq!(opened.chunk_key(&[1, 0]).unwrap(), k("g1/arr/c/1/0"));
    assert!(opened.metadata().codecs().sharding().is_some());
    let written = store.get(&k("g1/arr/zarr.json")).await.unwrap();
    assert!(!String::from_utf8_lossy(&written).contains("_zarrs"));
    // attributes
    arr.update_attributes(|a| {
        a.insert("units".into(), json!("K"));
    })
    .await
    .unwrap();
    let again = ArrayNode::open(store, &k("g1/arr")).await.unwrap();
    assert_eq!(again.attributes().get("units"), Some(&json!("K")));
    let mut g = Group::open(store, &k("g1")).await.unwrap();
    assert_eq!(g.attributes().get("a"), Some(&json!(1)));
    g.update_attributes(|a| {
        a.insert("b".into(), json!([1, 2]));
    })
    .await
    .unwrap();
    let g = Group::open(store, &k("g1")).await.unwrap();
    assert_eq!(g.attributes().get("b"), Some(&json!([1, 2])));
    // wrong type, missing node
    let err = Group::open(store, &k("g1/arr")).await.unwrap_err();
    assert!(
        matches!(err, HierarchyError::WrongNodeType { .. }),
        "{err:?}"
    );
    let err = open_node(store, &k("nope")).await.unwrap_err();
    // neither zarr.json nor .zarray / .zgroup: the node's URL, and what is stored there
    let HierarchyError::NoNode { url, .. } = &err else {
        panic!("{err:?}")
    };
    assert!(url.ends_with("nope"), "{url}");
    assert!(err.to_string().contains("not found") && err.to_string().contains(url.as_str()));
    assert!(matches!(
        open_node(store, &StoreKey::root()).await.unwrap(),
        Node::Group(_)
    ));
}

/// Sharded data written by the codec layer and read back through ranged reads.
pub async fn shard_roundtrip(store: &Store) {
    let spec = ArraySpec::new(vec![8, 8], "uint16")
        .shard_shape(vec![4, 8])
        .inner_chunk_shape(vec![2, 4]);
    let arr = ArrayNode::create(store, &k("s"), &spec, false)
        .await
        .unwrap();
    let meta = arr.metadata();
    let data: Vec<u8> = (0..32u16).flat_map(|v| (v + 1).to_ne_bytes()).collect();
    let enc = meta
        .codecs()
        .encode(&data, &[4, 8], meta.data_type(), meta.fill_value())
        .unwrap();
    let key = arr.chunk_key(&[1, 0]).unwrap();
    store.put(&key, enc.clone()).await.unwrap();
    // suffix read of the index, then the inner chunk (1, 1)
    let sharding = meta.codecs().sharding().unwrap();
    let index_codec = sharding.index_codec(&[4, 8]).unwrap();
    let index = zarrflow::hierarchy::read_shard_index(store, &key, &index_codec)
        .await
        .unwrap()
        .unwrap();
    let missing = arr.chunk_key(&[0, 0]).unwrap();
    assert!(
        zarrflow::hierarchy::read_shard_index(store, &missing, &index_codec)
            .await
            .unwrap()
            .is_none()
    );
    let ranges: Vec<_> = (0..index.len()).filter_map(|i| index.get(i)).collect();
    assert_eq!(ranges.len(), 4);
    let bufs = store.get_ranges(&key, &ranges).await.unwrap();
    let inner = sharding.inner();
    let chunk = inner
        .decode(
            &bufs[3],
            &[2, 4],
            meta.data_type(),
            meta.fill_value(),
            "inner",
        )
        .unwrap();
    let expect: Vec<u8> = [20u16, 21, 22, 23, 28, 29, 30, 31]
        .iter()
        .flat_map(|v| (v + 1).to_ne_bytes())
        .collect();
    assert_eq!(chunk, expect);
    // whole shard
    let whole = store.get(&key).await.unwrap();
    assert_eq!(
        meta.codecs()
            .decode(
                &whole,
                &[4, 8],
                meta.data_type(),
                meta.fill_value(),
                key.as_str()
            )
            .unwrap(),
        data
    );
}

/// Run every conformance function, each on its own sub-prefix of `store`.
/// A PUT of several parts (as a shard's pieces are written): empty parts, more parts than
/// one `writev` takes, a large part; stored as their concatenation, conditionally too.
pub async fn multipart_put(store: &Store) {
    let mut parts: Vec<Bytes> = (0..1500u32)
        .map(|i| match i % 3 {
            0 => Bytes::new(),
            _ => Bytes::from(i.to_le_bytes().to_vec()),
        })
        .collect();
    parts.push(Bytes::from(vec![9u8; 3 << 20]));
    parts.push(Bytes::from_static(b"end"));
    let whole: Vec<u8> = parts.concat();
    let payload = object_store::PutPayload::from_iter(parts);
    let v = store
        .put_opts(&k("m"), payload.clone(), zarrflow::store::PutMode::Create)
        .await
        .unwrap();
    assert_eq!(store.get(&k("m")).await.unwrap(), whole);
    let again = store
        .put_opts(&k("m"), payload, zarrflow::store::PutMode::Update(v))
        .await;
    if !matches!(again, Err(StoreError::Unsupported { .. })) {
        again.unwrap();
    }
    assert_eq!(store.get(&k("m")).await.unwrap(), whole);
}

pub async fn run_all(store: &Store, supports_update: bool) {
    multipart_put(&store.sub_store(&k("t7"))).await;
    put_get_delete_list(&store.sub_store(&k("t1"))).await;
    not_found(&store.sub_store(&k("t2"))).await;
    ranges(&store.sub_store(&k("t3"))).await;
    conditional_put(&store.sub_store(&k("t4")), supports_update).await;
    hierarchy(&store.sub_store(&k("t5"))).await;
    shard_roundtrip(&store.sub_store(&k("t6"))).await;
}
