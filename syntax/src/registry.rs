//! Every code detector, in one list: adding a family is one line here and one file beside it.

use crate::Check;

static CHECKS: &[&dyn Check] = &[&crate::xss_js::XSS_JS, &crate::xss_html::XSS_HTML];

pub fn checks() -> &'static [&'static dyn Check] {
    CHECKS
}
