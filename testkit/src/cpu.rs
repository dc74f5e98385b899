//! CPU time a process and its descendants spent (Linux /proc): nginx's workers are children of
//! its master, so the master's pid stands for the whole server.

/// User + system CPU seconds of `pid` and every descendant alive now. 0 for a process gone.
pub fn cpu_seconds(pid: u32) -> f64 {
    tree(pid).iter().map(|&p| own_ticks(p)).sum::<u64>() as f64 / ticks_per_second()
}

/// `pid` and its descendants, from each thread's `children` list.
fn tree(pid: u32) -> Vec<u32> {
    let mut all = vec![pid];
    let mut i = 0;
    while i < all.len() {
        let tasks = std::fs::read_dir(format!("/proc/{}/task", all[i])).into_iter().flatten().flatten();
        for task in tasks {
            let children = std::fs::read_to_string(task.path().join("children")).unwrap_or_default();
            all.extend(children.split_whitespace().filter_map(|c| c.parse::<u32>().ok()));
        }
        i += 1;
    }
    all
}

/// utime + stime of one process (all its threads), in clock ticks.
fn own_ticks(pid: u32) -> u64 {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else { return 0 };
    // The command name is parenthesised and may hold spaces: fields are counted after it.
    let Some((_, after)) = stat.rsplit_once(") ") else { return 0 };
    let fields: Vec<&str> = after.split_whitespace().collect();
    // state is field 3 of stat(5); utime 14 and stime 15 are the 12th and 13th after the name.
    let tick = |i: usize| fields.get(i).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
    tick(11) + tick(12)
}

/// /proc reports in USER_HZ, which Linux fixes at 100 on every architecture it runs on.
fn ticks_per_second() -> f64 {
    100.0
}

#[cfg(test)]
mod tests {
    #[test]
    fn this_process_spends_cpu() {
        // Busy until the counter moves (a loaded machine may give this thread little CPU).
        let before = super::cpu_seconds(std::process::id());
        let mut x = 0u64;
        let start = std::time::Instant::now();
        while super::cpu_seconds(std::process::id()) <= before && start.elapsed() < std::time::Duration::from_secs(20) {
            for _ in 0..100_000 {
                x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(7));
            }
        }
        assert!(super::cpu_seconds(std::process::id()) > before, "no CPU time counted in 20 s of spinning");
    }
}
