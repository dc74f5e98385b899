//! The table: per scenario, each proxy's req/s, p50/p99, the ratio, the latency Rampart adds
//! and the CPU each proxy spent per request.

use testkit::wrk::WrkReport;

/// One proxy's figures for one scenario.
pub struct Measured {
    pub wrk: WrkReport,
    /// CPU seconds the proxy's process tree spent during the run / requests served, in µs.
    pub cpu_us_per_request: f64,
}

pub struct Row {
    pub label: String,
    pub nginx: Measured,
    pub rampart: Option<Measured>,
}

pub struct Context {
    pub header: Vec<String>,
}

pub fn print(context: &Context, rows: &[Row]) {
    println!();
    for line in &context.header {
        println!("{line}");
    }
    println!();
    let columns =
        ["scenario", "nginx req/s", "rampart req/s", "ratio", "nginx p50/p99 ms", "rampart p50/p99 ms", "+p50 ms", "CPU us/req n / r"];
    println!(
        "{:<26} {:>11} {:>13} {:>6} {:>17} {:>19} {:>8} {:>17}",
        columns[0], columns[1], columns[2], columns[3], columns[4], columns[5], columns[6], columns[7]
    );
    println!("{}", "-".repeat(26 + 12 + 14 + 7 + 18 + 20 + 9 + 18));
    let mut warnings = Vec::new();
    for row in rows {
        let n = &row.nginx;
        let (r_rps, ratio, r_lat, added, r_cpu) = match &row.rampart {
            Some(r) => (
                rps(&r.wrk),
                format!("{:.2}", if n.wrk.rps > 0.0 { r.wrk.rps / n.wrk.rps } else { 0.0 }),
                format!("{:.2} / {:.2}", r.wrk.p50_ms, r.wrk.p99_ms),
                format!("{:+.2}", r.wrk.p50_ms - n.wrk.p50_ms),
                format!("{:.1}", r.cpu_us_per_request),
            ),
            None => ("-".into(), "-".into(), "-".into(), "-".into(), "-".into()),
        };
        println!(
            "{:<26} {:>11} {:>13} {:>6} {:>17} {:>19} {:>8} {:>17}",
            row.label,
            rps(&n.wrk),
            r_rps,
            ratio,
            format!("{:.2} / {:.2}", n.wrk.p50_ms, n.wrk.p99_ms),
            r_lat,
            added,
            format!("{:.1} / {r_cpu}", n.cpu_us_per_request)
        );
        for (who, m) in [("nginx", Some(n)), ("rampart", row.rampart.as_ref())] {
            let Some(m) = m else { continue };
            if m.wrk.non_2xx > 0 {
                warnings.push(format!("{who} {}: {} non-2xx/3xx answers (they count in req/s)", row.label, m.wrk.non_2xx));
            }
            if let Some(errors) = &m.wrk.socket_errors {
                warnings.push(format!("{who} {}: socket errors: {errors}", row.label));
            }
        }
    }
    println!();
    println!("ratio = rampart req/s / nginx req/s (1.00 = as fast as a bare nginx proxy); +p50 = rampart p50 - nginx p50.");
    println!("CPU us/req = user+system CPU of the proxy's processes (nginx: master and workers) during the run / requests served.");
    if !warnings.is_empty() {
        println!();
        println!("warnings (* in the table):");
        for w in warnings {
            println!("  - {w}");
        }
    }
}

/// Requests per second, starred when some answers were not 2xx/3xx.
fn rps(wrk: &WrkReport) -> String {
    format!("{}{:.0}", if wrk.non_2xx > 0 { "*" } else { "" }, wrk.rps)
}
