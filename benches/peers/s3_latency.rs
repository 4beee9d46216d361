//! A local, in-memory S3-compatible server with injected latency, so that every library in
//! the write benchmark (zarrflow, zarrs and TensorStore, whose process cannot use an
//! in-process store wrapper) writes through the same delay. Included by the write benchmark
//! with `#[path]`.
//!
//! It answers what the three clients send for the benchmark's cases, path-style
//! (`/BUCKET/KEY`), and ignores request signatures:
//! - `PUT` of an object, honouring `If-Match: ETAG` (412 when the object changed, 404 when it
//!   is gone) and `If-None-Match: *` (412 when it exists), as S3 does; `PUT /BUCKET` is
//!   accepted (bucket creation);
//! - `GET` and `HEAD` with one byte range (`a-b`, `a-`, `-n`), `If-Match` (412) and
//!   `If-None-Match` (304);
//! - `DELETE`;
//! - `GET /BUCKET?list-type=2&prefix=P[&delimiter=/]` (ListObjectsV2, one page).
//!
//! An `ETag` is a counter, so storing a body costs a copy and nothing else: moto (Python)
//! and s3s-fs (which hashes every body with MD5, about 0.2 s of CPU for the benchmark's 127 MiB)
//! would spend more of the machine's two cores than the clients they serve. A body is
//! received into a buffer recycled from an object replaced earlier (the benchmark rewrites
//! the same 64 shards call after call): receiving each body into fresh memory cost the
//! server about 30 ms of page faults per 256 MiB write, on the cores the clients use, which
//! a remote server would not. Every request
//! is read whole, then waits the delay, then is answered: the delay is a time to first byte,
//! as in the read benchmark's HTTP server. The server runs on a runtime of its own (two
//! threads, `local_server.rs`) and counts the requests it answers, by method.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::{Method, Request, Response, StatusCode, header};

#[path = "answers.rs"]
mod answers;
#[path = "local_server.rs"]
mod local_server;
use answers::{Answer, LAST_MODIFIED, ranged, with_body};
use local_server::LocalServer;

/// Requests answered, by method.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct S3Counts {
    /// GETs of objects (listings apart).
    pub get: u64,
    /// PUTs of objects.
    pub put: u64,
    /// HEADs, DELETEs and listings.
    pub other: u64,
}

/// The server's threads' name.
const THREAD_NAME: &str = "s3-latency";

/// An object's bytes (shared with the GETs answering from it) and its ETag's number.
type Object = (Arc<Vec<u8>>, u64);

/// Buffers kept for reuse at most.
const SPARE_BUFFERS: usize = 256;

#[derive(Default)]
struct State {
    objects: Mutex<BTreeMap<String, Object>>,
    /// Buffers of replaced or deleted objects, for the next bodies.
    spare: Mutex<Vec<Vec<u8>>>,
    next_etag: AtomicU64,
    get: AtomicU64,
    put: AtomicU64,
    other: AtomicU64,
}

/// A running server; it stops when dropped.
pub struct S3LatencyServer {
    /// `http://127.0.0.1:PORT`
    pub endpoint: String,
    state: Arc<State>,
    server: LocalServer,
}

impl S3LatencyServer {
    /// An empty server that waits `delay` before every answer.
    pub fn start(delay: Duration) -> S3LatencyServer {
        let state = Arc::new(State::default());
        let s = state.clone();
        let server = LocalServer::start(THREAD_NAME, move |req: Request<Incoming>| {
            let s = s.clone();
            async move {
                let (parts, mut body) = req.into_parts();
                let announced = parts
                    .headers
                    .get(header::CONTENT_LENGTH)
                    .and_then(|v| v.to_str().ok()?.parse::<usize>().ok())
                    .unwrap_or(0);
                let mut buf = s.spare_buffer(announced);
                while let Some(frame) = body.frame().await {
                    match frame {
                        Ok(f) => {
                            if let Some(data) = f.data_ref() {
                                buf.extend_from_slice(data);
                            }
                        }
                        Err(_) => return status(StatusCode::BAD_REQUEST),
                    }
                }
                tokio::time::sleep(delay).await;
                answer(&s, Request::from_parts(parts, buf))
            }
        });
        S3LatencyServer {
            endpoint: format!("http://{}", server.addr),
            state,
            server,
        }
    }

    /// The requests answered since the last reset.
    pub fn counts(&self) -> S3Counts {
        S3Counts {
            get: self.state.get.load(Ordering::Relaxed),
            put: self.state.put.load(Ordering::Relaxed),
            other: self.state.other.load(Ordering::Relaxed),
        }
    }

    /// Sets the counts to zero.
    pub fn reset(&self) {
        for c in [&self.state.get, &self.state.put, &self.state.other] {
            c.store(0, Ordering::Relaxed);
        }
    }

    /// The CPU time the server's threads have used so far: the part of the process's CPU
    /// time that is the server's, not the client's.
    pub fn cpu(&self) -> Duration {
        self.server.cpu()
    }

    /// The stored bytes of objects whose keys start with `prefix` (`BUCKET/KEY...`).
    pub fn stored_bytes(&self, prefix: &str) -> u64 {
        let objects = self.state.objects.lock().expect("objects");
        objects
            .range(prefix.to_string()..)
            .take_while(|(k, _)| k.starts_with(prefix))
            .map(|(_, (b, _))| b.len() as u64)
            .sum()
    }
}

impl State {
    /// An empty buffer for a body of `len` bytes: the smallest spare one that holds it, or
    /// a new one.
    fn spare_buffer(&self, len: usize) -> Vec<u8> {
        let mut spare = self.spare.lock().expect("spare buffers");
        let fit = spare
            .iter()
            .enumerate()
            .filter(|(_, b)| b.capacity() >= len)
            .min_by_key(|(_, b)| b.capacity())
            .map(|(i, _)| i);
        match fit {
            Some(i) => spare.swap_remove(i),
            None => Vec::with_capacity(len),
        }
    }

    /// Keeps `buf` for a later body (when no GET still holds it).
    fn recycle(&self, buf: Arc<Vec<u8>>) {
        if let Ok(mut buf) = Arc::try_unwrap(buf) {
            let mut spare = self.spare.lock().expect("spare buffers");
            if spare.len() < SPARE_BUFFERS {
                buf.clear();
                spare.push(buf);
            }
        }
    }
}

/// An object's buffer as the owner of a response body (no copy).
struct ArcBytes(Arc<Vec<u8>>);

impl AsRef<[u8]> for ArcBytes {
    fn as_ref(&self) -> &[u8] {
        self.0.as_slice()
    }
}

/// An empty answer.
fn status(code: StatusCode) -> Answer {
    let mut r = Response::new(Full::new(Bytes::new()));
    *r.status_mut() = code;
    r
}

/// An S3 error answer (XML `Error` with its code).
fn error(code: StatusCode, s3_code: &str) -> Answer {
    with_body(
        code,
        Bytes::from(format!(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?><Error><Code>{s3_code}</Code>\
             <Message>{s3_code}</Message></Error>"
        )),
        &[(header::CONTENT_TYPE, "application/xml".into())],
    )
}

/// The ETag of version `n` (quoted, as S3 sends it).
fn etag(n: u64) -> String {
    format!("\"{n}\"")
}

/// The decoded value of the query parameter `name`.
fn query(req: &Request<Vec<u8>>, name: &str) -> Option<String> {
    form_urlencoded::parse(req.uri().query()?.as_bytes())
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.into_owned())
}

/// A header's value, when it is text.
fn header_str(req: &Request<Vec<u8>>, name: header::HeaderName) -> Option<&str> {
    req.headers().get(name).and_then(|v| v.to_str().ok())
}

/// The answer to one request (its body read whole).
fn answer(s: &State, req: Request<Vec<u8>>) -> Answer {
    let path = percent_encoding::percent_decode_str(req.uri().path().trim_start_matches('/'))
        .decode_utf8_lossy()
        .into_owned();
    let Some((bucket, key)) = path.split_once('/').filter(|(_, k)| !k.is_empty()) else {
        // bucket-level requests: creation, and listings
        s.other.fetch_add(1, Ordering::Relaxed);
        let bucket = path.trim_end_matches('/');
        return match *req.method() {
            Method::GET if query(&req, "list-type").is_some() => list(s, bucket, &req),
            Method::PUT | Method::HEAD => status(StatusCode::OK),
            _ => error(StatusCode::NOT_IMPLEMENTED, "NotImplemented"),
        };
    };
    let full = format!("{bucket}/{key}");
    let if_match = header_str(&req, header::IF_MATCH).map(str::to_string);
    let if_none_match = header_str(&req, header::IF_NONE_MATCH).map(str::to_string);
    match *req.method() {
        Method::PUT if req.headers().contains_key("x-amz-copy-source") => {
            s.other.fetch_add(1, Ordering::Relaxed);
            error(StatusCode::NOT_IMPLEMENTED, "NotImplemented")
        }
        Method::PUT => {
            s.put.fetch_add(1, Ordering::Relaxed);
            let body = Arc::new(req.into_body());
            let mut objects = s.objects.lock().expect("objects");
            let current = objects.get(&full).map(|(_, e)| etag(*e));
            let refusal = match (&if_match, &current) {
                (Some(_), None) => Some(error(StatusCode::NOT_FOUND, "NoSuchKey")),
                (Some(want), Some(e)) if want != "*" && e != want => {
                    Some(error(StatusCode::PRECONDITION_FAILED, "PreconditionFailed"))
                }
                _ if if_none_match.as_deref() == Some("*") && current.is_some() => {
                    Some(error(StatusCode::PRECONDITION_FAILED, "PreconditionFailed"))
                }
                _ => None,
            };
            if let Some(refusal) = refusal {
                drop(objects);
                s.recycle(body);
                return refusal;
            }
            let n = s.next_etag.fetch_add(1, Ordering::Relaxed) + 1;
            let old = objects.insert(full, (body, n));
            drop(objects);
            if let Some((old, _)) = old {
                s.recycle(old);
            }
            with_body(StatusCode::OK, Bytes::new(), &[(header::ETAG, etag(n))])
        }
        Method::GET | Method::HEAD => {
            let head = req.method() == Method::HEAD;
            if head {
                s.other.fetch_add(1, Ordering::Relaxed);
            } else {
                s.get.fetch_add(1, Ordering::Relaxed);
            }
            let Some((body, n)) = s.objects.lock().expect("objects").get(&full).cloned() else {
                return error(StatusCode::NOT_FOUND, "NoSuchKey");
            };
            let tag = etag(n);
            if if_match.as_ref().is_some_and(|m| m != "*" && *m != tag) {
                return error(StatusCode::PRECONDITION_FAILED, "PreconditionFailed");
            }
            if if_none_match
                .as_ref()
                .is_some_and(|m| m == "*" || *m == tag)
            {
                return with_body(
                    StatusCode::NOT_MODIFIED,
                    Bytes::new(),
                    &[(header::ETAG, tag)],
                );
            }
            let headers = vec![
                (header::ETAG, tag),
                (header::LAST_MODIFIED, LAST_MODIFIED.to_string()),
            ];
            ranged(
                Bytes::from_owner(ArcBytes(body)),
                header_str(&req, header::RANGE),
                head,
                headers,
                || error(StatusCode::RANGE_NOT_SATISFIABLE, "InvalidRange"),
            )
        }
        Method::DELETE => {
            s.other.fetch_add(1, Ordering::Relaxed);
            let old = s.objects.lock().expect("objects").remove(&full);
            if let Some((old, _)) = old {
                s.recycle(old);
            }
            status(StatusCode::NO_CONTENT)
        }
        _ => error(StatusCode::NOT_IMPLEMENTED, "NotImplemented"),
    }
}

/// ListObjectsV2, in one page: keys under `prefix`, grouped at `delimiter` when given.
fn list(s: &State, bucket: &str, req: &Request<Vec<u8>>) -> Answer {
    let prefix = query(req, "prefix").unwrap_or_default();
    let delimiter = query(req, "delimiter").filter(|d| !d.is_empty());
    let start = format!("{bucket}/{prefix}");
    let objects = s.objects.lock().expect("objects");
    let mut contents = String::new();
    let mut prefixes: Vec<String> = Vec::new();
    let mut count = 0;
    for (full, (body, n)) in objects
        .range(start.clone()..)
        .take_while(|(k, _)| k.starts_with(&start))
    {
        let key = &full[bucket.len() + 1..];
        let rest = &key[prefix.len()..];
        if let Some(d) = &delimiter
            && let Some(i) = rest.find(d.as_str())
        {
            let p = format!("{prefix}{}", &rest[..i + d.len()]);
            if prefixes.last() != Some(&p) {
                prefixes.push(p);
                count += 1;
            }
            continue;
        }
        count += 1;
        contents.push_str(&format!(
            "<Contents><Key>{}</Key><LastModified>2026-01-01T00:00:00.000Z</LastModified>\
             <ETag>&quot;{n}&quot;</ETag><Size>{}</Size><StorageClass>STANDARD</StorageClass>\
             </Contents>",
            quick_xml::escape::escape(key),
            body.len()
        ));
    }
    let common: String = prefixes
        .iter()
        .map(|p| {
            format!(
                "<CommonPrefixes><Prefix>{}</Prefix></CommonPrefixes>",
                quick_xml::escape::escape(p.as_str())
            )
        })
        .collect();
    with_body(
        StatusCode::OK,
        Bytes::from(format!(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\
             <ListBucketResult xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">\
             <Name>{}</Name><Prefix>{}</Prefix><KeyCount>{count}</KeyCount>\
             <MaxKeys>1000</MaxKeys><IsTruncated>false</IsTruncated>{contents}{common}\
             </ListBucketResult>",
            quick_xml::escape::escape(bucket),
            quick_xml::escape::escape(prefix.as_str())
        )),
        &[(header::CONTENT_TYPE, "application/xml".into())],
    )
}
