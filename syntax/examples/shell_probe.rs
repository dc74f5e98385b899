//! Prints what the code detectors make of each argument; with `BENCH=1`, times them on a
//! benign JSON body's values instead (a debugging and measuring aid).
use syntax::{inspect_all, Input};

fn main() {
    if std::env::var("BENCH").is_ok() {
        let values = [
            "Alex Smith",
            "alex@example.com",
            "https://www.example.com/path/to/page?x=1&y=2",
            "2024-01-05T10:00:00Z",
            "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Safari/537.36",
            "I tried to update my order but the page said to select a different date; can you help? Thanks -- Pat",
            "C:\\Users\\Public\\Documents\\report.docx",
            "{\"a\":1}",
            "en-US,en;q=0.9",
            "50% off -- today only!",
            "utm_source=newsletter&utm_medium=email",
            "12345",
            "true",
            "Tom & Jerry's \"best\" episodes",
            "price=$5; tax=$1",
            "/api/v1/items/42?fields=id,name",
            "gzip, deflate, br",
            "a1b2c3d4e5f6",
            "ok",
            "{id,name}",
        ];
        let total: usize = values.iter().map(|v| v.len()).sum();
        let n = 20_000;
        let start = std::time::Instant::now();
        let mut hits = 0;
        for _ in 0..n {
            for v in values {
                hits += inspect_all(&Input::new(v)).count();
            }
        }
        let per = start.elapsed().as_nanos() as f64 / n as f64;
        println!("{} values, {total} bytes: {:.0} ns per set ({hits} hits)", values.len(), per);
        for c in syntax::checks() {
            for v in values {
                let input = Input::new(v);
                let start = std::time::Instant::now();
                for _ in 0..2000 {
                    std::hint::black_box(c.inspect(std::hint::black_box(&input)));
                }
                let ns = start.elapsed().as_nanos() / 2000;
                if ns > 100 {
                    println!("  {ns:>6} ns  {v}");
                }
            }
        }
        return;
    }
    for a in std::env::args().skip(1) {
        let mut input = Input::new(&a);
        input.sensitivity = 4;
        let found: Vec<_> = inspect_all(&input).collect();
        println!("{a:?} -> {found:?}");
    }
}
