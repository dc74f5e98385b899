//! Open redirect: a redirect *parameter* whose value makes the browser leave the site. The
//! value is read as a URL the way browsers read a `Location`: leading whitespace and control
//! bytes dropped, tabs and newlines inside the scheme and slash run ignored, `\` taken as `/`.
//! What counts is the URL's shape, not a host list:
//! - scheme-relative (`//evil.com`) or a slash run mixed with `\` / whitespace, or 3+ slashes;
//! - an http(s) scheme with the wrong number of slashes (`https:/\evil.com`, `http:evil.com`);
//! - userinfo before the host (`https://trusted.com@evil.com`), a numeric host (`//2130706433`);
//! - a script scheme (`javascript:`, `vbscript:`, `data:text/html`).
//!
//! A plain absolute URL (`https://app.example.com/cb`) is what OAuth `redirect_uri` and login
//! `next` parameters legitimately carry: it counts only in a redirect parameter, at level 4
//! (86 of 46,755 real requests carry one: ad and SSO redirects).
//!
//! Position decides the level: a query/form/JSON value whose name is a redirect parameter
//! (`next`, `redirect_uri`, `returnTo`, `url`, ...) counts at level 1; any query value that is
//! such a URL as a whole, or a request path starting with one (`//evil.com/`), at level 2; any
//! other body value at level 3. Elsewhere (headers, telemetry bodies, chat text) it does not
//! count here (the anywhere-patterns of rules/open-redirect.toml count from level 2).

use crate::{Check, Finding, Input, Place, Trigger};

pub struct OpenRedirect;

/// Parameter names (lower-case, alphanumerics only) that carry a redirect target.
const REDIRECT_NAMES: &[&str] = &[
    "redirect",
    "redirecturi",
    "redirecturl",
    "redirectto",
    "redir",
    "redirurl",
    "return",
    "returnto",
    "returnurl",
    "returnpath",
    "returnuri",
    "next",
    "nexturl",
    "nextpage",
    "url",
    "uri",
    "continue",
    "continueurl",
    "dest",
    "destination",
    "desturl",
    "goto",
    "go",
    "gotourl",
    "target",
    "targeturl",
    "callback",
    "callbackurl",
    "cb",
    "r",
    "u",
    "rurl",
    "forward",
    "forwardurl",
    "to",
    "out",
    "link",
    "success",
    "successurl",
    "failureurl",
    "cancelurl",
    "errorurl",
    "backurl",
    "back",
    "relaystate",
    "service",
    "checkouturl",
    "logouturl",
    "loginurl",
    "jump",
    "jumpto",
];

/// Name endings that make a redirect parameter (`post_logout_redirect_uri`, `onSuccessUrl`).
const REDIRECT_SUFFIXES: &[&str] = &[
    "redirect",
    "redirecturi",
    "redirecturl",
    "redirectto",
    "returnurl",
    "returnto",
    "nexturl",
    "callbackurl",
    "successurl",
    "continueurl",
];

impl Check for OpenRedirect {
    fn trigger(&self) -> Trigger {
        // A slash, a backslash, a scheme, an encoding, a Unicode slash look-alike, or the `@`
        // and `.` that turn the site's origin into a user name or a subdomain.
        Trigger::any_of(b"/\\:%\xE2\xE3\xEF@.")
    }

    fn detector(&self) -> &'static str {
        "open-redirect"
    }

    fn inspect(&self, input: &Input<'_>) -> Option<Finding> {
        // Full-width, math and kana look-alike slashes start with 0xE2 / 0xE3 / 0xEF in UTF-8.
        if !input.bytes.any(b"/\\:%\xE2\xE3\xEF@") && !input.text.starts_with('.') {
            return None;
        }
        let named = is_redirect_name(input.name);
        let level = match input.place {
            Place::QueryValue | Place::BodyValue if named => 1,
            Place::QueryValue | Place::Path => 2,
            Place::BodyValue => 3,
            _ => return None,
        };
        if level > input.sensitivity {
            return None;
        }
        let (reason, shape_level) = classify(input.text).or_else(|| nested(input.text))?;
        // A plain absolute URL is only worth a look in a redirect parameter: elsewhere
        // (tracking pixels, `ref=`, API fields) it is ordinary.
        if shape_level > 1 && !named {
            return None;
        }
        let level = level.max(shape_level);
        (level <= input.sensitivity).then_some(Finding { reason, score: 0.95, level })
    }
}

/// `post_logout_redirect_uri`, `returnTo`, `state[next]` → whether it names a redirect target.
pub fn is_redirect_name(name: &str) -> bool {
    // The last segment of a bracketed or dotted name (`state[next]`, `auth.returnTo`).
    let last = name.trim_end_matches(']').rsplit(['[', '.']).next().unwrap_or(name);
    let mut buf = [0u8; 48];
    let mut n = 0;
    for b in last.bytes() {
        if b.is_ascii_alphanumeric() {
            if n == buf.len() {
                return false;
            }
            buf[n] = b.to_ascii_lowercase();
            n += 1;
        }
    }
    let Ok(norm) = std::str::from_utf8(&buf[..n]) else { return false };
    !norm.is_empty() && (REDIRECT_NAMES.contains(&norm) || REDIRECT_SUFFIXES.iter().any(|s| norm.len() > s.len() && norm.ends_with(s)))
}

/// Whether `c` is a slash as browsers read a URL (backslash and full-width forms included).
fn is_slash(c: char) -> bool {
    matches!(c, '/' | '\\' | '／' | '＼' | '⁄' | '∕' | '⧸' | '﹨')
}

/// Tabs and newlines are removed from URLs by browsers; spaces survive only as padding.
fn is_ignored(c: char) -> bool {
    matches!(c, '\t' | '\n' | '\r')
}

/// Extra percent-encoding layers undone (applications that decode a parameter twice); the
/// engine's decoded view would also undo `\/` as a JS escape, which is the shape itself.
const EXTRA_LAYERS: usize = 2;

/// Bytes of a value read as a URL: a redirect target is short.
const URL_PREFIX: usize = 512;

/// The reason when `value` (or it with up to [`EXTRA_LAYERS`] percent layers undone) is a URL
/// that leaves the site by a confusing shape.
pub fn classify(value: &str) -> Option<(&'static str, u8)> {
    if let Some(found) = classify_url(value) {
        return Some(found);
    }
    let mut text = value.to_string();
    for _ in 0..EXTRA_LAYERS {
        let head = text.trim_start().as_bytes();
        if !head.iter().take(16).any(|&b| b == b'%') {
            return None;
        }
        // Clients never percent-encode letters and digits: a URL that needed them undone was
        // written to slip past a filter, whatever its shape.
        let letters_encoded = encodes_alphanumerics(head);
        text = percent_decode(&head[..head.len().min(URL_PREFIX)]);
        if let Some((reason, level)) = classify_url(&text) {
            return Some(if letters_encoded { ("open-redirect:redirect-param-encoded-url", 1) } else { (reason, level) });
        }
    }
    None
}

/// A same-site address whose own query carries a redirect parameter with a confusing target
/// (`/?url=//evil.com`, `/login?next=/\\evil.com`): the first redirect lands on a second one.
fn nested(value: &str) -> Option<(&'static str, u8)> {
    let head = &value[..floor_boundary(value, URL_PREFIX)];
    let (_, query) = head.split_once('?')?;
    query.split('&').take(32).find_map(|pair| {
        let (name, target) = pair.split_once('=')?;
        let found = is_redirect_name(name).then(|| classify(target)).flatten()?;
        (found.1 == 1).then_some(("open-redirect:redirect-param-nested", 1))
    })
}

/// The largest char boundary of `text` at or below `max`.
fn floor_boundary(text: &str, max: usize) -> usize {
    let mut end = max.min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    end
}

/// Whether `bytes` hold a `%XX` escape of an ASCII letter or digit.
fn encodes_alphanumerics(bytes: &[u8]) -> bool {
    let hex = |b: u8| (b as char).to_digit(16).map(|d| d as u8);
    bytes.windows(3).any(|w| w[0] == b'%' && matches!((hex(w[1]), hex(w[2])), (Some(h), Some(l)) if (h << 4 | l).is_ascii_alphanumeric()))
}

/// One layer of `%XX` undone (invalid escapes kept), lossily as UTF-8.
fn percent_decode(bytes: &[u8]) -> String {
    let hex = |b: u8| (b as char).to_digit(16).map(|d| d as u8);
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match (bytes[i], bytes.get(i + 1).and_then(|&b| hex(b)), bytes.get(i + 2).and_then(|&b| hex(b))) {
            (b'%', Some(h), Some(l)) => {
                out.push(h << 4 | l);
                i += 3;
            }
            (b, _, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The reason and the lowest level it counts at (1, or 2 for a plain absolute URL, which OAuth
/// and login flows carry legitimately).
fn classify_url(value: &str) -> Option<(&'static str, u8)> {
    let t = value.trim_start_matches(|c: char| c <= ' ' || c == '\u{feff}');
    // Scheme: letters (tabs and newlines inside ignored, as browsers do) up to `:`.
    let mut scheme = [0u8; 16];
    let mut len = 0;
    let mut rest = t;
    for (i, c) in t.char_indices() {
        if is_ignored(c) {
            continue;
        }
        if c == ':' {
            if len > 0 {
                rest = &t[i + 1..];
            }
            break;
        }
        if !(c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.')) || len == scheme.len() || (len == 0 && !c.is_ascii_alphabetic()) {
            len = 0;
            break;
        }
        scheme[len] = (c as u8).to_ascii_lowercase();
        len += 1;
    }
    let has_scheme = len > 0 && rest.len() < t.len();
    let scheme = &scheme[..if has_scheme { len } else { 0 }];
    if has_scheme {
        match scheme {
            b"javascript" | b"vbscript" | b"livescript" => return Some(("open-redirect:redirect-param-script-url", 1)),
            b"data" if rest.trim_start().get(..9).is_some_and(|m| m.eq_ignore_ascii_case("text/html")) => {
                return Some(("open-redirect:redirect-param-script-url", 1))
            }
            b"http" | b"https" | b"ftp" => {}
            // mailto:, tel:, custom app schemes (`myapp://callback`): not a web redirect.
            _ => return None,
        }
    }
    // The slash run: its length and whether it mixes backslashes or whitespace.
    let (mut slashes, mut backslash, mut space) = (0usize, false, false);
    let mut host_at = rest.len();
    for (i, c) in rest.char_indices() {
        if is_slash(c) {
            slashes += 1;
            backslash |= c != '/';
        } else if is_ignored(c) || c == ' ' {
            space = true;
        } else {
            host_at = i;
            break;
        }
    }
    let after = &rest[host_at..];
    // Appended to the site's own origin without a slash (`"https://shop.example" + next`):
    // `@evil.com` makes the origin a user name, `.evil.com` makes it a subdomain of evil.com.
    if !has_scheme && slashes == 0 && !space {
        if let Some(host) = after.strip_prefix(['@', '.']) {
            if host_like(authority(host)) {
                return Some(("open-redirect:redirect-param-origin-suffix", 1));
            }
        }
    }
    // A path that starts with another URL (`/https://evil.com`, `//https:/evil.com`): joined
    // naively to a base, or normalised, it becomes the off-site URL.
    if !has_scheme && slashes >= 1 && starts_with_web_scheme(after) {
        return Some(("open-redirect:redirect-param-url-in-path", 1));
    }
    // Look-alike slashes that some URL parsers fold into `//` (`〱evil.com`).
    let (lookalike, after) = match after.chars().next() {
        Some(c @ ('〱' | '〵' | 'ゝ' | 'ｰ')) if !has_scheme => (true, &after[c.len_utf8()..]),
        _ => (false, after),
    };
    let authority = authority(after);
    let (userinfo, host) = match authority.rfind('@') {
        Some(at) => (true, &authority[at + 1..]),
        None => (false, authority),
    };
    // `http://.evil.com`: an empty first label some parsers drop.
    let (empty_label, host) = match host.strip_prefix('.') {
        Some(rest) if slashes >= 2 => (true, rest),
        _ => (false, host),
    };
    if !host_like(host) {
        return None;
    }
    // Ideographic and full-width full stops: browsers fold them to `.`, filters that compare
    // the host as written do not (`http://evil。com`).
    if empty_label || host.contains(['。', '．', '｡']) {
        return Some(("open-redirect:redirect-param-host-confusion", 1));
    }
    if lookalike {
        return Some(("open-redirect:redirect-param-slash-confusion", 1));
    }
    let odd_slashes = backslash || space || slashes >= 3;
    if has_scheme {
        if slashes != 2 || odd_slashes {
            return Some(("open-redirect:redirect-param-malformed-url", 1));
        }
    } else if slashes < 2 {
        return None;
    } else if odd_slashes {
        return Some(("open-redirect:redirect-param-slash-confusion", 1));
    }
    if userinfo {
        return Some(("open-redirect:redirect-param-userinfo", 1));
    }
    if numeric_host(host) || host.starts_with('[') {
        return Some(("open-redirect:redirect-param-numeric-host", 1));
    }
    if has_scheme && confusing_after_host(&after[authority.len()..]) {
        return Some(("open-redirect:redirect-param-host-confusion", 1));
    }
    Some(if has_scheme { ("open-redirect:redirect-param-absolute-url", 4) } else { ("open-redirect:redirect-param-scheme-relative", 1) })
}

/// What follows an absolute URL's host when it is written to be split differently by two
/// parsers: a backslash (`https://evil.com\@trusted.com`), `@` after `?`/`#` before any slash
/// (`https://evil.com#@trusted.com/`), an encoded slash or dot-dot opening the path
/// (`https://evil.com/%2f..`, `https://evil.com%2f%2f.trusted.com`).
fn confusing_after_host(rest: &str) -> bool {
    let head = &rest.as_bytes()[..rest.len().min(96)];
    if head.first() == Some(&b'\\') || head.first() == Some(&b'%') {
        return true;
    }
    if matches!(head.first(), Some(b'?' | b'#')) {
        let upto = head.iter().position(|&b| b == b'/').unwrap_or(head.len());
        if head[..upto].contains(&b'@') {
            return true;
        }
    }
    let lower: Vec<u8> = head.iter().take(12).map(u8::to_ascii_lowercase).collect();
    [&b"/%2f"[..], b"/%5c", b"/..", b"/%2e%2e", b"/.%2e", b"/%2e."].iter().any(|p| lower.starts_with(p))
}

/// `http:` / `https:` (any case) at the start of `text`.
fn starts_with_web_scheme(text: &str) -> bool {
    let b = text.as_bytes();
    let word = |w: &[u8]| b.len() > w.len() && b[..w.len()].eq_ignore_ascii_case(w) && b[w.len()] == b':';
    word(b"http") || word(b"https")
}

/// The authority: up to the first slash, `?` or `#` (bounded: hosts are short).
fn authority(text: &str) -> &str {
    let end = text.char_indices().find(|&(_, c)| is_slash(c) || matches!(c, '?' | '#' | '%') || c <= ' ').map_or(text.len(), |(i, _)| i);
    let end = end.min(256);
    let mut end = end.min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// A host a browser would go to: a dotted name with an alphabetic last label, an IP (also
/// integer, hex or octal), an IPv6 literal or `localhost`; an optional port.
fn host_like(host: &str) -> bool {
    let host = match host.rfind(':') {
        Some(i) if !host.starts_with('[') && host[i + 1..].bytes().all(|b| b.is_ascii_digit()) => &host[..i],
        _ => host,
    };
    if host.is_empty() || host.len() > 253 {
        return false;
    }
    if host.starts_with('[') {
        return host.ends_with(']') && host.len() > 3;
    }
    if host.eq_ignore_ascii_case("localhost") || numeric_host(host) {
        return true;
    }
    let labels_ok = host.split(['.', '。', '．', '｡']).all(|l| !l.is_empty() && l.chars().all(|c| c.is_alphanumeric() || c == '-'));
    let tld = host.rsplit(['.', '。', '．', '｡']).next().unwrap_or("");
    labels_ok && host.contains(['.', '。', '．', '｡']) && tld.len() >= 2 && tld.chars().all(|c| c.is_alphabetic())
}

/// `2130706433`, `0x7f000001`, `0177.0.0.1`, `127.0.0.1`: hosts written as numbers.
fn numeric_host(host: &str) -> bool {
    let parts: Vec<&str> = host.split('.').collect();
    if parts.is_empty() || parts.len() > 4 {
        return false;
    }
    parts.iter().all(|p| {
        let p = p.to_ascii_lowercase();
        if let Some(hex) = p.strip_prefix("0x") {
            !hex.is_empty() && hex.len() <= 8 && hex.bytes().all(|b| b.is_ascii_hexdigit())
        } else {
            !p.is_empty() && p.len() <= 10 && p.bytes().all(|b| b.is_ascii_digit())
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(name: &str, text: &str, place: Place, level: u8) -> Option<&'static str> {
        let mut input = Input::new(text);
        input.name = name;
        input.place = place;
        input.sensitivity = level;
        OpenRedirect.inspect(&input).map(|f| f.reason)
    }

    #[test]
    fn confusing_urls_in_redirect_parameters() {
        for v in [
            "//evil.com",
            "//evil.com/path?x=1",
            "///evil.com",
            "/\\evil.com",
            "\\\\evil.com",
            "/\t/evil.com",
            "https:/\\evil.com",
            "https:///evil.com",
            "http:evil.com",
            "https://trusted.com@evil.com",
            "//trusted.com@evil.com/",
            "https://2130706433/",
            "//0x7f000001",
            "java\tscript:alert(1)",
            "  javascript:alert(document.domain)",
            "data:text/html;base64,PHNjcmlwdD4=",
            "／／evil.com",
            "%5C%2Fevil.com",
            "%255C%252F0x6ac04a7d/",
            "/https://evil.com/",
            "//https:///evil.com/%2e%2e",
            "http://00330.3856078",
            "http://[::216.58.214.206]",
            "%68%74%74%70%3a%2f%2f%67%6f%6f%67%6c%65%2e%63%6f%6d",
            "〱evil.com",
            "https://evil.com/%2f..",
            "http://evil.com:80#@example.com/",
            "http://evil.com%2f%2f.example.com/",
            "http://evil.com\\example.com/",
            // Appended to the site's origin without a slash.
            "@evil.com",
            ".evil.com/login",
            // A same-site page that redirects again.
            "/?url=//evil.com&next=//evil.com",
            "/redirect?to=/\\evil.com",
            "/login?returnTo=https:/\\evil.com",
            "http://evil。com",
            "//evil．com/",
            "http://.evil.com",
        ] {
            assert!(at("next", v, Place::QueryValue, 1).is_some(), "{v}");
        }
        assert!(at("post_logout_redirect_uri", "//evil.com", Place::QueryValue, 1).is_some());
        assert!(at("state[returnTo]", "//evil.com", Place::BodyValue, 1).is_some());
    }

    #[test]
    fn ordinary_values_and_places_pass() {
        // A plain absolute URL counts from level 2 only.
        assert!(at("next", "https://evil.com/", Place::QueryValue, 3).is_none());
        assert!(at("next", "https://evil.com/", Place::QueryValue, 4).is_some());
        assert!(at("next", "https%3A%2F%2Fapp.example.com%2Fcb", Place::QueryValue, 1).is_none());
        for v in ["/account/settings", "/", "myapp://oauth/cb", "mailto:a@b.com", "//", "//x"] {
            assert!(at("redirect_uri", v, Place::QueryValue, 4).is_none(), "{v}");
        }
        for v in [
            "https://app.example.com/callback",
            "https://example.com/a//b",
            "/https-guide",
            "ーevil.com",
            "/.well-known/openid-configuration",
            ".html",
            "@me",
            "/search?q=//evil.com",
            "/login?next=/account/settings",
            "/cb?redirect_uri=https://app.example.com/done",
        ] {
            assert!(at("redirect_uri", v, Place::QueryValue, 1).is_none(), "{v}");
        }
        // Not a redirect parameter: only from level 2 (query) or 3 (body); never in a header.
        assert!(at("q", "//evil.com", Place::QueryValue, 1).is_none());
        assert!(at("q", "//evil.com", Place::QueryValue, 2).is_some());
        assert!(at("src", "//cdn.example.com/a.js", Place::BodyValue, 2).is_none());
        assert!(at("ref", "https://www.google.com/", Place::QueryValue, 4).is_none());
        assert!(at("src", "https://www.google.com/", Place::QueryValue, 4).is_none());
        assert!(at("referer", "//evil.com", Place::Header, 4).is_none());
        assert!(is_redirect_name("returnTo") && is_redirect_name("redirect_uri") && !is_redirect_name("avatar"));
    }
}
