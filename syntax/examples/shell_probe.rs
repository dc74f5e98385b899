//! Prints what the command-injection checks make of each argument (debugging aid).
use syntax::{inspect_all, Input};
fn main() {
    for a in std::env::args().skip(1) {
        let mut input = Input::new(&a);
        input.sensitivity = 4;
        let found: Vec<_> = inspect_all(&input).collect();
        println!("{a:?} -> {found:?}");
    }
}
