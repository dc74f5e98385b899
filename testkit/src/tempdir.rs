//! A private directory under the system temp dir, removed on drop unless kept.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

pub struct TempDir {
    path: PathBuf,
    keep: bool,
}

impl TempDir {
    /// `<tmp>/rampart-<label>-<pid>-<n>`, mode 0755: nginx run as root drops its workers to
    /// `nobody`, who must be able to enter it.
    pub fn new(label: &str) -> std::io::Result<TempDir> {
        static N: AtomicUsize = AtomicUsize::new(0);
        let path = std::env::temp_dir().join(format!("rampart-{label}-{}-{}", std::process::id(), N.fetch_add(1, Ordering::Relaxed)));
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path)?;
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))?;
        Ok(TempDir { path, keep: false })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// A sub-directory (created, 0755).
    pub fn sub(&self, name: &str) -> std::io::Result<PathBuf> {
        let dir = self.path.join(name);
        std::fs::create_dir_all(&dir)?;
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755))?;
        Ok(dir)
    }

    /// Leave the directory behind (to read configs and logs after a run).
    pub fn keep(&mut self) {
        self.keep = true;
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        if !self.keep {
            let _ = std::fs::remove_dir_all(&self.path);
        }
    }
}
