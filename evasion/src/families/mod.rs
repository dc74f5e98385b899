//! Every attack family's grammar, one file each; adding a family is one line in [`FAMILIES`].

use crate::Family;

mod crlf;
mod deserialization;
mod encoding_abuse;
mod graphql;
mod java;
mod jndi;
mod mail;
mod nodejs;
mod path_traversal;
mod php;
mod pi_disguise;
mod protocol;
/// Public: the syntax tests sample it directly.
pub mod prototype_pollution;
mod redirect;
mod redteam_cmdi_unix;
mod redteam_cmdi_windows;
mod redteam_ldap;
mod redteam_nosqli;
mod redteam_path;
mod redteam_sqli;
mod redteam_ssrf;
mod redteam_ssti;
mod redteam_xpath;
mod redteam_xss;
mod redteam_xxe;
mod restricted_file;
mod rfi;
mod scanner;
mod session_fixation;
mod shell_unix;
mod shell_windows;
mod smuggled_request;
mod spreadsheet;
mod sqli_bypass;
mod sqli_header;
mod sqli_padded;
mod ssi;
pub mod xss_html;
pub mod xss_js;

static FAMILIES: &[&dyn Family] = &[
    &xss_js::XSS_JS_EXPRESSION,
    &xss_html::XSS_HTML,
    &shell_unix::ShellUnix,
    &shell_windows::ShellWindows,
    &ssi::Ssi,
    &graphql::Graphql,
    &mail::Mail,
    &crlf::Crlf,
    &scanner::Scanner,
    &protocol::Protocol,
    &php::PhpInjection,
    &java::JavaInjection,
    &jndi::Jndi,
    &redirect::Redirect,
    &path_traversal::PathTraversal,
    &sqli_header::SqliHeader,
    &sqli_bypass::SqliBypass,
    &redteam_cmdi_unix::RedteamCmdiUnix,
    &redteam_cmdi_windows::RedteamCmdiWindows,
    &redteam_path::RedteamPath,
    &rfi::RemoteFileInclude,
    &restricted_file::RestrictedFile,
    &smuggled_request::SmuggledRequest,
    &encoding_abuse::EncodingAbuse,
    &redteam_xss::RedteamXss,
    &nodejs::NodeJs,
    &session_fixation::SessionFixation,
    &prototype_pollution::PrototypePollution,
    &redteam_sqli::RedteamSqli,
    &redteam_ssti::RedteamSsti,
    &redteam_ssrf::RedteamSsrf,
    &redteam_xxe::RedteamXxe,
    &redteam_nosqli::RedteamNosqli,
    &redteam_ldap::RedteamLdap,
    &redteam_xpath::RedteamXpath,
    &sqli_padded::SqliPadded,
    &pi_disguise::PiDisguise,
    &spreadsheet::SpreadsheetFormula,
    &deserialization::Deserialization,
];

pub fn families() -> &'static [&'static dyn Family] {
    FAMILIES
}

pub fn family(name: &str) -> Option<&'static dyn Family> {
    FAMILIES.iter().copied().find(|f| f.name() == name)
}

/// A red-team grammar's sanity: `n` variants from one seed hold more than `min_distinct`
/// different payloads, and the same seed gives the same variants.
#[cfg(test)]
fn assert_varied_and_seeded(family: &dyn Family, n: usize, min_distinct: usize) {
    let a = crate::sample(family, 5, n);
    let distinct: std::collections::BTreeSet<&str> = a.iter().map(|v| v.payload.as_str()).collect();
    assert!(distinct.len() > min_distinct, "{}: {} distinct of {n}", family.name(), distinct.len());
    assert_eq!(a, crate::sample(family, 5, n), "{}", family.name());
}
