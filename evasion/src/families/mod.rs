//! Every attack family's grammar, one file each; adding a family is one line in [`FAMILIES`].

use crate::Family;

mod java;
mod jndi;
mod php;

static FAMILIES: &[&dyn Family] = &[
    &php::PhpInjection,
    &java::JavaInjection,
    &jndi::Jndi,
];

pub fn families() -> &'static [&'static dyn Family] {
    FAMILIES
}

pub fn family(name: &str) -> Option<&'static dyn Family> {
    FAMILIES.iter().copied().find(|f| f.name() == name)
}
