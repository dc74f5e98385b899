//! `session-fixation:*`: a value that makes the victim's browser store a cookie the attacker
//! chose — script writing `document.cookie`, a `<meta http-equiv="Set-Cookie">`, or a
//! `Set-Cookie` header after a line break (the CRLF check reports that too) — and, weaker, a
//! platform's session id passed as a parameter value (`JSESSIONID=...`), which fixes a session
//! only where the application adopts ids from the URL. Levels: level 1 for a cookie write in a
//! short code-only value, the meta element and the smuggled header; level 2 for a cookie write
//! in prose or long pasted source; level 3 for a bare session id in a value (real URLs carry
//! `;jsessionid=` rewriting).

use crate::{Check, Finding, Input, Place, Trigger};

pub struct SessionFixation;

pub static SESSION_FIXATION: SessionFixation = SessionFixation;

/// Session cookie names of common platforms (lower-case).
const SESSION_NAMES: &[&str] =
    &["jsessionid", "phpsessid", "asp.net_sessionid", "aspsessionid", "cfid", "cftoken", "connect.sid", "laravel_session", "sessionid"];

impl Check for SessionFixation {
    fn trigger(&self) -> Trigger {
        Trigger::any_of(b"=:")
    }

    fn detector(&self) -> &'static str {
        "session-fixation"
    }

    fn inspect(&self, input: &Input<'_>) -> Option<Finding> {
        // The whole text, every occurrence of each anchor: a length cap or a cap on the
        // occurrences read would let padding (or a hundred benign `cookie`s) hide the write.
        // Each helper below is linear: the spans it trims around distinct occurrences do not
        // overlap.
        let text = input.text;
        let finding = |reason, level: u8| (level <= input.sensitivity).then_some(Finding { reason, score: 0.95, level });
        let lower = if input.bytes.any(b"Cc") { text.to_ascii_lowercase() } else { return None };
        if !lower.contains("cookie") && !lower.contains("sess") && !lower.contains("cfid") {
            return None;
        }
        if meta_set_cookie(&lower) {
            return finding("session-fixation:meta-set-cookie", 1);
        }
        if header_after_break(&lower) {
            return finding("session-fixation:set-cookie-header", 1);
        }
        if cookie_write(text) {
            let pasted = crate::prose::is_long_or_prose(text.as_bytes()) || text.len() > 400;
            return finding("session-fixation:cookie-write", if pasted { 2 } else { 1 });
        }
        if matches!(input.place, Place::QueryValue | Place::BodyValue) && session_id_value(&lower) {
            return finding("session-fixation:session-id-value", 3);
        }
        None
    }
}

/// `http-equiv` `=` (quote) `set-cookie`.
fn meta_set_cookie(lower: &str) -> bool {
    lower.match_indices("http-equiv").any(|(at, m)| {
        let rest = lower[at + m.len()..].trim_start();
        let Some(rest) = rest.strip_prefix('=') else { return false };
        rest.trim_start().trim_start_matches(['"', '\'']).starts_with("set-cookie")
    })
}

/// A line break (CR or LF, raw or still percent-encoded) then `set-cookie` `:`.
fn header_after_break(lower: &str) -> bool {
    lower.match_indices("set-cookie").any(|(at, m)| {
        let before = lower[..at].trim_end_matches([' ', '\t']);
        let after = lower[at + m.len()..].trim_start_matches([' ', '\t']);
        let broken = before.ends_with('\n') || before.ends_with('\r') || before.ends_with("%0a") || before.ends_with("%0d");
        broken && after.starts_with(':')
    })
}

/// `document.cookie =` (or `document['cookie'] =`), not a comparison.
fn cookie_write(text: &str) -> bool {
    text.match_indices("cookie").any(|(at, m)| {
        let before = text[..at].trim_end_matches(['\'', '"', '[', '.', ' ']);
        if !before.ends_with("document") {
            return false;
        }
        let after = text[at + m.len()..].trim_start_matches(['\'', '"', ']', ' ']);
        after.starts_with('=') && !after.starts_with("==")
    })
}

/// A session cookie's `name=` followed by an id of 8+ id characters.
fn session_id_value(lower: &str) -> bool {
    SESSION_NAMES.iter().any(|name| {
        let mut from = 0;
        while let Some(p) = lower[from..].find(name) {
            let after = from + p + name.len();
            // `ASPSESSIONIDQQGGBBAA=`: the platform appends letters to the name.
            let tail = if *name == "aspsessionid" { lower[after..].bytes().take_while(u8::is_ascii_alphanumeric).count() } else { 0 };
            // An occurrence inside that tail would end at the same `=`: go on after it.
            from = after + tail;
            let Some(id) = lower[from..].strip_prefix('=') else { continue };
            if id.bytes().take_while(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'%')).take(8).count() >= 8 {
                return true;
            }
        }
        false
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn level(text: &str) -> Option<u8> {
        SESSION_FIXATION.inspect(&Input { sensitivity: 4, ..Input::new(text) }).map(|f| f.level)
    }

    #[test]
    fn cookie_setters() {
        assert_eq!(level("<script>document.cookie=\"PHPSESSID=abc123def\"</script>"), Some(1));
        assert_eq!(level("';document.cookie='JSESSIONID=0123456789';//"), Some(1));
        assert_eq!(level("<meta http-equiv=\"Set-Cookie\" content=\"sid=1\">"), Some(1));
        assert_eq!(level("en\r\nSet-Cookie: PHPSESSID=x"), Some(1));
        assert_eq!(level("/home%0d%0aSet-Cookie: sid=x"), Some(1));
        assert_eq!(level("document['cookie'] = 'a=b'"), Some(1));
        assert_eq!(level("JSESSIONID=0123456789ABCDEF"), Some(3));
    }

    #[test]
    fn readers_and_prose() {
        assert_eq!(level("if (document.cookie == '') show()"), None);
        assert_eq!(level("var c = document.cookie"), None);
        assert_eq!(level("accept-cookies=1"), None);
        assert_eq!(level("Set-Cookie: is a response header"), None);
        let chat =
            "How can I set a cookie in JavaScript? I tried document.cookie = 'theme=dark' but it is not saved when I reload the page.";
        assert_eq!(level(chat), Some(2));
    }

    /// A write after 100 KiB of text or after 100 benign occurrences of each anchor is read.
    #[test]
    fn padding_hides_no_write() {
        let pad = "lorem ipsum ".repeat(9 * 1024);
        assert_eq!(level(&format!("{pad}<script>document.cookie='sid=1'</script>")), Some(2));
        let readers = "if (document.cookie == '') x();".repeat(100);
        assert_eq!(level(&format!("{readers}document.cookie='sid=1'")), Some(2));
        let metas = "<meta http-equiv=\"refresh\" content=\"5\">".repeat(100);
        assert_eq!(level(&format!("{metas}<meta http-equiv=\"Set-Cookie\" content=\"sid=1\">")), Some(1));
        let headers = "set-cookie is a header; ".repeat(100);
        assert_eq!(level(&format!("{headers}%0d%0aSet-Cookie: sid=1")), Some(1));
        let ids = "jsessionid=1;".repeat(100);
        assert_eq!(level(&format!("{ids}jsessionid=0123456789ABCDEF")), Some(3));
        assert_eq!(level(&format!("{}=c123456789", "aspsessionid".repeat(100))), Some(3));
        assert_eq!(level(&format!("{pad}{readers}")), None);
    }
}
