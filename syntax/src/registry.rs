//! Every code detector, in one list: adding a family is one line here and one file beside it.

use crate::Check;

static CHECKS: &[&dyn Check] = &[&crate::shell_unix::SHELL_UNIX, &crate::shell_windows::SHELL_WINDOWS];

pub fn checks() -> &'static [&'static dyn Check] {
    CHECKS
}
