//! A fleet reading one policy file: three `rampart proxy` replicas (real processes) scoring
//! through one shared inference service, behind real nginx round-robin, all started with
//! `--policy` on the same file (as a Kubernetes ConfigMap mount would be). The file is changed
//! once (a custom rule added by rename, as a ConfigMap update swaps it) while clients loop
//! benign requests through nginx: every replica enforces the new policy within a bounded time
//! and no client request fails.

mod common;
// Only the balancer is used here; the held-request fixture serves scale_out.rs.
#[allow(dead_code)]
#[path = "common/fleet.rs"]
mod fleet;
mod policy_fixtures;

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::proxy::{send, send_from, upstream};
use policy_fixtures::{get_at, start_replica, test_dir, write_policy, PolicyProxy};
use services::limits::ProcessLimits;
use services::run::start_inference_with;

const BEFORE: &str = "[defaults]\nkill_response = \"forbidden\"\n";
const TARGET: &str = "/api/orders?action=purge-all";
/// Generous: the settle delay is 50 ms; this only bounds a hung replica.
const BOUND: Duration = Duration::from_secs(15);

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn three_replicas_enforce_one_policy_change_without_a_failed_request() {
    let engine = common::proxy::engine_with(&["--no-models"]);
    let inference = start_inference_with(engine, "127.0.0.1:0".parse().unwrap(), 1 << 20, ProcessLimits::unobserved().gate).unwrap();
    let inference_url = format!("http://{}", inference.addr);
    let app = upstream().await;
    let dir = test_dir("fleet");
    write_policy(&dir.join("policy.toml"), BEFORE);
    let flags = ["--inference-url", inference_url.as_str()];
    let replicas: Vec<PolicyProxy> = (0..3).map(|i| start_replica(&dir, &format!("replica-{i}"), app.addr, &flags)).collect();
    let balancer = fleet::Balancer::start(&replicas.iter().map(|r| r.addr).collect::<Vec<_>>());
    for replica in &replicas {
        assert_eq!(send(replica.addr, get_at("shop.test", TARGET)).await.status, 200, "not yet a rule");
    }

    // Clients loop benign requests through nginx across the change.
    let stop = Arc::new(AtomicBool::new(false));
    let (sent, failed) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let clients: Vec<_> = (0..4)
        .map(|c| {
            let (stop, sent, failed, addr) = (stop.clone(), sent.clone(), failed.clone(), balancer.addr);
            tokio::spawn(async move {
                while !stop.load(Ordering::Relaxed) {
                    let path = format!("/search?q=blue+shoes&client={c}");
                    match send_from(addr, None, get_at("shop.test", &path)).await {
                        Ok(reply) if reply.status == 200 => {}
                        other => {
                            failed.fetch_add(1, Ordering::Relaxed);
                            eprintln!("failed: {:?}", other.map(|r| r.status));
                        }
                    }
                    sent.fetch_add(1, Ordering::Relaxed);
                }
            })
        })
        .collect();
    tokio::time::sleep(Duration::from_millis(300)).await;

    let after = format!("{BEFORE}\n[[rules]]\nid = \"purge-orders\"\nliteral = \"purge-all\"\npart = \"query:action\"\nscore = 0.95\n");
    let changed = Instant::now();
    write_policy(&dir.join("policy.toml"), &after);
    let mut in_force = Vec::new();
    for (i, replica) in replicas.iter().enumerate() {
        loop {
            if send(replica.addr, get_at("shop.test", TARGET)).await.status == 403 {
                in_force.push(changed.elapsed());
                break;
            }
            assert!(changed.elapsed() < BOUND, "replica {i} does not enforce the new policy:\n{}", replica.log_text());
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    stop.store(true, Ordering::Relaxed);
    for client in clients {
        client.await.unwrap();
    }
    // Through the balancer too: whichever replica answers, the request is killed.
    for _ in 0..6 {
        assert_eq!(send_from(balancer.addr, None, get_at("shop.test", TARGET)).await.unwrap().status, 403);
    }
    let (sent, failed) = (sent.load(Ordering::Relaxed), failed.load(Ordering::Relaxed));
    eprintln!("fleet: new policy in force on the 3 replicas after {in_force:?} (measured from the rename, polled in turn); {sent} client requests through nginx, {failed} failed");
    assert!(sent > 50, "{sent}");
    assert_eq!(failed, 0, "{}", balancer.error_log());
    for replica in &replicas {
        assert!(replica.log_text().contains("policy reloaded"), "{}", replica.log_text());
    }
}
