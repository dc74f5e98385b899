//! Compiled Hyperscan databases kept on disk between runs.
//!
//! Compiling the rule set is ~90 % of a process's start-up: about 8.7 s of CPU for the built-in
//! rules (perf, 2026-11-25), paid again by every restart, every replica a rollout starts and
//! every test that spawns `rampart`. Hyperscan can serialise a compiled database; loading one
//! takes milliseconds. A database is looked up by what produced it: every pattern's expression,
//! flags and id, plus the Hyperscan library version and the CPU it was compiled for.
//!
//! Trust: a cached database decides what Rampart detects, so a file someone else could write is
//! a bypass. The cache is used only when its folder (and every file read from it) belongs to
//! this user and is writable by nobody else; the folder is created 0700. Each file repeats the
//! exact key text it was built from and ends with a checksum, so a hash collision, a truncated
//! write or a file from another build is recompiled, never used. Anything unexpected falls
//! back to compiling: the cache can make start-up faster, never different.
//!
//! Where: [`CacheDir`] (the binary's `--db-cache-dir` / `RAMPART_DB_CACHE_DIR`; `off` disables
//! it), by default `$XDG_CACHE_HOME/rampart/hyperscan`, else `$HOME/.cache/rampart/hyperscan`;
//! neither set: no cache. One setting per process: the first engine built decides.

use std::fs;
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use hyperscan::prelude::*;
use hyperscan::Serialized;

/// File format tag; bump when the layout below changes.
const MAGIC: &[u8; 8] = b"RMPHS\x00\x00\x01";
/// Older files beyond this many are removed when a new one is written (rule edits leave
/// stale databases behind).
const MAX_FILES: usize = 64;

/// Where compiled databases are kept.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum CacheDir {
    /// `$XDG_CACHE_HOME/rampart/hyperscan`, else `$HOME/.cache/rampart/hyperscan`.
    #[default]
    Default,
    /// Compile at every start.
    Off,
    At(PathBuf),
}

impl std::str::FromStr for CacheDir {
    type Err = std::convert::Infallible;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        Ok(match text {
            "" | "default" => CacheDir::Default,
            "off" => CacheDir::Off,
            dir => CacheDir::At(PathBuf::from(dir)),
        })
    }
}

static SETTING: OnceLock<CacheDir> = OnceLock::new();

/// Sets the process's cache folder; only the first call (or first compile) counts.
pub fn configure(setting: &CacheDir) {
    let _ = SETTING.set(setting.clone());
}

/// Compiles `patterns` into a block database, or loads the one compiled earlier from the same
/// patterns on this machine.
pub fn build(patterns: Vec<Pattern>) -> Result<BlockDatabase, hyperscan::Error> {
    let Some(dir) = cache_dir() else { return Patterns(patterns).build() };
    let key = key_text(&patterns);
    let path = dir.join(format!("{:016x}.hsdb", fnv1a(key.as_bytes())));
    if let Some(db) = load(&path, &key) {
        return Ok(db);
    }
    let db: BlockDatabase = Patterns(patterns).build()?;
    if let Err(err) = store(dir, &path, &key, &db) {
        tracing::debug!(path = %path.display(), %err, "hyperscan database not cached");
    }
    Ok(db)
}

/// The cache folder in force, created on first use; `None` when disabled or not trustworthy.
fn cache_dir() -> Option<&'static Path> {
    static DIR: OnceLock<Option<PathBuf>> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = configured_dir()?;
        match prepare(&dir) {
            Ok(()) => Some(dir),
            Err(why) => {
                tracing::warn!(dir = %dir.display(), why, "RAMPART_DB_CACHE_DIR (--db-cache-dir): not using the Hyperscan database cache (rules are compiled at every start)");
                None
            }
        }
    })
    .as_deref()
}

fn configured_dir() -> Option<PathBuf> {
    match SETTING.get_or_init(CacheDir::default) {
        CacheDir::Off => None,
        CacheDir::At(dir) => Some(dir.clone()),
        CacheDir::Default => {
            let base = std::env::var_os("XDG_CACHE_HOME")
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
                .or_else(|| std::env::var_os("HOME").filter(|v| !v.is_empty()).map(|h| PathBuf::from(h).join(".cache")))?;
            Some(base.join("rampart").join("hyperscan"))
        }
    }
}

/// Creates the folder 0700 if missing and checks that only this user can write into it.
fn prepare(dir: &Path) -> Result<(), &'static str> {
    if !dir.exists() {
        fs::DirBuilder::new().recursive(true).mode(0o700).create(dir).map_err(|_| "cannot create the folder")?;
    }
    let meta = fs::metadata(dir).map_err(|_| "cannot read the folder")?;
    if !meta.is_dir() {
        return Err("not a folder");
    }
    if !owned_privately(&meta) {
        return Err("the folder must belong to this user and be writable by nobody else");
    }
    Ok(())
}

fn owned_privately(meta: &fs::Metadata) -> bool {
    // /proc/self belongs to the effective user (std has no geteuid).
    let me = fs::metadata("/proc/self").map(|m| m.uid()).ok();
    me == Some(meta.uid()) && meta.permissions().mode() & 0o022 == 0
}

/// Everything the compiled database depends on, as text compared byte for byte on load.
fn key_text(patterns: &[Pattern]) -> String {
    let mut key = format!("hyperscan {}\n", hyperscan::version_str().to_string_lossy());
    // Hyperscan compiles for the host CPU's features; a database from another CPU may be
    // refused (or slower): the model name keeps machines apart when a cache folder is shared.
    key.push_str(&cpu_model());
    key.push('\n');
    for p in patterns {
        key.push_str(&format!("{:?}\t{:?}\t{:?}\t{:?}\t{}\n", p.id, p.flags, p.som, p.ext, p.expression));
    }
    key
}

fn cpu_model() -> String {
    let info = fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let field = |name: &str| info.lines().find(|l| l.starts_with(name)).unwrap_or_default().to_string();
    format!("{} | {}", field("model name"), field("flags"))
}

fn load(path: &Path, key: &str) -> Option<BlockDatabase> {
    let meta = fs::symlink_metadata(path).ok()?;
    if !meta.is_file() || !owned_privately(&meta) {
        return None;
    }
    let bytes = fs::read(path).ok()?;
    let (body, sum) = bytes.split_at_checked(bytes.len().checked_sub(8)?)?;
    if fnv1a(body).to_le_bytes() != sum {
        return None;
    }
    let rest = body.strip_prefix(MAGIC.as_slice())?;
    let (len, rest) = rest.split_at_checked(8)?;
    let len = usize::try_from(u64::from_le_bytes(len.try_into().ok()?)).ok()?;
    let (stored_key, db_bytes) = rest.split_at_checked(len)?;
    if stored_key != key.as_bytes() {
        return None;
    }
    db_bytes.deserialize().ok()
}

fn store(dir: &Path, path: &Path, key: &str, db: &BlockDatabase) -> std::io::Result<()> {
    let serialized = db.serialize().map_err(std::io::Error::other)?;
    let mut body = Vec::with_capacity(MAGIC.len() + 8 + key.len() + serialized.len() + 8);
    body.extend_from_slice(MAGIC);
    body.extend_from_slice(&(key.len() as u64).to_le_bytes());
    body.extend_from_slice(key.as_bytes());
    body.extend_from_slice(&serialized);
    let sum = fnv1a(&body);
    body.extend_from_slice(&sum.to_le_bytes());
    // Write then rename: processes starting together never read a half-written file.
    let tmp = dir.join(format!(".{}.{}.tmp", std::process::id(), fnv1a(path.as_os_str().as_encoded_bytes())));
    let mut file = fs::OpenOptions::new().write(true).create_new(true).mode_private().open(&tmp)?;
    file.write_all(&body)?;
    drop(file);
    fs::rename(&tmp, path).inspect_err(|_| {
        let _ = fs::remove_file(&tmp);
    })?;
    prune(dir);
    Ok(())
}

/// Keeps the newest [`MAX_FILES`] databases.
fn prune(dir: &Path) {
    let Ok(entries) = fs::read_dir(dir) else { return };
    let mut files: Vec<(std::time::SystemTime, PathBuf)> = entries
        .filter_map(Result::ok)
        .filter(|e| e.path().extension().is_some_and(|x| x == "hsdb"))
        .filter_map(|e| Some((e.metadata().ok()?.modified().ok()?, e.path())))
        .collect();
    if files.len() <= MAX_FILES {
        return;
    }
    files.sort();
    for (_, path) in &files[..files.len() - MAX_FILES] {
        let _ = fs::remove_file(path);
    }
}

trait PrivateMode {
    fn mode_private(&mut self) -> &mut Self;
}

impl PrivateMode for fs::OpenOptions {
    fn mode_private(&mut self) -> &mut Self {
        std::os::unix::fs::OpenOptionsExt::mode(self, 0o600)
    }
}

/// FNV-1a, 64 bits: a file name and a corruption check, not a security boundary (the key
/// text itself is compared in full).
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn patterns() -> Vec<Pattern> {
        let mut p: Pattern = "union\\s+select".parse().unwrap();
        p.id = Some(7);
        p.flags = CompileFlags::CASELESS;
        vec![p]
    }

    fn matches(db: &BlockDatabase, text: &str) -> Vec<u32> {
        let scratch = db.alloc_scratch().unwrap();
        let mut ids = Vec::new();
        db.scan(text, &scratch, |id, _, _, _| {
            ids.push(id);
            Matching::Continue
        })
        .unwrap();
        ids
    }

    #[test]
    fn a_stored_database_loads_and_matches_like_the_compiled_one() {
        let dir = std::env::temp_dir().join(format!("rampart-dbcache-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        prepare(&dir).unwrap();
        let key = key_text(&patterns());
        let path = dir.join("t.hsdb");
        let db: BlockDatabase = Patterns(patterns()).build().unwrap();
        store(&dir, &path, &key, &db).unwrap();
        let loaded = load(&path, &key).expect("the stored database loads");
        assert_eq!(matches(&loaded, "1 UNION  select 2"), vec![7]);
        assert!(matches(&loaded, "union of selected").is_empty());
        // Another key (a changed rule) never gets this database.
        assert!(load(&path, &key.replace("union", "onion")).is_none());
        // A flipped byte fails the checksum.
        let mut bytes = fs::read(&path).unwrap();
        let mid = bytes.len() / 2;
        bytes[mid] ^= 1;
        fs::write(&path, &bytes).unwrap();
        assert!(load(&path, &key).is_none());
        // A file others may write is not trusted.
        store(&dir, &path, &key, &db).unwrap();
        fs::set_permissions(&path, fs::Permissions::from_mode(0o666)).unwrap();
        assert!(load(&path, &key).is_none());
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_world_writable_folder_is_refused() {
        let dir = std::env::temp_dir().join(format!("rampart-dbcache-open-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        fs::set_permissions(&dir, fs::Permissions::from_mode(0o777)).unwrap();
        assert!(prepare(&dir).is_err());
        let _ = fs::remove_dir_all(&dir);
    }
}
