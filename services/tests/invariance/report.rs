//! The printed matrix: caught / gap counts per door, per placement, per encoding and per
//! detector, and the controls.

use std::collections::BTreeMap;

/// One attack cell's result at one door.
pub struct Row<'a> {
    pub door: &'a str,
    pub placement: &'a str,
    pub encoding: &'a str,
    pub detector: &'a str,
    pub caught: bool,
}

#[derive(Default, Clone, Copy)]
struct Count {
    caught: usize,
    total: usize,
}

impl std::fmt::Display for Count {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:>4}/{:<4}", self.caught, self.total)
    }
}

/// Prints one table per dimension: a line per value, a column per door ("caught/total").
pub fn print<'a>(rows: &[Row<'a>], doors: &[&str]) {
    for title in ["placement", "encoding", "detector"] {
        let key = |r: &Row<'a>| -> &'a str {
            match title {
                "placement" => r.placement,
                "encoding" => r.encoding,
                _ => r.detector,
            }
        };
        let mut table: BTreeMap<&str, Vec<Count>> = BTreeMap::new();
        for row in rows {
            let counts = table.entry(key(row)).or_insert_with(|| vec![Count::default(); doors.len()]);
            let at = doors.iter().position(|d| *d == row.door).expect("a known door");
            counts[at].total += 1;
            counts[at].caught += row.caught as usize;
        }
        println!("\ncaught/total by {title}");
        println!("{:<26}{}", title, doors.iter().map(|d| format!("{d:>15}")).collect::<String>());
        for (value, counts) in &table {
            println!("{value:<26}{}", counts.iter().map(|c| format!("{:>15}", c.to_string())).collect::<String>());
        }
    }
    let mut totals = vec![Count::default(); doors.len()];
    for row in rows {
        let at = doors.iter().position(|d| *d == row.door).unwrap();
        totals[at].total += 1;
        totals[at].caught += row.caught as usize;
    }
    println!("{:<26}{}", "ALL", totals.iter().map(|c| format!("{:>15}", c.to_string())).collect::<String>());
}
