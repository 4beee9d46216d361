//! An S3 server that honours conditional PUT: moto's (from `.venv`, installed by
//! `scripts/python-env.sh` from `test-data/requirements.txt`), started on a free port of
//! 127.0.0.1 for the duration of a test and killed on drop.
//!
//! The s3s-fs server of [`super::S3Server`] ignores the version conditions a cross-process
//! test depends on; moto refuses a stale `If-Match` PUT with 412 and an `If-None-Match: *`
//! PUT of an existing key (`reliability_conditional_writes::moto_refuses_stale_conditional_puts`
//! checks it). `moto_server` itself serves each request on its own thread and checks those
//! conditions before storing, without a lock (read in moto 5.2.5's `S3Response.put_object`),
//! so two racing PUTs could both pass the check; the helper therefore runs moto's same WSGI
//! application and request handler with `threaded=False`: requests are handled one at a time
//! (HTTP/1.0, a connection per request), which makes every condition atomic, as on S3.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use zarrflow::store::StoreOptions;

/// moto's server entry point (`moto.server.main`) with `threaded=False`.
const LAUNCHER: &str = "\
import sys
from werkzeug.serving import run_simple
from moto.moto_server.werkzeug_app import DomainDispatcherApplication, MotoRequestHandler, create_backend_app
app = DomainDispatcherApplication(create_backend_app)
run_simple(sys.argv[1], int(sys.argv[2]), app, threaded=False, request_handler=MotoRequestHandler)
";

/// Credentials sent to moto (it accepts any).
pub const MOTO_ACCESS_KEY: &str = "moto-test-key";
/// Secret sent to moto.
pub const MOTO_SECRET_KEY: &str = "moto-test-secret";

/// A moto S3 server on 127.0.0.1, killed when dropped.
pub struct MotoServer {
    /// `http://127.0.0.1:PORT`
    pub endpoint: String,
    child: Child,
}

impl Drop for MotoServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn python() -> PathBuf {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(".venv/bin/python");
    assert!(
        p.exists(),
        "{} is missing: run scripts/python-env.sh (scripts/test.sh does)",
        p.display()
    );
    p
}

fn free_port() -> u16 {
    TcpListener::bind(("127.0.0.1", 0))
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port on 127.0.0.1")
}

/// One HTTP/1.0 request without a body; returns the status code.
fn http_status(port: u16, method: &str, path: &str) -> std::io::Result<u16> {
    let mut s = TcpStream::connect(("127.0.0.1", port))?;
    s.set_read_timeout(Some(Duration::from_secs(30)))?;
    write!(
        s,
        "{method} {path} HTTP/1.0\r\nHost: 127.0.0.1:{port}\r\nContent-Length: 0\r\n\r\n"
    )?;
    let mut reply = String::new();
    s.read_to_string(&mut reply)?;
    reply
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .ok_or_else(|| std::io::Error::other(format!("not an HTTP reply: {reply:?}")))
}

impl MotoServer {
    /// Starts moto on a free port and creates one bucket per name. Panics when moto is not
    /// installed or does not answer within two minutes (a port taken meanwhile is retried).
    pub fn start(buckets: &[&str]) -> MotoServer {
        let python = python();
        for _ in 0..5 {
            let port = free_port();
            let mut child = Command::new(&python)
                .args(["-c", LAUNCHER, "127.0.0.1", &port.to_string()])
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("moto starts");
            let deadline = Instant::now() + Duration::from_secs(120);
            let ready = loop {
                if let Ok(Some(_)) = child.try_wait() {
                    break false; // exited: most likely the port was taken meanwhile
                }
                if http_status(port, "GET", "/").is_ok_and(|s| s == 200) {
                    break true;
                }
                assert!(Instant::now() < deadline, "moto did not answer on {port}");
                std::thread::sleep(Duration::from_millis(50));
            };
            if !ready {
                continue;
            }
            let server = MotoServer {
                endpoint: format!("http://127.0.0.1:{port}"),
                child,
            };
            for b in buckets {
                let status = http_status(port, "PUT", &format!("/{b}")).expect("create bucket");
                assert_eq!(status, 200, "creating bucket {b}");
            }
            return server;
        }
        panic!("moto did not start on any of 5 free ports");
    }

    /// Store options pointing at this server (endpoint, credentials, plain HTTP).
    pub fn options(&self) -> StoreOptions {
        StoreOptions::default()
            .with_backend_option("aws_endpoint", &self.endpoint)
            .with_backend_option("aws_allow_http", "true")
            .with_backend_option("aws_access_key_id", MOTO_ACCESS_KEY)
            .with_backend_option("aws_secret_access_key", MOTO_SECRET_KEY)
            .with_backend_option("aws_region", "us-east-1")
    }

    /// The same settings as `AWS_*` environment variables, for the CLI.
    pub fn env(&self) -> Vec<(&'static str, String)> {
        vec![
            ("AWS_ENDPOINT", self.endpoint.clone()),
            ("AWS_ALLOW_HTTP", "true".into()),
            ("AWS_ACCESS_KEY_ID", MOTO_ACCESS_KEY.into()),
            ("AWS_SECRET_ACCESS_KEY", MOTO_SECRET_KEY.into()),
            ("AWS_REGION", "us-east-1".into()),
        ]
    }
}
