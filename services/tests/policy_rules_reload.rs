//! Rules-directory reload over real sockets: the `rampart proxy` executable with
//! `--rules-dir`; a rule file is changed while it runs and the new rule kills within a bounded
//! time (the old one no longer does); a broken file (a pattern Hyperscan refuses, a TOML
//! error) is rejected with a log line naming the file and the rule, counted in
//! `waf_rules_reloads_total{result="error"}`, and the rules in force keep killing; SIGHUP
//! reloads too.

mod common;
mod policy_fixtures;

use std::path::Path;
use std::time::{Duration, Instant};

use common::proxy::{metrics_text, sample, send, upstream};
use policy_fixtures::{get_at, start_proxy_without_policy, test_dir, write_policy, PolicyProxy};

/// One detect rule of the `xss` detector matching `marker` (a string no other rule or code
/// detector cares about).
fn rule_file(id: &str, pattern: &str) -> String {
    format!("detector = \"xss\"\n\n[[rule]]\nid = \"{id}\"\npattern = \"{pattern}\"\nscore = 0.9\n")
}

async fn status(proxy: &PolicyProxy, marker: &str) -> u16 {
    send(proxy.addr, get_at("shop.test", &format!("/search?q={marker}"))).await.status
}

/// Polls until `marker` gets `want`; returns how long that took.
async fn until_status(proxy: &PolicyProxy, marker: &str, want: u16) -> Duration {
    let started = Instant::now();
    loop {
        if status(proxy, marker).await == want {
            return started.elapsed();
        }
        assert!(started.elapsed() < Duration::from_secs(10), "{marker} did not get {want} within 10 s:\n{}", proxy.log_text());
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// The `took_ms` of every `rules reloaded` line so far.
fn reload_times(proxy: &PolicyProxy) -> Vec<u64> {
    let log = proxy.log_text();
    log.lines()
        .filter(|l| l.contains("rules reloaded"))
        .filter_map(|l| l.split("took_ms=").nth(1)?.split_whitespace().next()?.parse().ok())
        .collect()
}

async fn errors_counted(proxy: &PolicyProxy) -> f64 {
    sample(&metrics_text(proxy.addr).await, "waf_rules_reloads_total{result=\"error\"}")
}

fn write_rules(dir: &Path, text: &str) {
    write_policy(&dir.join("markers.toml"), text);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_changed_rule_file_kills_at_once_and_a_broken_one_keeps_the_old_rules() {
    let app = upstream().await;
    let dir = test_dir("rules-reload");
    let rules = dir.join("rules");
    std::fs::create_dir_all(&rules).unwrap();
    write_rules(&rules, &rule_file("marker-one", "zzqmarker1"));
    let rules_arg = rules.to_string_lossy().into_owned();
    let proxy = start_proxy_without_policy(&dir, app.addr, &["--rules-dir", &rules_arg, "--kill-response", "forbidden"]);

    assert_eq!(status(&proxy, "zzqmarker1").await, 403, "the start-up rule kills");
    assert_eq!(status(&proxy, "zzqmarker2").await, 200);

    // A new rule replaces the old one while the proxy runs.
    write_rules(&rules, &rule_file("marker-two", "zzqmarker2"));
    let seen_after = until_status(&proxy, "zzqmarker2", 403).await;
    assert_eq!(status(&proxy, "zzqmarker1").await, 200, "the removed rule no longer kills");
    println!("file change -> new rule killing: {} ms", seen_after.as_millis());

    // A pattern Hyperscan refuses: rejected, named, counted; the rules in force keep killing.
    let before = errors_counted(&proxy).await;
    write_rules(&rules, &rule_file("broken-group", "zzq(marker3"));
    let deadline = Instant::now() + Duration::from_secs(10);
    while errors_counted(&proxy).await < before + 1.0 {
        assert!(Instant::now() < deadline, "the broken file was not rejected:\n{}", proxy.log_text());
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let log = proxy.log_text();
    let line = log.lines().find(|l| l.contains("rules directory rejected")).expect("a rejection line");
    assert!(line.contains("xss:broken-group") && line.contains("markers.toml"), "names the rule and its file: {line}");
    assert_eq!(status(&proxy, "zzqmarker2").await, 403, "the old rules stay in force");

    // A TOML error: rejected with the file and line.
    write_rules(&rules, "detector = \"xss\"\n\n[[rule]]\nid = \"x\"\npatern = \"zzqmarker4\"\n");
    let deadline = Instant::now() + Duration::from_secs(10);
    while errors_counted(&proxy).await < before + 2.0 {
        assert!(Instant::now() < deadline, "the bad TOML was not rejected:\n{}", proxy.log_text());
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let log = proxy.log_text();
    let line = log.lines().filter(|l| l.contains("rules directory rejected")).nth(1).expect("a second rejection line");
    // toml's report goes on over the next lines, quoting the line at fault.
    assert!(line.contains("markers.toml") && line.contains("line 5"), "{line}");
    assert!(log.contains("unknown field `patern`"), "{log}");
    assert_eq!(status(&proxy, "zzqmarker2").await, 403, "the old rules stay in force");

    // Fixed, then SIGHUP with no file change: reloaded again.
    write_rules(&rules, &rule_file("marker-five", "zzqmarker5"));
    until_status(&proxy, "zzqmarker5", 403).await;
    let reloads = reload_times(&proxy).len();
    let _ = std::process::Command::new("kill").args(["-HUP", &proxy.pid().to_string()]).status();
    let deadline = Instant::now() + Duration::from_secs(10);
    while reload_times(&proxy).len() <= reloads {
        assert!(Instant::now() < deadline, "SIGHUP did not reload:\n{}", proxy.log_text());
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(status(&proxy, "zzqmarker5").await, 403);
    let oks = sample(&metrics_text(proxy.addr).await, "waf_rules_reloads_total{result=\"ok\"}");
    assert!(oks >= 3.0, "{oks}");
    println!("rules reload took_ms: {:?}", reload_times(&proxy));
}

/// The built-in rule set (every file of scoring/rules/) reloaded from a directory: what a
/// real reload costs, and the engine still kills with it.
#[tokio::test(flavor = "multi_thread")]
async fn the_full_rule_set_reloads_off_the_request_path() {
    let app = upstream().await;
    let dir = test_dir("rules-full");
    let rules = dir.join("rules");
    std::fs::create_dir_all(&rules).unwrap();
    let shipped = common::workspace_root().join("scoring/rules");
    for entry in std::fs::read_dir(&shipped).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|x| x == "toml") {
            std::fs::copy(&path, rules.join(path.file_name().unwrap())).unwrap();
        }
    }
    let rules_arg = rules.to_string_lossy().into_owned();
    let proxy = start_proxy_without_policy(&dir, app.addr, &["--rules-dir", &rules_arg, "--kill-response", "forbidden"]);
    let attack = "/search?q=%3Cscript%3Ex%3C%2Fscript%3E";
    assert_eq!(send(proxy.addr, get_at("shop.test", attack)).await.status, 403);
    let (mut served, mut slowest) = (0, Duration::ZERO);
    for round in 1..=2 {
        let _ = std::process::Command::new("kill").args(["-HUP", &proxy.pid().to_string()]).status();
        // Compiling ~200 rules into Hyperscan takes seconds on a loaded machine.
        let deadline = Instant::now() + Duration::from_secs(240);
        while reload_times(&proxy).len() < round {
            // Requests keep being answered, by the old rules, while the databases compile.
            let sent = Instant::now();
            assert_eq!(send(proxy.addr, get_at("shop.test", attack)).await.status, 403);
            assert_eq!(send(proxy.addr, get_at("shop.test", "/search?q=shoes")).await.status, 200);
            slowest = slowest.max(sent.elapsed() / 2);
            served += 2;
            assert!(Instant::now() < deadline, "no reload:\n{}", proxy.log_text());
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
    assert_eq!(send(proxy.addr, get_at("shop.test", attack)).await.status, 403, "the reloaded set kills");
    println!(
        "full rule set reload took_ms: {:?}; {served} requests answered during the reloads, slowest {} ms",
        reload_times(&proxy),
        slowest.as_millis()
    );
}
