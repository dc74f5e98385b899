//! Every attack family's grammar, one file each; adding a family is one line in [`FAMILIES`].

use crate::Family;

mod redirect;
mod sqli_header;

static FAMILIES: &[&dyn Family] = &[
    &redirect::Redirect,
    &sqli_header::SqliHeader,
];

pub fn families() -> &'static [&'static dyn Family] {
    FAMILIES
}

pub fn family(name: &str) -> Option<&'static dyn Family> {
    FAMILIES.iter().copied().find(|f| f.name() == name)
}
