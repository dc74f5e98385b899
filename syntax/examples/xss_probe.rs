//! Prints what the XSS checks say about each line of stdin (a debugging aid).
use std::io::BufRead;
use syntax::{checks, Input};

fn main() {
    for line in std::io::stdin().lock().lines() {
        let line = line.unwrap_or_default();
        let mut input = Input::new(&line);
        input.sensitivity = 4;
        let found: Vec<String> = checks().iter().filter_map(|c| c.inspect(&input)).map(|f| format!("{}@{}", f.reason, f.level)).collect();
        println!("{:<40} | {}", found.join(","), line);
    }
}
