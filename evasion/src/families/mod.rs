//! Every attack family's grammar, one file each; adding a family is one line in [`FAMILIES`].

use crate::Family;

mod shell_unix;
mod shell_windows;

static FAMILIES: &[&dyn Family] = &[&shell_unix::ShellUnix, &shell_windows::ShellWindows];

pub fn families() -> &'static [&'static dyn Family] {
    FAMILIES
}

pub fn family(name: &str) -> Option<&'static dyn Family> {
    FAMILIES.iter().copied().find(|f| f.name() == name)
}
