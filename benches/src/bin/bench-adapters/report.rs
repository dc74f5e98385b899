//! The table: per scenario, each stack's req/s, p50/p99, the ratio to its bare web server, the
//! latency Rampart adds, and the CPU the stack's processes spent per request.

use testkit::wrk::WrkReport;

use crate::stacks::Stack;

pub struct Row {
    pub stack: Stack,
    pub scenario: String,
    pub wrk: WrkReport,
    /// Web server (master and workers) + the Rampart service it asks, µs per request.
    pub cpu_us_per_request: f64,
}

pub fn print(header: &[String], rows: &[Row], warnings: &[String]) {
    println!();
    for line in header {
        println!("{line}");
    }
    println!();
    let line =
        |c: [&str; 8]| println!("{:<22} {:<22} {:>9} {:>17} {:>4} {:>6} {:>8} {:>11}", c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]);
    line(["stack", "scenario", "req/s", "p50 / p99 ms", "vs", "ratio", "+p50 ms", "CPU us/req"]);
    line(["-".repeat(22).as_str(), "-".repeat(22).as_str(), "---------", "-----------------", "----", "------", "--------", "-----------"]);
    let mut last_scenario = None;
    for row in rows {
        if last_scenario.is_some_and(|s: &str| s != row.scenario) {
            println!();
        }
        last_scenario = Some(row.scenario.as_str());
        let baseline = row
            .stack
            .baseline()
            .and_then(|(b, letter)| rows.iter().find(|r| r.stack == b && r.scenario == row.scenario).map(|r| (r, letter)));
        let (vs, ratio, added) = match baseline {
            Some((base, letter)) => (
                letter.to_string(),
                format!("{:.2}", if base.wrk.rps > 0.0 { row.wrk.rps / base.wrk.rps } else { 0.0 }),
                format!("{:+.2}", row.wrk.p50_ms - base.wrk.p50_ms),
            ),
            None => ("-".into(), "-".into(), "-".into()),
        };
        let rps = format!("{}{:.0}", if row.wrk.non_2xx > 0 { "*" } else { "" }, row.wrk.rps);
        let lat = format!("{:.2} / {:.2}", row.wrk.p50_ms, row.wrk.p99_ms);
        let cpu = format!("{:.1}", row.cpu_us_per_request);
        line([row.stack.label(), &row.scenario, &rps, &lat, &vs, &ratio, &added, &cpu]);
    }
    println!();
    println!("ratio = req/s / req/s of the baseline named under vs (A: bare nginx, B: bare Envoy; 1.00 = as fast as");
    println!("the bare web server); +p50 = p50 - baseline p50. CPU us/req = CPU of the web server's processes plus");
    println!("the Rampart service it asks, during the run / requests. nginx + auth_request does not send the body to");
    println!("Rampart (header-only config): its POST row scores method, URI and headers only.");
    if !warnings.is_empty() {
        println!();
        println!("warnings (* in the table):");
        for w in warnings {
            println!("  - {w}");
        }
    }
}
