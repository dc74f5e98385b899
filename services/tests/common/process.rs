//! The `rampart` binary as a child process (start, read its listeners from its log, kill on
//! drop): the testkit crate's, shared with the benchmark binaries.
pub use testkit::process::*;
