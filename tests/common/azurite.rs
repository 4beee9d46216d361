//! An Azure Blob Storage server: Azurite's blob service (Microsoft's emulator, installed pinned
//! into `.azurite/` by `scripts/azurite-env.sh`), started on a free port of 127.0.0.1 with a
//! fresh temporary folder for the duration of a test and killed on drop.
//!
//! Stores reach it as `az://CONTAINER/prefix` with [`AzuriteServer::options`]: the emulator's
//! documented development account `devstoreaccount1` and its well-known key (published in
//! Azurite's README and object_store's builder: it is no secret), the path-style endpoint
//! `http://127.0.0.1:PORT/devstoreaccount1` and plain HTTP. (object_store's
//! `azure_storage_use_emulator` takes the endpoint from the process-wide
//! `AZURITE_BLOB_STORAGE_URL` variable instead, which parallel tests cannot each set, so the
//! endpoint is given as an ordinary option; requests and signatures are the same.) object_store
//! has no call that creates a container, so [`AzuriteServer::start`] creates them with a
//! Shared Key signed `PUT ?restype=container` (Node's `crypto`, the same Node that runs
//! Azurite).

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use zarrflow::store::StoreOptions;

/// Azurite's development account.
pub const ACCOUNT: &str = "devstoreaccount1";
/// Azurite's well-known development key for [`ACCOUNT`] (documented; not a secret).
pub const ACCOUNT_KEY: &str =
    "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";

/// Creates each container named after the port (Shared Key signed `PUT ?restype=container`).
const CREATE_CONTAINERS: &str = r#"
const http = require("http"), crypto = require("crypto");
const [port, account, key, ...containers] = process.argv.slice(1);
function create(name) {
  return new Promise((resolve, reject) => {
    const date = new Date().toUTCString(), version = "2021-08-06";
    const resource = `/${account}/${account}/${name}\nrestype:container`;
    const toSign = ["PUT", "", "", "", "", "", "", "", "", "", "", "",
      `x-ms-date:${date}\nx-ms-version:${version}`, resource].join("\n");
    const sig = crypto.createHmac("sha256", Buffer.from(key, "base64")).update(toSign, "utf8").digest("base64");
    const req = http.request({host: "127.0.0.1", port, method: "PUT", path: `/${account}/${name}?restype=container`,
      headers: {"x-ms-date": date, "x-ms-version": version, "Content-Length": 0,
                "Authorization": `SharedKey ${account}:${sig}`}}, (res) => {
      let body = ""; res.on("data", (d) => body += d);
      res.on("end", () => res.statusCode === 201 ? resolve() : reject(new Error(`${name}: ${res.statusCode} ${body}`)));
    });
    req.on("error", reject); req.end();
  });
}
(async () => { for (const c of containers) await create(c); })().catch((e) => { console.error(String(e)); process.exit(1); });
"#;

/// An Azurite blob service on 127.0.0.1, killed when dropped (its folder removed).
pub struct AzuriteServer {
    /// `http://127.0.0.1:PORT/devstoreaccount1`
    pub endpoint: String,
    child: Child,
    _dir: tempfile::TempDir,
}

impl Drop for AzuriteServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn azurite_blob() -> PathBuf {
    let p =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(".azurite/node_modules/.bin/azurite-blob");
    assert!(
        p.exists(),
        "{} is missing: run scripts/azurite-env.sh (scripts/test.sh does)",
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

/// Any HTTP answer to `GET /` (Azurite answers 400 or 403 without credentials): it serves.
fn answers(port: u16) -> bool {
    let Ok(mut s) = TcpStream::connect(("127.0.0.1", port)) else {
        return false;
    };
    let _ = s.set_read_timeout(Some(Duration::from_secs(5)));
    if write!(
        s,
        "GET / HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n"
    )
    .is_err()
    {
        return false;
    }
    let mut reply = [0u8; 12];
    s.read_exact(&mut reply).is_ok() && reply.starts_with(b"HTTP/1.1 ")
}

impl AzuriteServer {
    /// Starts Azurite's blob service and creates `containers`.
    pub fn start(containers: &[&str]) -> AzuriteServer {
        let dir = tempfile::tempdir().unwrap();
        let bin = azurite_blob();
        let port = free_port();
        let child = Command::new(&bin)
            .args(["--blobHost", "127.0.0.1", "--blobPort", &port.to_string()])
            .arg("--location")
            .arg(dir.path())
            .args(["--skipApiVersionCheck", "--loose", "--silent"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("{}: {e}", bin.display()));
        let mut server = AzuriteServer {
            endpoint: format!("http://127.0.0.1:{port}/{ACCOUNT}"),
            child,
            _dir: dir,
        };
        let deadline = Instant::now() + Duration::from_secs(60);
        while !answers(port) {
            if let Ok(Some(status)) = server.child.try_wait() {
                panic!("Azurite exited before serving on 127.0.0.1:{port}: {status}");
            }
            assert!(
                Instant::now() < deadline,
                "Azurite did not serve on 127.0.0.1:{port} within 60 s"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        let out = Command::new("node")
            .arg("-e")
            .arg(CREATE_CONTAINERS)
            .arg(port.to_string())
            .arg(ACCOUNT)
            .arg(ACCOUNT_KEY)
            .args(containers)
            .output()
            .expect("node (it runs Azurite)");
        assert!(
            out.status.success(),
            "creating containers on Azurite: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        server
    }

    /// Store options for `az://CONTAINER/...` on this server.
    pub fn options(&self) -> StoreOptions {
        StoreOptions::default()
            .with_backend_option("azure_storage_account_name", ACCOUNT)
            .with_backend_option("azure_storage_account_key", ACCOUNT_KEY)
            .with_backend_option("azure_storage_endpoint", &self.endpoint)
            .with_backend_option("azure_allow_http", "true")
    }
}
