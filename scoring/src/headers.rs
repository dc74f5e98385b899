//! Header policy: which part of each header value the detectors read.
//!
//! Every header value reaches the application, so every one is scored, except a short list
//! of headers whose values are machine-formatted — and those only while the value parses
//! as its grammar says. A value that fails its syntax is scored as text like any other.
//!
//! | header                                   | exempt while the value is                      |
//! |------------------------------------------|------------------------------------------------|
//! | content-length                           | digits                                         |
//! | content-type                             | a media type with token / quoted parameters    |
//! | accept                                   | a list of media ranges with parameters         |
//! | accept-encoding, te                      | a list of tokens with `;q=` weights            |
//! | accept-language                          | a list of language tags with `;q=` weights     |
//! | connection                               | distinct common options (close, keep-alive...) |
//! | pragma, keep-alive                       | a list of tokens / `token=token` pairs         |
//! | upgrade-insecure-requests, dnt           | digits                                         |
//! | if-modified-since, if-unmodified-since   | an HTTP date                                   |
//! | if-none-match, if-match                  | `*` or a list of entity tags                   |
//! | host                                     | a host name or address with an optional port   |
//!
//! Credentials: `Authorization` / `Proxy-Authorization` with `Basic` → only the user name is
//! scored (it reaches login queries); the password and any other scheme's token (Bearer...)
//! are never scored nor forwarded while they are credential-shaped. One exception: a password
//! holding a Log4j lookup is scored and forwarded whole — servers log failed logins, and an
//! attacker who read this policy would otherwise put `${jndi:...}` exactly there. Cookies are
//! split by the request parser: names and values are both scored.
//!
//! Framing headers (`Content-Length`, `Transfer-Encoding`) are always forwarded, even when
//! exempt from scoring: the request-level smuggling check reads them together.

use std::borrow::Cow;

/// The text of header `name` the detectors should score, or None when there is nothing to
/// score (a machine-formatted value that passed its syntax check, or a credential).
/// `name` may be in any case.
pub fn scored_value<'a>(name: &str, value: &'a str) -> Option<Cow<'a, str>> {
    // Whoever logs the header runs the lookup, whatever grammar the rest of the value keeps
    // (`%24%7Bjndi%3A...` is all token characters: a valid Accept-Encoding or auth scheme).
    if syntax::has_log4j_lookup(value) {
        return Some(Cow::Borrowed(value));
    }
    let lower = name.to_ascii_lowercase();
    if is_credential_header(&lower) {
        return credential_scored_text(value);
    }
    match syntax_of(&lower) {
        Some(valid) if valid(value.trim()) => None,
        _ => Some(Cow::Borrowed(value)),
    }
}

/// What a front door forwards to a (possibly remote) scorer for header `name`: the value the
/// engine needs to score it, with credentials reduced to what is scored (`Basic` keeps only
/// the user name, re-encoded with an empty password). Content-Type always travels: the body
/// parser reads it. None: nothing to forward.
pub fn forwarded_value<'a>(name: &str, value: &'a str) -> Option<Cow<'a, str>> {
    let lower = name.to_ascii_lowercase();
    if matches!(lower.as_str(), "content-type" | "cookie" | "content-length" | "transfer-encoding") || syntax::has_log4j_lookup(value) {
        return Some(Cow::Borrowed(value));
    }
    if is_credential_header(&lower) {
        return match basic_user(value) {
            Some(BasicUser::User { pair_lookup: true, .. }) => Some(Cow::Borrowed(value)),
            Some(BasicUser::User { user, .. }) => {
                use base64::Engine as _;
                let encoded = base64::engine::general_purpose::STANDARD.encode(format!("{user}:"));
                Some(Cow::Owned(format!("Basic {encoded}")))
            }
            Some(BasicUser::Malformed) | None => credential_scored_text(value).map(|_| Cow::Borrowed(value)),
        };
    }
    scored_value(&lower, value).map(|_| Cow::Borrowed(value))
}

fn is_credential_header(lower: &str) -> bool {
    matches!(lower, "authorization" | "proxy-authorization")
}

enum BasicUser {
    /// The user name, and whether `user:password` holds a Log4j lookup (then all of it is
    /// scored).
    User { user: String, pair_lookup: bool },
    /// `Basic` with something that is not base64 of UTF-8 `user:password`.
    Malformed,
}

/// The user name of a `Basic` credential; None for any other scheme.
fn basic_user(value: &str) -> Option<BasicUser> {
    let value = value.trim();
    let (scheme, rest) = value.split_once(' ').unwrap_or((value, ""));
    if !scheme.eq_ignore_ascii_case("basic") {
        return None;
    }
    use base64::Engine as _;
    let decoded = base64::engine::general_purpose::STANDARD.decode(rest.trim()).ok().and_then(|bytes| String::from_utf8(bytes).ok());
    Some(match decoded.as_deref().and_then(|text| text.split_once(':')) {
        // The whole pair: a lookup split by the first `:` (`${jndi` : `ldap://...}`) still
        // reaches a logger that writes the decoded credential.
        Some((user, _password)) => {
            BasicUser::User { user: user.to_string(), pair_lookup: decoded.as_deref().is_some_and(syntax::has_log4j_lookup) }
        }
        None => BasicUser::Malformed,
    })
}

/// Basic → the user name (the whole `user:password` when the password holds a Log4j
/// lookup); a token of another scheme → nothing while it is token68 syntax; anything
/// malformed → the whole value as text (it is no working credential).
fn credential_scored_text(value: &str) -> Option<Cow<'_, str>> {
    match basic_user(value) {
        Some(BasicUser::User { pair_lookup: true, .. }) => basic_pair(value).map(Cow::Owned),
        Some(BasicUser::User { user, .. }) if user.is_empty() => None,
        Some(BasicUser::User { user, .. }) => Some(Cow::Owned(user)),
        Some(BasicUser::Malformed) => Some(Cow::Borrowed(value)),
        None => {
            let trimmed = value.trim();
            let (scheme, token) = trimmed.split_once(' ').unwrap_or((trimmed, ""));
            let token = token.trim();
            if !(is_token(scheme) && is_token68_or_params(token)) {
                Some(Cow::Borrowed(value))
            } else {
                token_lookup_text(if token.is_empty() { scheme } else { token }).map(Cow::Owned)
            }
        }
    }
}

/// The decoded text of a token's base64 segments (a JWT's header and claims) when one holds
/// a Log4j lookup: applications log claims (`sub`, `name`) before or without checking the
/// signature, so `{"sub":"${jndi:...}"}` in an unsigned token reaches a logger.
fn token_lookup_text(token: &str) -> Option<String> {
    use base64::engine::general_purpose::{STANDARD_NO_PAD, URL_SAFE_NO_PAD};
    use base64::Engine as _;
    token.split('.').take(3).filter(|seg| (8..=MAX_TOKEN_SEGMENT).contains(&seg.len())).find_map(|seg| {
        let seg = seg.trim_end_matches('=');
        let bytes = URL_SAFE_NO_PAD.decode(seg).or_else(|_| STANDARD_NO_PAD.decode(seg)).ok()?;
        let text = String::from_utf8(bytes).ok()?;
        syntax::has_log4j_lookup(&text).then_some(text)
    })
}

/// Longest token segment decoded for [`token_lookup_text`] (real JWT claims are a few KB).
const MAX_TOKEN_SEGMENT: usize = 16 * 1024;

/// The decoded `user:password` of a `Basic` credential.
fn basic_pair(value: &str) -> Option<String> {
    use base64::Engine as _;
    let (_scheme, rest) = value.trim().split_once(' ')?;
    let bytes = base64::engine::general_purpose::STANDARD.decode(rest.trim()).ok()?;
    String::from_utf8(bytes).ok()
}

type Syntax = fn(&str) -> bool;

/// The grammar a machine-formatted header must satisfy to go unscored.
fn syntax_of(lower: &str) -> Option<Syntax> {
    Some(match lower {
        "content-length" | "upgrade-insecure-requests" | "dnt" => is_digits,
        "content-type" => is_media_type,
        "accept" => |v| list_of(v, is_media_range),
        // Content codings are plain words (`gzip`, `br`, `zstd`, `trailers`): RFC 9110 token
        // characters would also let `` `id` `` or `'||'` through unscored.
        "accept-encoding" | "te" => |v| list_of(v, |item| with_params(item, |t| t == "*" || is_plain_token(t))),
        "accept-language" => |v| list_of(v, |item| with_params(item, is_language_range)),
        // Connection is read by the `protocol` detector: a repeated option (`close, close`) or
        // one naming an end-to-end header (`close, X-Forwarded-For`, which a proxy would strip)
        // is an anomaly, so only the common options, each once, stay exempt.
        "connection" => is_plain_connection,
        "pragma" | "keep-alive" => |v| list_of(v, is_token_or_pair),
        "if-modified-since" | "if-unmodified-since" => is_http_date,
        "if-none-match" | "if-match" => |v| v == "*" || list_of(v, is_entity_tag),
        "host" => is_host,
        _ => return None,
    })
}

fn is_digits(v: &str) -> bool {
    !v.is_empty() && v.len() <= 20 && v.bytes().all(|b| b.is_ascii_digit())
}

/// RFC 9110 token characters.
fn is_token(v: &str) -> bool {
    !v.is_empty() && v.bytes().all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}

/// A token without the characters SQL and scripts need (`'`, `%`, `&`, `|`, `` ` ``, `$`):
/// parameter values of real media types never use them.
fn is_plain_token(v: &str) -> bool {
    !v.is_empty() && v.bytes().all(|b| b.is_ascii_alphanumeric() || b"+-._*".contains(&b))
}

/// `type/subtype *( ; name=value )`, value a plain token or a quoted string of plain text.
fn is_media_type(v: &str) -> bool {
    let mut parts = v.split(';');
    let Some(essence) = parts.next() else { return false };
    let Some((kind, sub)) = essence.trim().split_once('/') else { return false };
    is_plain_token(kind) && is_plain_token(sub) && parts.all(|p| is_param(p.trim()))
}

/// `*/*`, `type/*`, a media type — each with parameters such as `q=0.8`.
fn is_media_range(v: &str) -> bool {
    is_media_type(v)
}

fn is_param(p: &str) -> bool {
    if p.is_empty() {
        return true;
    }
    let Some((name, value)) = p.split_once('=') else { return false };
    let value = value.trim();
    let value_ok = match value.strip_prefix('"').and_then(|v| v.strip_suffix('"')) {
        // Quoted values (multipart boundaries, charsets): plain text without quotes or escapes.
        Some(inner) => inner.bytes().all(|b| b.is_ascii_alphanumeric() || b" +-._:=/()?,".contains(&b)),
        None => is_plain_token(value) || value.bytes().all(|b| b.is_ascii_alphanumeric() || b"+-._:=/".contains(&b)) && !value.is_empty(),
    };
    is_plain_token(name.trim()) && value_ok
}

/// `item *( ; param )` where the item passes `item_ok`.
fn with_params(v: &str, item_ok: impl Fn(&str) -> bool) -> bool {
    let mut parts = v.split(';');
    parts.next().is_some_and(|item| item_ok(item.trim())) && parts.all(|p| is_param(p.trim()))
}

/// Comma-separated list; empty items (`a, , b`) allowed as RFC 9110 says.
fn list_of(v: &str, item_ok: impl Fn(&str) -> bool) -> bool {
    v.split(',').map(str::trim).all(|item| item.is_empty() || item_ok(item))
}

/// `en`, `en-US`, `zh-Hant-TW`, `*`.
fn is_language_range(v: &str) -> bool {
    v == "*"
        || (!v.is_empty() && v.split('-').all(|sub| !sub.is_empty() && sub.len() <= 8 && sub.bytes().all(|b| b.is_ascii_alphanumeric())))
}

/// `close`, `keep-alive`, `timeout=5`, `max=100`.
fn is_token_or_pair(v: &str) -> bool {
    match v.split_once('=') {
        Some((name, value)) => is_plain_token(name.trim()) && is_plain_token(value.trim()),
        None => is_plain_token(v),
    }
}

/// `keep-alive`, `Upgrade, HTTP2-Settings`: distinct options that browsers and HTTP libraries
/// send.
fn is_plain_connection(v: &str) -> bool {
    const OPTIONS: [&str; 5] = ["close", "keep-alive", "upgrade", "te", "http2-settings"];
    let tokens: Vec<&str> = v.split(',').map(str::trim).filter(|t| !t.is_empty()).collect();
    tokens.len() <= OPTIONS.len()
        && tokens
            .iter()
            .enumerate()
            .all(|(k, t)| OPTIONS.iter().any(|o| o.eq_ignore_ascii_case(t)) && !tokens[..k].iter().any(|u| u.eq_ignore_ascii_case(t)))
}

/// `Sun, 06 Nov 1994 08:49:37 GMT` and the obsolete forms: letters, digits, `, : -` and spaces.
fn is_http_date(v: &str) -> bool {
    !v.is_empty() && v.len() <= 64 && v.bytes().all(|b| b.is_ascii_alphanumeric() || b" ,:-".contains(&b))
}

/// `"abc"`, `W/"abc"`: the opaque part of real entity tags is hex, base64 or a version.
fn is_entity_tag(v: &str) -> bool {
    let v = v.strip_prefix("W/").unwrap_or(v);
    let Some(inner) = v.strip_prefix('"').and_then(|v| v.strip_suffix('"')) else { return false };
    inner.len() <= 256 && inner.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_.:+/=".contains(&b))
}

/// `example.com`, `example.com:8080`, `10.0.0.1`, `[::1]:443`.
fn is_host(v: &str) -> bool {
    !v.is_empty() && v.len() <= 255 && v.bytes().all(|b| b.is_ascii_alphanumeric() || b".-:[]_".contains(&b))
}

/// Token68 (`abc.def-ghi~+/==`), or `name=value` auth parameters (Digest, AWS4).
fn is_token68_or_params(v: &str) -> bool {
    if v.is_empty() {
        return true;
    }
    if v.bytes().all(|b| b.is_ascii_alphanumeric() || b"-._~+/=".contains(&b)) {
        return true;
    }
    list_of(v, |item| match item.split_once('=') {
        Some((name, value)) => {
            let value = value.trim();
            let inner = value.strip_prefix('"').and_then(|v| v.strip_suffix('"')).unwrap_or(value);
            is_plain_token(name.trim()) && inner.bytes().all(|b| b.is_ascii_alphanumeric() || b"-._~+/=:, ".contains(&b))
        }
        None => false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scored(name: &str, value: &str) -> Option<String> {
        scored_value(name, value).map(Cow::into_owned)
    }

    #[test]
    fn well_formed_machine_headers_are_exempt() {
        for (name, value) in [
            ("Content-Type", "application/x-www-form-urlencoded; charset=UTF-8"),
            ("Content-Type", "multipart/form-data; boundary=----WebKitFormBoundary7MA4YWxkTrZu0gW"),
            ("Content-Length", "348"),
            ("Accept", "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,*/*;q=0.8"),
            ("Accept-Encoding", "gzip, deflate, br, zstd"),
            ("Accept-Language", "en-US,en;q=0.9,de-DE;q=0.8"),
            ("If-None-Match", "W/\"5f3e-1a2b3c\", \"abc\""),
            ("If-Modified-Since", "Sun, 06 Nov 1994 08:49:37 GMT"),
            ("Host", "shop.example.com:8443"),
            ("Connection", "keep-alive"),
            ("Authorization", "Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.abc-_"),
        ] {
            assert_eq!(scored(name, value), None, "{name}: {value}");
        }
    }

    #[test]
    fn malformed_values_and_unlisted_headers_are_scored() {
        let ognl = "%{(#_='multipart/form-data').(#cmd='id')}";
        assert_eq!(scored("Content-Type", ognl).as_deref(), Some(ognl));
        assert!(scored("Accept-Language", "en' OR 1=1--").is_some());
        assert!(scored("If-None-Match", "\"x' union select 1--\"").is_some());
        assert!(scored("Host", "<script>alert(1)</script>").is_some());
        assert!(scored("Cache-Control", "no-cache").is_some(), "not on the exempt list");
        assert!(scored("Sec-Fetch-Site", "same-origin").is_some());
        assert!(scored("Connection", "close, close").is_some(), "a repeated option is the protocol detector's");
        assert!(scored("Connection", "keep-alive, X-Forwarded-For").is_some());
        assert_eq!(scored("Connection", "Upgrade, HTTP2-Settings"), None);
        // token characters, but no content coding is spelled with them
        assert!(scored("Accept-Encoding", "`id`").is_some());
        assert!(scored("TE", "trailers, '||'").is_some());
        assert_eq!(scored("TE", "trailers, deflate;q=0.5"), None);
    }

    #[test]
    fn basic_credentials_keep_only_the_user_name() {
        // admin' or '1'='1:secret
        let value = "Basic YWRtaW4nIG9yICcxJz0nMTpzZWNyZXQ=";
        assert_eq!(scored("Authorization", value).as_deref(), Some("admin' or '1'='1"));
        let forwarded = forwarded_value("authorization", value).unwrap();
        assert!(!forwarded.contains("c2VjcmV0"), "the password never travels: {forwarded}");
        use base64::Engine as _;
        let sent = base64::engine::general_purpose::STANDARD.decode(forwarded.trim_start_matches("Basic ")).unwrap();
        assert_eq!(sent, b"admin' or '1'='1:");
        assert_eq!(forwarded_value("Authorization", "Bearer abc.def"), None);
        assert_eq!(forwarded_value("Accept", "*/*"), None);
        assert!(forwarded_value("Content-Type", "text/plain").is_some());
    }
}
