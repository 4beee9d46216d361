//! zarrflow on Azure Blob Storage: `az://container/prefix` against Azurite 3.37.0's blob
//! service (tests/common/azurite.rs starts one per test on 127.0.0.1). The store conformance
//! suite, sharded and unsharded arrays written and read back exactly (partial shard writes
//! too), interop fixtures uploaded and read whole with their selections, request counts, and
//! conditional writes: racing writers on one shard lose no update, a create-only PUT of an
//! existing object is refused, a stale compare-and-swap is refused.
//!
//! Azure has no suffix range requests (`bytes=-N`; object_store refuses them before sending),
//! so a shard index at the end is read with HEAD + a bounded range, pinned to the version HEAD
//! saw (`Store::get_suffix`'s fallback): the request counts below show it.

mod common;

use std::sync::Arc;

use bytes::Bytes;
use common::azurite::{ACCOUNT, ACCOUNT_KEY, AzuriteServer};
use common::conformance;
use common::fixtures::{entries, key, test_data};
use common::{files_under, read_npy};
use object_store::GetRange;
use object_store::azure::MicrosoftAzureBuilder;
use zarrflow::array::{Array, ArrayError, ArrayOptions};
use zarrflow::index::{Dialect, Selection, SelectionMode};
use zarrflow::metadata::ArraySpec;
use zarrflow::ndarray::{ArrayD, IxDyn};
use zarrflow::store::wrappers::{CountingStore, RequestKind};
use zarrflow::store::{Store, StoreError, StoreKey, StoreOptions};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn store_conformance_on_azurite() {
    let server = AzuriteServer::start(&["conformance"]);
    let store = Store::open("az://conformance/some/prefix", server.options()).unwrap();
    assert_eq!(store.url(), "az://conformance/some/prefix");
    // create-only and compare-and-swap PUTs (If-None-Match: * / If-Match: ETag)
    conformance::run_all(&store, true).await;
    // the objects are where the URL says: a store on the container's root sees them
    let root = Store::open("az://conformance", server.options()).unwrap();
    assert!(
        root.head(&StoreKey::new("some/prefix/t1/top").unwrap())
            .await
            .is_ok()
    );
}

/// Writes `cells` of a u32 array in steps (partial shard writes among them), checking every
/// read against a model; returns the array.
async fn write_and_check(store: &Store, name: &str, spec: &ArraySpec) {
    let a = Array::create(
        store,
        &StoreKey::new(name).unwrap(),
        spec,
        ArrayOptions::default(),
    )
    .await
    .unwrap();
    let shape: Vec<usize> = a.shape().iter().map(|&n| n as usize).collect();
    let mut model = ArrayD::<u32>::zeros(IxDyn(&shape));
    let steps = [
        "3:9, 2:11",      // inside one shard and across shards, partly covering inner chunks
        "::-3, 5",        // strided, one column
        "[0,13], [12,1]", // two points in two shards (vindex)
        ":, :",           // everything (shards covered: no read before the write)
        "4:6, 4:6",       // one inner chunk of one shard (the rest of the shard kept verbatim)
    ];
    for (round, text) in steps.iter().enumerate() {
        let sel = Selection::parse(text).unwrap();
        let mode = if text.starts_with('[') {
            SelectionMode::Vectorized
        } else {
            SelectionMode::Basic
        };
        let view = a.view().select(&sel, mode, Dialect::Positional).unwrap();
        let vshape: Vec<usize> = view.shape().iter().map(|&n| n as usize).collect();
        let n: usize = vshape.iter().product();
        let values = ArrayD::from_shape_vec(
            IxDyn(&vshape),
            (0..n as u32)
                .map(|i| (round as u32 + 1) * 10_000 + i)
                .collect(),
        )
        .unwrap();
        view.write(&values).await.unwrap();
        let mut k = 0;
        view.transform()
            .for_each_mapped(|_, out| {
                let idx: Vec<usize> = out.iter().map(|&x| x as usize).collect();
                model[IxDyn(&idx)] = values.as_slice().unwrap()[k];
                k += 1;
            })
            .unwrap();
        // a fresh handle (no cached shard index) reads what was written
        let fresh = Array::open_in(
            store,
            &StoreKey::new(name).unwrap(),
            ArrayOptions::default(),
        )
        .await
        .unwrap();
        let got = fresh.view().read::<u32>().await.unwrap();
        assert_eq!(got, model, "{name} after {text}");
        let strided = fresh
            .view()
            .get(&Selection::parse("1::4, ::-3").unwrap())
            .unwrap()
            .read::<u32>()
            .await
            .unwrap();
        assert_eq!(
            strided,
            model.slice(ndarray::s![1..;4, ..;-3]).into_dyn(),
            "{name} after {text}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sharded_and_unsharded_arrays_round_trip_on_azurite() {
    let server = AzuriteServer::start(&["zarr"]);
    let store = Store::open("az://zarr/arrays.zarr", server.options()).unwrap();
    let base = || ArraySpec::new(vec![14, 13], "uint32");
    write_and_check(&store, "unsharded", &base().shard_shape(vec![4, 5])).await;
    write_and_check(
        &store,
        "sharded_index_end",
        &base().shard_shape(vec![8, 8]).inner_chunk_shape(vec![2, 4]),
    )
    .await;
    let start = base()
        .shard_shape(vec![8, 8])
        .inner_chunk_shape(vec![4, 2])
        .index_at_start(true);
    write_and_check(&store, "sharded_index_start", &start).await;
    // a v2 array too
    write_and_check(
        &store,
        "v2",
        &base()
            .shard_shape(vec![5, 4])
            .zarr_format(zarrflow::ZarrFormat::V2),
    )
    .await;
    // every object is under the prefix, listed as Azure lists it
    let listed = store.list_prefix(&StoreKey::root()).await.unwrap();
    let names: Vec<&str> = listed.iter().map(StoreKey::as_str).collect();
    assert!(names.contains(&"sharded_index_end/c/1/1"), "{names:?}");
    assert!(names.contains(&"v2/.zarray"), "{names:?}");
}

/// The interop fixtures of zarr-python 3.4.2, TensorStore and zarr-python 2.18 (sharded,
/// unsharded, v2, every selection kind) uploaded to Azurite and read exactly.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn interop_fixtures_read_exactly_from_azurite() {
    let (dir, manifest) = test_data().expect("test-data");
    let server = AzuriteServer::start(&["fixtures"]);
    let store = Store::open("az://fixtures/test-data", server.options()).unwrap();
    let wanted = |p: &str| {
        p.starts_with("fixtures/zarr-python/sharded")
            || p.starts_with("fixtures/tensorstore/sharded")
            || p.starts_with("fixtures/zarr-python-2.18/")
            || p.starts_with("fixtures/zarr-python-v2/compressor")
    };
    let mut uploaded = 0;
    for (rel, data) in files_under(&dir.join("fixtures")) {
        let path = format!("fixtures/{rel}");
        if wanted(&path) && !path.ends_with(".npy") {
            store
                .put(&StoreKey::new(path).unwrap(), Bytes::from(data))
                .await
                .unwrap();
            uploaded += 1;
        }
    }
    assert!(uploaded > 300, "{uploaded}");
    let (mut arrays, mut selections) = (0, 0);
    for a in entries(&manifest, "arrays") {
        let path = a["path"].as_str().unwrap();
        if !wanted(path) {
            continue;
        }
        let array = Array::open_in(&store, &key(path), ArrayOptions::default())
            .await
            .unwrap_or_else(|e| panic!("{path}: {e}"));
        let (_, _, expected) = read_npy(&dir.join(a["expected"].as_str().unwrap()));
        assert_eq!(array.view().read_bytes().await.unwrap(), expected, "{path}");
        arrays += 1;
        for s in a["selections"].as_array().unwrap() {
            let text = s["selection"].as_str().unwrap();
            let mode = match s["mode"].as_str().unwrap() {
                "basic" => SelectionMode::Basic,
                "oindex" => SelectionMode::Outer,
                _ => SelectionMode::Vectorized,
            };
            let (_, _, want) = read_npy(&dir.join(s["expected"].as_str().unwrap()));
            let view = array
                .view()
                .select(&Selection::parse(text).unwrap(), mode, Dialect::Positional)
                .unwrap();
            assert_eq!(view.read_bytes().await.unwrap(), want, "{path} [{text}]");
            selections += 1;
        }
    }
    println!("azurite: {arrays} arrays, {selections} selections");
    assert!(arrays > 80 && selections > 900, "{arrays} {selections}");
}

/// A store over Azurite through the counting wrapper.
fn counting_store(
    server: &AzuriteServer,
) -> (Store, CountingStore<object_store::azure::MicrosoftAzure>) {
    let azure = MicrosoftAzureBuilder::new()
        .with_account(ACCOUNT)
        .with_access_key(ACCOUNT_KEY)
        .with_endpoint(server.endpoint.clone())
        .with_allow_http(true)
        .with_container_name("counts")
        .build()
        .unwrap();
    let counting = CountingStore::new(azure);
    let store = Store::from_object_store(
        Arc::new(counting.clone()),
        "",
        "az://counts",
        StoreOptions::default(),
    )
    .unwrap();
    (store, counting)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn request_counts_on_azurite() {
    let server = AzuriteServer::start(&["counts"]);
    let (store, counting) = counting_store(&server);
    // 64 x 64 uint16, shards 32 x 32 of 8 x 8 inner chunks, index at the end
    let spec = ArraySpec::new(vec![64, 64], "uint16")
        .shard_shape(vec![32, 32])
        .inner_chunk_shape(vec![8, 8]);
    let a = Array::create(
        &store,
        &StoreKey::new("a").unwrap(),
        &spec,
        ArrayOptions::default(),
    )
    .await
    .unwrap();
    let all = ArrayD::from_shape_fn(IxDyn(&[64, 64]), |i| (i[0] * 64 + i[1]) as u16);
    counting.reset();
    a.view().write(&all).await.unwrap();
    // covered shards: one PUT each, nothing read first
    let c = counting.counts();
    assert_eq!(
        (c.put, c.get, c.get_range, c.head),
        (4, 0, 0, 0),
        "{:?}",
        counting.log()
    );
    let fresh = Array::open_in(
        &store,
        &StoreKey::new("a").unwrap(),
        ArrayOptions::default(),
    )
    .await
    .unwrap();
    // a whole-array read: one GET per shard
    counting.reset();
    assert_eq!(fresh.view().read::<u16>().await.unwrap(), all);
    let c = counting.counts();
    assert_eq!(
        (c.get, c.get_range, c.total()),
        (4, 0, 4),
        "{:?}",
        counting.log()
    );
    // a partial read of one shard: its index (the suffix request is refused before it is
    // sent: HEAD + one bounded range) and one coalesced range for two adjacent inner chunks
    let fresh = Array::open_in(
        &store,
        &StoreKey::new("a").unwrap(),
        ArrayOptions::default(),
    )
    .await
    .unwrap();
    let part = fresh.view().get(&zarrflow::sel![0..8, 0..16]).unwrap();
    counting.reset();
    let got = part.read::<u16>().await.unwrap();
    assert_eq!(got, all.slice(ndarray::s![0..8, 0..16]).into_dyn());
    let log = counting.log();
    let kinds: Vec<RequestKind> = log.iter().map(|r| r.kind).collect();
    // the suffix request reaches the wrapper and is refused by object_store's Azure client
    // without a request being sent; the store then remembers the refusal
    assert_eq!(
        kinds,
        [
            RequestKind::GetRange,
            RequestKind::Head,
            RequestKind::GetRange,
            RequestKind::GetRange
        ],
        "{log:?}"
    );
    assert_eq!(log[0].range, Some(GetRange::Suffix(260)), "{log:?}");
    assert!(!store.uses_suffix_requests());
    // another shard: HEAD + the index range, then one coalesced range for the data
    let other = fresh.view().get(&zarrflow::sel![40..48, 32..48]).unwrap();
    counting.reset();
    assert_eq!(
        other.read::<u16>().await.unwrap(),
        all.slice(ndarray::s![40..48, 32..48]).into_dyn()
    );
    let log = counting.log();
    let kinds: Vec<RequestKind> = log.iter().map(|r| r.kind).collect();
    assert_eq!(
        kinds,
        [
            RequestKind::Head,
            RequestKind::GetRange,
            RequestKind::GetRange
        ],
        "{log:?}"
    );
    // again: the index comes from the cache, the data is one range
    counting.reset();
    assert_eq!(part.read::<u16>().await.unwrap(), got);
    assert_eq!(counting.counts().total(), 1, "{:?}", counting.log());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conditional_puts_on_azurite() {
    let server = AzuriteServer::start(&["cas"]);
    let store = Store::open("az://cas/x", server.options()).unwrap();
    let k = StoreKey::new("obj").unwrap();
    let v1 = store
        .put_if_absent(&k, Bytes::from_static(b"1"))
        .await
        .unwrap();
    // create-only on an existing object: refused, the object unchanged
    let err = store
        .put_if_absent(&k, Bytes::from_static(b"2"))
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::AlreadyExists { .. }), "{err:?}");
    let v2 = store
        .put_if_match(&k, Bytes::from_static(b"2"), &v1)
        .await
        .unwrap();
    // a stale version: refused
    let err = store
        .put_if_match(&k, Bytes::from_static(b"3"), &v1)
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::Precondition { .. }), "{err:?}");
    assert_eq!(store.get(&k).await.unwrap().as_ref(), b"2");
    store
        .put_if_match(&k, Bytes::from_static(b"3"), &v2)
        .await
        .unwrap();
    assert_eq!(store.get(&k).await.unwrap().as_ref(), b"3");
    // creating an array where one exists is refused by the create-only PUT of its metadata
    let spec = ArraySpec::new(vec![4], "int8");
    Array::create(
        &store,
        &StoreKey::new("arr").unwrap(),
        &spec,
        ArrayOptions::default(),
    )
    .await
    .unwrap();
    let err = Array::create(
        &store,
        &StoreKey::new("arr").unwrap(),
        &spec,
        ArrayOptions::default(),
    )
    .await
    .unwrap_err();
    assert!(err.is_already_exists(), "{err}");
}

/// Many writers on the shards of one array through separate handles (separate in-process
/// lock tables: only the conditional PUTs keep them apart), racing on every shard: at the end
/// every cell holds its owner's last value.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn racing_writers_lose_no_update_on_azurite() {
    const SIDE: usize = 16;
    const TASKS: usize = 8;
    const ROUNDS: usize = 4;
    let server = AzuriteServer::start(&["race"]);
    let store = Store::open("az://race/a", server.options()).unwrap();
    let spec = ArraySpec::new(vec![SIDE as u64, SIDE as u64], "uint32")
        .shard_shape(vec![8, 8])
        .inner_chunk_shape(vec![2, 2]);
    let path = StoreKey::new("stress").unwrap();
    Array::create(&store, &path, &spec, ArrayOptions::default())
        .await
        .unwrap();
    let owner = |r: usize, c: usize| (r * 7 + c * 3) % TASKS;
    let value = |t: usize, round: usize| (t as u32 + 1) * 1000 + round as u32 + 1;
    let mut joins = Vec::new();
    for t in 0..TASKS {
        // every task its own handle
        let a = Array::open_in(&store, &path, ArrayOptions::default())
            .await
            .unwrap();
        joins.push(tokio::spawn(async move {
            let (rows, cols): (Vec<usize>, Vec<usize>) = (0..SIDE * SIDE)
                .map(|i| (i / SIDE, i % SIDE))
                .filter(|&(r, c)| owner(r, c) == t)
                .unzip();
            let list = |v: &[usize]| {
                v.iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join(",")
            };
            let sel = Selection::parse(&format!("[{}], [{}]", list(&rows), list(&cols))).unwrap();
            let view = a.view().vindex(&sel).unwrap();
            for round in 0..ROUNDS {
                let v = ArrayD::from_elem(IxDyn(&[rows.len()]), value(t, round));
                let mut tries = 0;
                loop {
                    tries += 1;
                    match view.write(&v.view()).await {
                        Ok(()) => break,
                        Err(ArrayError::Store(StoreError::Precondition { .. })) if tries < 10 => {}
                        Err(e) => panic!("task {t} round {round}: {e}"),
                    }
                }
                let got = view.read::<u32>().await.unwrap();
                assert!(
                    got.iter().all(|&x| x == value(t, round)),
                    "task {t} round {round}"
                );
            }
        }));
    }
    for j in joins {
        j.await.unwrap();
    }
    let all = Array::open_in(&store, &path, ArrayOptions::default())
        .await
        .unwrap()
        .view()
        .read::<u32>()
        .await
        .unwrap();
    for r in 0..SIDE {
        for c in 0..SIDE {
            assert_eq!(
                all[[r, c]],
                value(owner(r, c), ROUNDS - 1),
                "cell ({r}, {c}) lost its owner's last write"
            );
        }
    }
}

/// The binary on `az://` URLs, configured through the `AZURE_*` variables as a user would.
fn zf(server: &AzuriteServer, args: &[&str]) -> std::process::Output {
    std::process::Command::new(common::cli::BIN)
        .args(args)
        .env("AZURE_STORAGE_ACCOUNT_NAME", ACCOUNT)
        .env("AZURE_STORAGE_ACCOUNT_KEY", ACCOUNT_KEY)
        .env("AZURE_STORAGE_ENDPOINT", &server.endpoint)
        .env("AZURE_ALLOW_HTTP", "true")
        .output()
        .expect("the zarrflow binary runs")
}

fn zf_ok(server: &AzuriteServer, args: &[&str]) -> String {
    let out = zf(server, args);
    assert!(
        out.status.success(),
        "zarrflow {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn commands_on_azurite_and_processes_racing_on_one_shard() {
    let server = AzuriteServer::start(&["cli"]);
    let tmp = tempfile::tempdir().unwrap();
    // a zarr-python 2.18 fixture copied into a sharded v3 layout on Azure, read back exactly
    let src = common::cli::fixture("fixtures/zarr-python-2.18/fill_42_int16");
    zf_ok(
        &server,
        &[
            "copy",
            &src,
            "az://cli/a.zarr",
            "--zarr-format",
            "3",
            "--shards",
            "4,4",
            "--chunks",
            "2,2",
        ],
    );
    let info: serde_json::Value = serde_json::from_str(&zf_ok(
        &server,
        &["info", "--json", "--stats", "az://cli/a.zarr"],
    ))
    .unwrap();
    assert_eq!(info["inner_chunk_shape"], serde_json::json!([2, 2]));
    assert!(info["stats"]["stored"].as_u64().unwrap() > 0);
    let out = tmp.path().join("a.npy");
    zf_ok(
        &server,
        &["get", "az://cli/a.zarr", "-o", out.to_str().unwrap()],
    );
    let (dir, _) = test_data().unwrap();
    assert_eq!(
        read_npy(&out),
        read_npy(&dir.join("fixtures/zarr-python-2.18/fill_42_int16.npy"))
    );
    // processes racing on one shard: 6 `set`s at once, each its own row; conditional PUTs
    // (If-Match / If-None-Match) keep every row
    zf_ok(
        &server,
        &[
            "create",
            "az://cli/race.zarr",
            "--shape",
            "6,8",
            "--dtype",
            "uint16",
            "--shards",
            "6,8",
            "--chunks",
            "2,2",
        ],
    );
    for round in 0..2u16 {
        let children: Vec<_> = (0..6u16)
            .map(|row| {
                std::process::Command::new(common::cli::BIN)
                    .args(["set", "az://cli/race.zarr", &format!("{row},:")])
                    .arg(format!("--value={}", 100 * (round + 1) + row))
                    .env("AZURE_STORAGE_ACCOUNT_NAME", ACCOUNT)
                    .env("AZURE_STORAGE_ACCOUNT_KEY", ACCOUNT_KEY)
                    .env("AZURE_STORAGE_ENDPOINT", &server.endpoint)
                    .env("AZURE_ALLOW_HTTP", "true")
                    .stdout(std::process::Stdio::null())
                    .stderr(std::process::Stdio::piped())
                    .spawn()
                    .unwrap()
            })
            .collect();
        for c in children {
            let out = c.wait_with_output().unwrap();
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        let got: Vec<Vec<u16>> =
            serde_json::from_str(&zf_ok(&server, &["get", "az://cli/race.zarr"])).unwrap();
        for (row, values) in got.iter().enumerate() {
            assert_eq!(
                values,
                &vec![100 * (round + 1) + row as u16; 8],
                "round {round}: row {row} lost its write"
            );
        }
    }
    // errors name the object; a container that does not exist is one line too
    let e = zf(&server, &["info", "az://cli/missing.zarr"]);
    let msg = String::from_utf8_lossy(&e.stderr);
    assert!(!e.status.success());
    assert_eq!(msg.trim_end().lines().count(), 1, "{msg}");
    assert!(msg.contains("az://cli/missing.zarr"), "{msg}");
    let e = zf(&server, &["info", "az://no-such-container/x.zarr"]);
    assert!(!e.status.success());
    assert_eq!(
        String::from_utf8_lossy(&e.stderr)
            .trim_end()
            .lines()
            .count(),
        1
    );
}
