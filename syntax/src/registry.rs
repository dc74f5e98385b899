//! Every code detector, in one list: adding a family is one line here and one file beside it.

use std::sync::LazyLock;

use crate::trigger::TriggerTable;
use crate::{Check, Trigger};

static CHECKS: &[&dyn Check] = &[
    &crate::xss_js::XSS_JS,
    &crate::xss_html::XSS_HTML,
    &crate::shell_unix::SHELL_UNIX,
    &crate::shell_windows::SHELL_WINDOWS,
    &crate::graphql::GraphqlCheck,
    &crate::mail::MailCheck,
    &crate::crlf::CrlfCheck,
    &crate::protocol::ProtocolCheck,
    &crate::scanner::ScannerCheck,
    &crate::ssi::SsiCheck,
    &crate::jndi::Jndi,
    &crate::php::Php,
    &crate::java::Java,
    &crate::redirect::OpenRedirect,
    &crate::path_lax::PathLax,
    &crate::restricted_file::RestrictedFile,
    &crate::system_path::SystemPath,
    &crate::rfi::RemoteFileInclude,
    &crate::smuggled_request::SmuggledRequest,
    &crate::encoding_abuse::EncodingAbuse,
    &crate::js_node::NODEJS_INJECTION,
    &crate::proto_pollution::PROTOTYPE_POLLUTION,
    &crate::session_fixation::SESSION_FIXATION,
];

pub fn checks() -> &'static [&'static dyn Check] {
    CHECKS
}

/// Each check's trigger, in registry order, read once: the per-input test is then a bit test,
/// not a virtual call.
static TRIGGERS: LazyLock<Vec<Trigger>> = LazyLock::new(|| CHECKS.iter().map(|c| c.trigger()).collect());

pub fn triggers() -> &'static [Trigger] {
    &TRIGGERS
}

/// The same triggers as one table, tested for all checks at once (one bit per check).
static TABLE: LazyLock<TriggerTable> = LazyLock::new(|| TriggerTable::new(&TRIGGERS));

pub fn trigger_table() -> &'static TriggerTable {
    &TABLE
}
