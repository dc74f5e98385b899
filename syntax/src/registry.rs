//! Every code detector, in one list: adding a family is one line here and one file beside it.

use crate::Check;

static CHECKS: &[&dyn Check] = &[
    &crate::jndi::Jndi,
    &crate::php::Php,
    &crate::java::Java,
];

pub fn checks() -> &'static [&'static dyn Check] {
    CHECKS
}
