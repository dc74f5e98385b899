//! Where a relative runtime-file setting (the models folder, the ONNX Runtime library) is
//! found, so a released binary needs no source tree and no particular working directory.
//!
//! A relative path is looked up, first hit wins:
//! 1. in the working directory (a run from the repository, as `make run` does);
//! 2. under `<executable>/../lib/rampart/` — the install layout of `make install PREFIX=…` and
//!    of the container image (`PREFIX/bin/rampart`, `PREFIX/lib/rampart/models`, …);
//! 3. under `<executable>/../../` — `target/release/rampart` started from elsewhere.
//!
//! Nothing found: the path is returned as given and the engine's start-up check names it and
//! the setting (a loud failure, never a run without models). Absolute paths are used as given.

use std::path::{Path, PathBuf};

/// The install root below an executable's folder (`PREFIX/bin` → `PREFIX/lib/rampart`).
pub const LIB_DIR_FROM_BIN: &str = "../lib/rampart";

/// `relative` resolved as described in the module comment.
pub fn locate(setting: &Path) -> PathBuf {
    if setting.is_absolute() || setting.exists() {
        return setting.to_path_buf();
    }
    // /proc/self/exe, or where there is no /proc (a chroot) an absolute argv[0].
    let exe = std::env::current_exe().ok().or_else(|| std::env::args_os().next().map(PathBuf::from).filter(|p| p.is_absolute()));
    let exe_dir = exe.and_then(|exe| exe.parent().map(Path::to_path_buf));
    exe_dir
        .into_iter()
        .flat_map(|dir| [dir.join(LIB_DIR_FROM_BIN), dir.join("../..")])
        .map(|root| root.join(setting))
        .find(|candidate| candidate.exists())
        .unwrap_or_else(|| setting.to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn absolute_and_present_paths_are_kept() {
        assert_eq!(locate(Path::new("/no/such/models")), PathBuf::from("/no/such/models"));
        // The test runs in the crate folder, which has a Cargo.toml.
        assert_eq!(locate(Path::new("Cargo.toml")), PathBuf::from("Cargo.toml"));
    }

    #[test]
    fn a_path_found_nowhere_is_returned_as_given() {
        assert_eq!(locate(Path::new("no-such-folder-anywhere")), PathBuf::from("no-such-folder-anywhere"));
    }
}
