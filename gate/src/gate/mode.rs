//! The operating mode as one value shared by every front door of a process: `POST /api/mode`
//! on the proxy writes it, and the proxy, the auth adapter and ext_proc read it per request.

use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Arc;

use super::WafMode;

/// A cheap handle on the process's mode; clones share the same value.
#[derive(Clone, Debug)]
pub struct SharedMode(Arc<AtomicU8>);

impl SharedMode {
    pub fn new(mode: WafMode) -> Self {
        SharedMode(Arc::new(AtomicU8::new(code(mode))))
    }

    pub fn get(&self) -> WafMode {
        match self.0.load(Ordering::Relaxed) {
            1 => WafMode::Active,
            _ => WafMode::Shadow,
        }
    }

    /// Sets the mode and returns the one it replaced.
    pub fn set(&self, mode: WafMode) -> WafMode {
        match self.0.swap(code(mode), Ordering::Relaxed) {
            1 => WafMode::Active,
            _ => WafMode::Shadow,
        }
    }
}

fn code(mode: WafMode) -> u8 {
    match mode {
        WafMode::Shadow => 0,
        WafMode::Active => 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clones_share_one_value() {
        let mode = SharedMode::new(WafMode::Shadow);
        let other_door = mode.clone();
        assert_eq!(mode.set(WafMode::Active), WafMode::Shadow);
        assert_eq!(other_door.get(), WafMode::Active);
    }
}
