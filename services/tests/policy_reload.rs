//! Hot reload of the policy file on the real `rampart proxy` executable: a file change and
//! SIGHUP put a new policy in force, a bad file is rejected (logged, counted) while the old
//! policy keeps running, and clients looping through reloads see no failed request.

mod common;
mod policy_fixtures;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::proxy::{metrics_text, sample, send, send_from, upstream};
use policy_fixtures::{get_at, start_policy_proxy, test_dir, write_policy, PolicyProxy, SCRIPT};

const KILLING: &str = "[defaults]\nkill_response = \"forbidden\"\n";
const EXCLUDING: &str = "[defaults]\nkill_response = \"forbidden\"\n\n[[scope]]\npath = \"/search\"\nexclusions = [{ rule = \"script-tag\", field = \"query:q\" }]\n";

fn reloads(text: &str, result: &str) -> f64 {
    sample(text, &format!("waf_policy_reloads_total{{result=\"{result}\"}}"))
}

/// Polls until `GET /search?q=<script>` answers `want`; returns how long that took.
async fn until_status(proxy: &PolicyProxy, want: u16) -> Duration {
    let started = Instant::now();
    loop {
        let status = send(proxy.addr, get_at("shop.test", &format!("/search?q={SCRIPT}"))).await.status;
        if status == want {
            return started.elapsed();
        }
        assert!(started.elapsed() < Duration::from_secs(10), "still {status} after 10 s, want {want}:\n{}", proxy.log_text());
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// The `took_us` of every `policy reloaded` log line.
fn reload_times_us(proxy: &PolicyProxy) -> Vec<u64> {
    proxy
        .log_text()
        .lines()
        .filter(|l| l.contains("policy reloaded"))
        .filter_map(|l| l.split("took_us=").nth(1)?.split_whitespace().next()?.parse().ok())
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn file_change_and_sighup_reload_and_a_bad_file_keeps_the_old_policy() {
    let app = upstream().await;
    let dir = test_dir("reload");
    let file = dir.join("policy.toml");
    write_policy(&file, KILLING);
    let proxy = start_policy_proxy(&dir, app.addr, &[]);
    until_status(&proxy, 403).await;

    // A file change takes effect without a restart.
    write_policy(&file, EXCLUDING);
    let took = until_status(&proxy, 200).await;
    eprintln!("file change to new behaviour: {took:?}; reload times (µs): {:?}", reload_times_us(&proxy));
    let text = metrics_text(proxy.addr).await;
    assert!(reloads(&text, "ok") >= 1.0 && reloads(&text, "error") == 0.0, "{text}");

    // A bad file: rejected, logged with its line, counted; the old policy keeps running.
    write_policy(&file, "[[scope]]\npath = \"/search\"\nthreshold = 7\n");
    let deadline = Instant::now() + Duration::from_secs(10);
    while reloads(&metrics_text(proxy.addr).await, "error") < 1.0 {
        assert!(Instant::now() < deadline, "the bad file was not reported:\n{}", proxy.log_text());
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let log = proxy.log_text();
    assert!(log.contains("policy file rejected") && log.contains("line 3") && log.contains("outside 0.0 to 1.0"), "{log}");
    assert_eq!(send(proxy.addr, get_at("shop.test", &format!("/search?q={SCRIPT}"))).await.status, 200, "the old policy still excludes");
    assert_eq!(send(proxy.addr, get_at("shop.test", &format!("/search?name={SCRIPT}"))).await.status, 403);

    // SIGHUP reloads the file as it is now (fixed again).
    write_policy(&file, KILLING);
    until_status(&proxy, 403).await;
    let before = reloads(&metrics_text(proxy.addr).await, "ok");
    let hup = std::process::Command::new("kill").args(["-HUP", &proxy.pid().to_string()]).status().unwrap();
    assert!(hup.success());
    let deadline = Instant::now() + Duration::from_secs(10);
    while reloads(&metrics_text(proxy.addr).await, "ok") < before + 1.0 {
        assert!(Instant::now() < deadline, "SIGHUP did not reload:\n{}", proxy.log_text());
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(send(proxy.addr, get_at("shop.test", &format!("/search?q={SCRIPT}"))).await.status, 403);
}

#[tokio::test(flavor = "multi_thread")]
async fn clients_looping_through_reloads_see_no_failure() {
    let app = upstream().await;
    let dir = test_dir("load");
    let file = dir.join("policy.toml");
    write_policy(&file, KILLING);
    let proxy = start_policy_proxy(&dir, app.addr, &[]);
    until_status(&proxy, 403).await;

    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let (sent, failed) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let mut clients = Vec::new();
    for _ in 0..4 {
        let (stop, sent, failed, addr) = (stop.clone(), sent.clone(), failed.clone(), proxy.addr);
        clients.push(tokio::spawn(async move {
            while !stop.load(Ordering::Relaxed) {
                // Benign requests must always be answered 200 by the upstream.
                match send_from(addr, None, get_at("shop.test", "/search?q=blue+shoes")).await {
                    Ok(reply) if reply.status == 200 => {}
                    _ => {
                        failed.fetch_add(1, Ordering::Relaxed);
                    }
                }
                sent.fetch_add(1, Ordering::Relaxed);
            }
        }));
    }
    for round in 0..10 {
        write_policy(&file, if round % 2 == 0 { EXCLUDING } else { KILLING });
        until_status(&proxy, if round % 2 == 0 { 200 } else { 403 }).await;
    }
    stop.store(true, Ordering::Relaxed);
    for client in clients {
        client.await.unwrap();
    }
    let times = reload_times_us(&proxy);
    eprintln!(
        "load through 10 reloads: {} requests, {} failed; reload times (µs): {times:?}",
        sent.load(Ordering::Relaxed),
        failed.load(Ordering::Relaxed)
    );
    assert!(sent.load(Ordering::Relaxed) > 100);
    assert_eq!(failed.load(Ordering::Relaxed), 0);
    assert!(times.len() >= 10, "{times:?}");
}

/// A custom rule (virtual patch) added by rewriting the file while the proxy runs: the request
/// it targets passed before and is killed after the reload; the same value in another
/// parameter still passes; the event names the custom rule and the field.
#[tokio::test(flavor = "multi_thread")]
async fn a_custom_rule_is_added_while_the_proxy_runs() {
    let app = upstream().await;
    let dir = test_dir("custom-rule");
    write_policy(&dir.join("policy.toml"), KILLING);
    let proxy = start_policy_proxy(&dir, app.addr, &[]);
    let target = "/api/orders?action=purge-all&id=7";
    assert_eq!(send(proxy.addr, get_at("shop.test", target)).await.status, 200, "benign to the built-in detectors");

    let before = reloads(&metrics_text(proxy.addr).await, "ok");
    let patched = format!(
        "{KILLING}\n[[rules]]\nid = \"purge-orders\"\nliteral = \"purge-all\"\npart = \"query:action\"\nscore = 0.95\npath = \"/api/orders\"\n"
    );
    let written = Instant::now();
    write_policy(&dir.join("policy.toml"), &patched);
    loop {
        if send(proxy.addr, get_at("shop.test", target)).await.status == 403 {
            break;
        }
        assert!(written.elapsed() < Duration::from_secs(10), "the custom rule is not in force after 10 s:\n{}", proxy.log_text());
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let in_force = written.elapsed();
    assert!(reloads(&metrics_text(proxy.addr).await, "ok") > before);
    assert_eq!(send(proxy.addr, get_at("shop.test", "/api/orders?note=purge-all")).await.status, 200, "another parameter");
    assert_eq!(send(proxy.addr, get_at("shop.test", "/api/users?action=purge-all")).await.status, 200, "another route");

    let events = send(proxy.addr, common::proxy::get("/api/events/recent")).await.json();
    let killed = events.as_array().unwrap().iter().rev().find(|e| e["action"] == "active_kill").expect("the kill has an event").clone();
    assert_eq!(
        (&killed["detector"], &killed["reason"], &killed["rule"], &killed["field"]),
        (&"custom".into(), &"custom:purge-orders".into(), &"purge-orders".into(), &"query:action".into()),
        "{killed}"
    );

    // A pattern that does not compile is rejected with its rule and line; the rule stays.
    write_policy(&dir.join("policy.toml"), &format!("{patched}\n[[rules]]\nid = \"broken\"\npattern = \"a(b\"\nscore = 0.5\n"));
    let deadline = Instant::now() + Duration::from_secs(10);
    while !proxy.log_text().contains("rule `broken` (line") {
        assert!(Instant::now() < deadline, "no rejection logged:\n{}", proxy.log_text());
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(send(proxy.addr, get_at("shop.test", target)).await.status, 403, "the old rules stay in force");
    eprintln!("custom rule in force {in_force:?} after the file was renamed; reload times (µs): {:?}", reload_times_us(&proxy));
}
