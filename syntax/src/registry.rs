//! Every code detector, in one list: adding a family is one line here and one file beside it.

use crate::Check;

static CHECKS: &[&dyn Check] = &[
    &crate::redirect::OpenRedirect,
];

pub fn checks() -> &'static [&'static dyn Check] {
    CHECKS
}
