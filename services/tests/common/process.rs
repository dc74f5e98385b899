//! The `rampart` binary as a child process (start, read its listeners from its log, kill on
//! drop): the testkit crate's, shared with the benchmark binaries.
// Each test binary compiles `common` whole; most never start a child.
#[allow(unused_imports)]
pub use testkit::process::*;
