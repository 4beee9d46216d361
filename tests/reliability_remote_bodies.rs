//! Bodies from remote stores are checked against their announced length before they are
//! read: a chunk announced larger than any encoding of it is refused having read none of
//! it, a shard announced larger than its compact encoding (one with gaps) is read from its
//! index, a metadata document is capped by its announced size even on a server without
//! range requests (which still opens). The store is `http://127.0.0.1:port`, a small HTTP
//! server in this file serving virtual objects (sparse: a 10 GB object is a few segments),
//! honouring `Range` or not, and counting the body bytes it sent.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use ndarray::{ArrayD, IxDyn};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use zarrflow::array::{Array, ArrayError, ArrayOptions};
use zarrflow::codec::CodecError;
use zarrflow::metadata::{ArraySpec, CodecSpec, MetadataError};
use zarrflow::store::{Store, StoreError, StoreKey, StoreOptions};

const GB10: u64 = 10_000_000_000;

/// An object of `size` bytes: the `segments` at their offsets, zeros elsewhere.
#[derive(Clone, Debug)]
struct Virtual {
    size: u64,
    segments: Vec<(u64, Bytes)>,
}

impl Virtual {
    fn of(bytes: Bytes) -> Self {
        Virtual {
            size: bytes.len() as u64,
            segments: vec![(0, bytes)],
        }
    }

    /// Bytes `start..end`.
    fn read(&self, start: u64, end: u64) -> Vec<u8> {
        let mut out = vec![0u8; (end - start) as usize];
        for (off, seg) in &self.segments {
            let (s, e) = (*off.max(&start), (off + seg.len() as u64).min(end));
            if s < e {
                out[(s - start) as usize..(e - start) as usize]
                    .copy_from_slice(&seg[(s - off) as usize..(e - off) as usize]);
            }
        }
        out
    }
}

/// What the server answers and what it saw.
#[derive(Default)]
struct Server {
    objects: Mutex<BTreeMap<String, Virtual>>,
    /// A size HEAD announces instead of the real one, per path.
    head_sizes: Mutex<BTreeMap<String, u64>>,
    ranges: bool,
    body_bytes_sent: AtomicU64,
    requests: Mutex<Vec<String>>,
    /// When set, bodies go out in pieces of this many bytes, each after a pause of a
    /// millisecond, so the client reads them apart (else 64 KiB pieces, no pause).
    small_pieces: AtomicU64,
}

impl Server {
    async fn start(ranges: bool) -> (Arc<Server>, String) {
        let server = Arc::new(Server {
            ranges,
            ..Default::default()
        });
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let s = server.clone();
        tokio::spawn(async move {
            loop {
                let (conn, _) = listener.accept().await.unwrap();
                let s = s.clone();
                tokio::spawn(async move {
                    let _ = s.serve(conn).await;
                });
            }
        });
        (server, url)
    }

    fn put(&self, path: &str, object: Virtual) {
        self.objects
            .lock()
            .unwrap()
            .insert(path.to_string(), object);
    }

    fn sent(&self) -> u64 {
        self.body_bytes_sent.load(Ordering::Relaxed)
    }

    fn requests(&self) -> Vec<String> {
        self.requests.lock().unwrap().clone()
    }

    /// One request per connection (`Connection: close`).
    async fn serve(&self, mut conn: tokio::net::TcpStream) -> std::io::Result<()> {
        let mut head = Vec::new();
        let mut byte = [0u8; 1];
        while !head.ends_with(b"\r\n\r\n") {
            if conn.read(&mut byte).await? == 0 || head.len() > 65536 {
                return Ok(());
            }
            head.push(byte[0]);
        }
        let text = String::from_utf8_lossy(&head).to_string();
        let mut lines = text.split("\r\n");
        let mut first = lines.next().unwrap_or("").split(' ');
        let (method, path) = (first.next().unwrap_or(""), first.next().unwrap_or(""));
        let range = lines
            .filter_map(|l| l.split_once(':'))
            .find(|(k, _)| k.eq_ignore_ascii_case("range"))
            .map(|(_, v)| v.trim().to_string());
        self.requests.lock().unwrap().push(format!(
            "{method} {path}{}",
            range.as_ref().map(|r| format!(" {r}")).unwrap_or_default()
        ));
        let object = self.objects.lock().unwrap().get(path).cloned();
        let Some(object) = object else {
            return conn
                .write_all(
                    b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
                )
                .await;
        };
        let common = "ETag: \"v1\"\r\nConnection: close\r\n";
        if method == "HEAD" {
            let size = self
                .head_sizes
                .lock()
                .unwrap()
                .get(path)
                .copied()
                .unwrap_or(object.size);
            let h = format!("HTTP/1.1 200 OK\r\nContent-Length: {size}\r\n{common}\r\n");
            return conn.write_all(h.as_bytes()).await;
        }
        let (status, start, end) = match range.filter(|_| self.ranges) {
            None => ("200 OK", 0, object.size),
            Some(r) => {
                let r = r.trim_start_matches("bytes=");
                let (a, b) = r.split_once('-').unwrap();
                let (start, end) = if a.is_empty() {
                    let n: u64 = b.parse().unwrap();
                    (object.size.saturating_sub(n), object.size)
                } else {
                    let a: u64 = a.parse().unwrap();
                    let e = if b.is_empty() {
                        object.size
                    } else {
                        (b.parse::<u64>().unwrap() + 1).min(object.size)
                    };
                    (a, e)
                };
                ("206 Partial Content", start, end)
            }
        };
        let mut h = format!(
            "HTTP/1.1 {status}\r\nContent-Length: {}\r\n{common}",
            end - start
        );
        if status.starts_with("206") {
            h += &format!(
                "Content-Range: bytes {start}-{}/{}\r\n",
                end - 1,
                object.size
            );
        }
        h += "\r\n";
        conn.write_all(h.as_bytes()).await?;
        // the body in 64 KiB pieces (or paced ones of the size set), until done or the
        // client goes away
        let small = self.small_pieces.load(Ordering::Relaxed);
        let mut at = start;
        while at < end {
            let next = (at + if small > 0 { small } else { 65536 }).min(end);
            if small > 0 {
                conn.flush().await?;
                tokio::time::sleep(std::time::Duration::from_millis(1)).await;
            }
            conn.write_all(&object.read(at, next)).await?;
            self.body_bytes_sent.fetch_add(next - at, Ordering::Relaxed);
            at = next;
        }
        conn.flush().await
    }
}

/// The objects of an array created with zarrflow in memory: `(key, bytes)`.
async fn objects_of(spec: &ArraySpec, values: &ArrayD<u8>) -> Vec<(String, Bytes)> {
    let store = Store::open("memory://", StoreOptions::default()).unwrap();
    let array = Array::create(&store, &StoreKey::root(), spec, ArrayOptions::default())
        .await
        .unwrap();
    array.view().write(&values.view()).await.unwrap();
    let mut out = Vec::new();
    for k in store.list_prefix(&StoreKey::root()).await.unwrap() {
        out.push((k.as_str().to_string(), store.get(&k).await.unwrap()));
    }
    out
}

async fn serve_array(server: &Server, spec: &ArraySpec, values: &ArrayD<u8>) {
    for (k, v) in objects_of(spec, values).await {
        server.put(&format!("/a/{k}"), Virtual::of(v));
    }
}

async fn open(url: &str) -> Result<Array, ArrayError> {
    let store = Store::open(&format!("{url}/a"), StoreOptions::default()).unwrap();
    Array::open_in(&store, &StoreKey::root(), ArrayOptions::default()).await
}

fn ramp(n: usize) -> ArrayD<u8> {
    ArrayD::from_shape_fn(IxDyn(&[n]), |i| (i[0] * 7 % 251) as u8)
}

#[tokio::test]
async fn an_array_opens_and_reads_from_a_server_without_range_requests() {
    let (server, url) = Server::start(false).await;
    let spec = ArraySpec::new(vec![64], "uint8").shard_shape(vec![16]);
    serve_array(&server, &spec, &ramp(64)).await;
    let array = open(&url).await.expect("opens without range requests");
    assert_eq!(array.view().read::<u8>().await.unwrap(), ramp(64));
    // the four documents of the format probe are asked for with ranged GETs (zarr.json's is
    // answered whole and refused; the v2 ones are 404), then zarr.json's HEAD and plain GET
    let reqs = server.requests();
    let at = |r: &str| {
        reqs.iter()
            .position(|q| q.starts_with(r))
            .unwrap_or_else(|| panic!("{r} not in {reqs:?}"))
    };
    for doc in ["zarr.json", ".zarray", ".zgroup", ".zattrs"] {
        assert!(at(&format!("GET /a/{doc} bytes=0-")) < 4, "{reqs:?}");
    }
    let head = at("HEAD /a/zarr.json");
    let plain = reqs
        .iter()
        .position(|q| q == "GET /a/zarr.json")
        .unwrap_or_else(|| panic!("{reqs:?}"));
    assert!(head < plain, "{reqs:?}");
    assert_eq!(plain, 5, "{reqs:?}");
}

#[tokio::test]
async fn metadata_announced_over_the_limit_is_refused_before_its_body() {
    for ranges in [true, false] {
        let (server, url) = Server::start(ranges).await;
        let doc = format!(
            r#"{{"zarr_format":3,"node_type":"array","shape":[4],"data_type":"uint8","chunk_grid":{{"name":"regular","configuration":{{"chunk_shape":[4]}}}},"chunk_key_encoding":{{"name":"default"}},"fill_value":0,"codecs":[{{"name":"bytes"}}],"attributes":{{"pad":"{}"}}}}"#,
            "x".repeat(100)
        );
        let mut big = Virtual::of(Bytes::from(doc));
        big.size = GB10; // zeros after the document: 10 GB announced
        server.put("/a/zarr.json", big);
        let err = open(&url).await.unwrap_err();
        assert!(
            matches!(
                err,
                ArrayError::Hierarchy(zarrflow::hierarchy::HierarchyError::Metadata(
                    MetadataError::TooLarge { size: GB10, .. }
                ))
            ),
            "ranges {ranges}: {err:?}"
        );
        assert!(server.sent() <= 17 << 20, "sent {}", server.sent());
        // a HEAD that understates the size: the GET's announcement is refused
        if !ranges {
            server
                .head_sizes
                .lock()
                .unwrap()
                .insert("/a/zarr.json".into(), 100);
            let before = server.sent();
            let err = open(&url).await.unwrap_err();
            assert!(
                matches!(
                    err,
                    ArrayError::Hierarchy(zarrflow::hierarchy::HierarchyError::Metadata(
                        MetadataError::TooLarge { size: GB10, .. }
                    ))
                ),
                "{err:?}"
            );
            // the server started sending; the client stopped at the announcement (what
            // was sent is what the sockets' buffers took)
            assert!(server.sent() - before < 64 << 20, "sent {}", server.sent());
        }
    }
}

#[tokio::test]
async fn chunks_announced_larger_than_any_encoding_are_refused_before_their_body() {
    for (codecs, name) in [
        (vec![CodecSpec::bytes()], "bytes"),
        (vec![CodecSpec::bytes(), CodecSpec::gzip(1)], "gzip"),
        (vec![CodecSpec::bytes(), CodecSpec::zstd(1)], "zstd"),
    ] {
        let (server, url) = Server::start(true).await;
        let spec = ArraySpec::new(vec![64], "uint8")
            .shard_shape(vec![16])
            .codecs(codecs);
        serve_array(&server, &spec, &ramp(64)).await;
        let chunk = server.objects.lock().unwrap()["/a/c/1"].clone();
        server.put(
            "/a/c/1",
            Virtual {
                size: GB10,
                ..chunk
            },
        );
        let array = open(&url).await.unwrap();
        let before = server.sent();
        let err = array.view().read::<u8>().await.unwrap_err();
        match (&err, name) {
            (
                ArrayError::Codec(CodecError::WrongSize {
                    expected: 16,
                    got: GB10,
                    ..
                }),
                "bytes",
            ) => {}
            (ArrayError::Codec(CodecError::StoredTooLarge { size: GB10, .. }), _) => {}
            _ => panic!("{name}: {err:?}"),
        }
        assert!(
            server.sent() - before < 64 << 20,
            "{name}: sent {}",
            server.sent() - before
        );
        // writes read the chunk first: the same refusal, nothing stored
        let err = array
            .view()
            .select(
                &zarrflow::index::Selection::parse("20").unwrap(),
                zarrflow::index::SelectionMode::Basic,
                zarrflow::index::Dialect::Positional,
            )
            .unwrap()
            .write(&ArrayD::from_elem(IxDyn(&[]), 1u8).view())
            .await
            .unwrap_err();
        assert!(matches!(err, ArrayError::Codec(_)), "{name}: {err:?}");
    }
}

#[tokio::test]
async fn a_shard_with_a_10_gb_gap_is_read_from_its_index() {
    let (server, url) = Server::start(true).await;
    let spec = ArraySpec::new(vec![64], "uint8")
        .shard_shape(vec![32])
        .inner_chunk_shape(vec![8]);
    serve_array(&server, &spec, &ramp(64)).await;
    // shard 0: its inner chunks at the start, its index (at the end) 10 GB later; the
    // index's offsets are unchanged, so the bytes between are a gap no entry points into
    let shard = server.objects.lock().unwrap()["/a/c/0"].segments[0]
        .1
        .clone();
    let index_len = 4 * 16 + 4; // 4 entries of 16 bytes, crc32c
    let (data, index) = shard.split_at(shard.len() - index_len);
    server.put(
        "/a/c/0",
        Virtual {
            size: GB10 + index_len as u64,
            segments: vec![
                (0, Bytes::copy_from_slice(data)),
                (GB10, Bytes::copy_from_slice(index)),
            ],
        },
    );
    let array = open(&url).await.unwrap();
    let before = server.sent();
    assert_eq!(array.view().read::<u8>().await.unwrap(), ramp(64));
    assert!(
        server.sent() - before < 64 << 20,
        "sent {}",
        server.sent() - before
    );
    let reqs = server.requests();
    assert!(
        reqs.iter().any(|r| r.starts_with("GET /a/c/0 bytes=-")),
        "the index was read by a suffix range: {reqs:?}"
    );
}

#[tokio::test]
async fn the_store_refuses_announced_lengths_over_a_limit() {
    let (server, url) = Server::start(true).await;
    server.put(
        "/big",
        Virtual {
            size: GB10,
            segments: vec![],
        },
    );
    let store = Store::open(&url, StoreOptions::default()).unwrap();
    let key = StoreKey::new("big").unwrap();
    let err = store
        .get_opts(
            &key,
            zarrflow::store::GetOpts::default().with_max_size(1 << 20),
        )
        .await
        .unwrap_err();
    assert!(
        matches!(err, StoreError::TooLarge { size: GB10, max, .. } if max == 1 << 20),
        "{err:?}"
    );
    let err = store
        .get_object_within(&key, Some(1 << 20))
        .await
        .unwrap_err();
    assert!(
        matches!(err, StoreError::TooLarge { size: GB10, .. }),
        "{err:?}"
    );
    assert!(server.sent() < 64 << 20, "sent {}", server.sent());
}

#[tokio::test]
async fn whole_objects_arriving_in_pieces_read_as_sent() {
    let (server, url) = Server::start(true).await;
    // bodies go out in paced pieces of 100,000 bytes, which the client holds in several
    // pieces (as they came or, the small reads of a run, put together), so the 4 KiB inner
    // chunks of a shard read whole (512 KiB, every inner chunk needed) lie inside one piece
    // or across two
    server.small_pieces.store(100_000, Ordering::Relaxed);
    let values = ArrayD::from_shape_fn(IxDyn(&[1024, 1024]), |i| {
        ((i[0] * 131 + i[1] * 7) % 251) as u8
    });
    let spec = ArraySpec::new(vec![1024, 1024], "uint8")
        .shard_shape(vec![512, 1024])
        .inner_chunk_shape(vec![64, 64])
        .codecs(vec![CodecSpec::bytes()]);
    serve_array(&server, &spec, &values).await;
    let array = open(&url).await.unwrap();
    assert_eq!(array.view().read::<u8>().await.unwrap(), values);
    let sel = |text: &str, mode| {
        array
            .view()
            .select(
                &zarrflow::index::Selection::parse(text).unwrap(),
                mode,
                zarrflow::index::Dialect::Positional,
            )
            .unwrap()
    };
    let inner = sel("1:1023, 3:1021", zarrflow::index::SelectionMode::Basic)
        .read::<u8>()
        .await
        .unwrap();
    assert_eq!(
        inner,
        values.slice(ndarray::s![1..1023, 3..1021]).into_dyn()
    );
    // the store's own view of such a body: every range reads as the bytes sent
    let store = Store::open(&format!("{url}/a"), StoreOptions::default()).unwrap();
    let key = StoreKey::new("c/1/0").unwrap();
    let sent = server.objects.lock().unwrap()["/a/c/1/0"].segments[0]
        .1
        .clone();
    let object = store.get_object(&key).await.unwrap();
    assert_eq!(object.size(), sent.len() as u64);
    assert!(object.pieces_held() > 1, "{}", object.pieces_held());
    let n = sent.len();
    let mut ranges = vec![(0, 0), (0, 1), (0, n), (n, n), (n - 1, n)];
    for at in (0..n).step_by(4093) {
        ranges.push((at, (at + 4096).min(n)));
        ranges.push((at, (at + 150_000).min(n)));
    }
    for (a, b) in ranges {
        let (a64, b64) = (a as u64, b as u64);
        assert_eq!(
            object.read_range(a64..b64).unwrap(),
            &sent[a..b],
            "{a}..{b}"
        );
        let mut buf = Vec::new();
        object.read_range_into(a64..b64, &mut buf).unwrap();
        assert_eq!(buf, &sent[a..b], "{a}..{b}");
    }
    assert!(matches!(
        object.read_range(0..n as u64 + 1),
        Err(StoreError::InvalidRange { .. })
    ));
    assert_eq!(object.into_bytes().unwrap(), sent);
}
