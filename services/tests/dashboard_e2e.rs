//! The dashboard in a real browser, in the default test run: starts the `rampart` binary as an
//! operator would (`rampart up`: proxy + inference + built-in demo upstream), waits for the
//! models, then runs `node e2e/dashboard.spec.mjs <proxy URL>` — playwright-core driving
//! Debian's /usr/bin/chromium — and requires it to pass. Screenshots land in
//! target/e2e-screenshots/. Prerequisites come from scripts/bootstrap (scripts/bootstrap-browser);
//! when one is missing the test fails and says so, it never skips. See docs/DASHBOARD.md.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

mod common;
mod policy_fixtures;

const CHROMIUM: &str = "/usr/bin/chromium";
/// The spec script bounds itself at 240 s; this is the backstop.
const SPEC_TIMEOUT: Duration = Duration::from_secs(300);

struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn workspace_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

/// What is missing for the browser test, each with what provides it.
fn missing_prerequisites(root: &Path) -> Vec<String> {
    let mut missing = Vec::new();
    match Command::new("node").arg("--version").output() {
        Ok(out) if out.status.success() => {}
        _ => missing.push("`node` (Node.js) on PATH".to_string()),
    }
    if !root.join("e2e/node_modules/playwright-core/package.json").is_file() {
        missing.push("e2e/node_modules/playwright-core (npm ci in e2e/)".to_string());
    }
    if !Path::new(CHROMIUM).is_file() {
        missing.push(format!("{CHROMIUM} (Debian package `chromium`)"));
    }
    missing
}

/// One blocking HTTP/1.1 GET; the body, or None when the proxy cannot be reached.
fn http_get(addr: SocketAddr, path: &str) -> Option<String> {
    let mut stream = TcpStream::connect_timeout(&addr, Duration::from_secs(2)).ok()?;
    stream.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    write!(stream, "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n").ok()?;
    let mut reply = String::new();
    stream.read_to_string(&mut reply).ok()?;
    reply.split_once("\r\n\r\n").map(|(_, body)| body.to_string())
}

fn start_rampart(root: &Path) -> (Killed, SocketAddr, mpsc::Receiver<String>) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_rampart"))
        .current_dir(root)
        .args(["up", "--proxy-addr", "127.0.0.1:0", "--inference-addr", "127.0.0.1:0"])
        .args(["--auth-addr", "127.0.0.1:0", "--extproc-addr", "127.0.0.1:0", "--management-addr", "127.0.0.1:0"])
        .args(["--audit-log", "off"])
        .env("ORT_DYLIB_PATH", root.join("vendor/onnxruntime/lib/libonnxruntime.so.1.22.1"))
        // The spec script expects the defaults: demo upstream, shadow start, kills by reset,
        // loopback admin.
        .env("WAF_MODE", "shadow")
        .env("WAF_KILL_RESPONSE", "reset")
        .env("WAF_THRESHOLD", "0.5")
        .env("WAF_ADMIN_ALLOW", "127.0.0.1,::1")
        .env_remove("TARGET_URL")
        .env_remove("INFERENCE_URL")
        .env_remove("WAF_ADMIN_TOKEN")
        .env_remove("WAF_TRUSTED_PROXIES")
        .env_remove("WAF_ON_SCORING_ERROR")
        .env_remove("PROXY_ADDR")
        .env("RAMPART_LOG", "warn")
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("rampart starts");
    let stderr = BufReader::new(child.stderr.take().unwrap());
    let child = Killed(child);
    // Keeps draining stderr for the whole run (mode changes are logged at warn).
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in stderr.lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let mut banner: Vec<String> = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(90);
    while !banner.iter().any(|l| l.contains("rampart up: dashboard")) {
        let left = deadline.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok(line) => banner.push(line),
            Err(_) => panic!("no start-up banner from `rampart up` within 90 s; got:\n{}", banner.join("\n")),
        }
    }
    let proxy_line = banner
        .iter()
        .find(|l| l.starts_with("rampart up: proxy"))
        .unwrap_or_else(|| panic!("no proxy line in the banner:\n{}", banner.join("\n")));
    let url = proxy_line.split_whitespace().find(|w| w.starts_with("http://")).expect("the proxy line holds its URL");
    let addr: SocketAddr = url.trim_start_matches("http://").parse().expect("the proxy URL is host:port");
    (child, addr, rx)
}

#[test]
fn dashboard_end_to_end_in_chromium() {
    let root = workspace_root();
    let missing = missing_prerequisites(&root);
    assert!(
        missing.is_empty(),
        "the dashboard browser test needs: {}.\nRun scripts/bootstrap (it calls scripts/bootstrap-browser: \
         apt chromium, nodejs/npm, and `npm ci` in e2e/), then run the tests again.",
        missing.join("; ")
    );

    let (rampart, proxy, stderr) = start_rampart(&root);
    let deadline = Instant::now() + Duration::from_secs(90);
    loop {
        let health = http_get(proxy, "/_waf/health").unwrap_or_default();
        if health.contains("\"scorer\":\"ok\"") {
            break;
        }
        assert!(Instant::now() < deadline, "the models did not load within 90 s; last /_waf/health: {health}");
        std::thread::sleep(Duration::from_millis(200));
    }

    let shots = root.join("target/e2e-screenshots");
    let (status, out, err) = run_spec(&root, "e2e/dashboard.spec.mjs", &[format!("http://{proxy}")]);
    drop(rampart);
    let server_log: Vec<String> = stderr.try_iter().collect();
    let report = format!(
        "--- node e2e/dashboard.spec.mjs stdout ---\n{out}\n--- stderr ---\n{err}\n--- rampart stderr ---\n{}\n(screenshots: {})",
        server_log.join("\n"),
        shots.display()
    );
    match status {
        Some(status) if status.success() => println!("{report}"),
        Some(status) => panic!("the dashboard browser test failed ({status}):\n{report}"),
        None => panic!("the dashboard browser test ran past {} s and was stopped:\n{report}", SPEC_TIMEOUT.as_secs()),
    }
}

/// Runs `node <spec> <args>` (bounded by [`SPEC_TIMEOUT`]): its status (None when stopped),
/// stdout and stderr.
fn run_spec(root: &Path, spec: &str, args: &[String]) -> (Option<std::process::ExitStatus>, String, String) {
    let mut node = Command::new("node")
        .arg(root.join(spec))
        .args(args)
        .current_dir(root)
        .env("E2E_SCREENSHOTS", root.join("target/e2e-screenshots"))
        .env("CHROMIUM_PATH", CHROMIUM)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("node starts");
    let collect = |pipe: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut text = String::new();
            let _ = BufReader::new(pipe).read_to_string(&mut text);
            text
        })
    };
    let out = collect(Box::new(node.stdout.take().unwrap()));
    let err = collect(Box::new(node.stderr.take().unwrap()));
    let started = Instant::now();
    let status = loop {
        if let Some(status) = node.try_wait().expect("waiting for node") {
            break Some(status);
        }
        if started.elapsed() > SPEC_TIMEOUT {
            let _ = node.kill();
            let _ = node.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    (status, out.join().unwrap_or_default(), err.join().unwrap_or_default())
}

/// The feed's "exclude" button (e2e/exclude.spec.mjs): with a policy file, an attack killed
/// through `rampart proxy` becomes a confirmed exclusion from the browser, after which the
/// same request passes and the payload in another parameter is still killed; without one,
/// there is no button and the page says why.
#[test]
fn exclude_button_in_chromium() {
    let root = workspace_root();
    let missing = missing_prerequisites(&root);
    assert!(missing.is_empty(), "the exclude browser test needs: {} (run scripts/bootstrap)", missing.join("; "));
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let app = runtime.block_on(common::proxy::upstream());
    for expect in ["policy", "none"] {
        let dir = policy_fixtures::test_dir(&format!("exclude-e2e-{expect}"));
        policy_fixtures::write_policy(&dir.join("policy.toml"), "[defaults]\nkill_response = \"forbidden\"\n");
        let proxy = if expect == "policy" {
            policy_fixtures::start_policy_proxy(&dir, app.addr, &[])
        } else {
            policy_fixtures::start_proxy_without_policy(&dir, app.addr, &["--kill-response", "forbidden"])
        };
        let (status, out, err) = run_spec(&root, "e2e/exclude.spec.mjs", &[format!("http://{}", proxy.addr), expect.to_string()]);
        let report = format!("--- stdout ---\n{out}\n--- stderr ---\n{err}\n--- rampart log ---\n{}", proxy.log_text());
        assert!(status.is_some_and(|s| s.success()), "e2e/exclude.spec.mjs {expect} failed ({status:?}):\n{report}");
        println!("{out}");
        if expect == "policy" {
            let file = std::fs::read_to_string(dir.join("policy.toml")).unwrap();
            assert!(file.contains("rule = \"script-tag\", field = \"query:q\""), "the file holds the exclusion:\n{file}");
        }
    }
}
