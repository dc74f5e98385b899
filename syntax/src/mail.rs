//! Mail command and header injection (IMAP, SMTP, mail forms): a line break smuggled into a
//! field, followed by a protocol command (`RCPT TO:<x>`, `a1 FETCH 1:* (BODY[])`) or a mail
//! header (`Bcc: victim@example.com`). The application pastes the field into a protocol
//! conversation or a message head, and the break starts a line the attacker wrote.
//!
//! The decoded view collapses CR/LF to spaces, so the break is only visible in the plain view:
//! real CR/LF, or the encodings that survive one decoding layer as text (`%0d%0a`, a literal
//! `\r\n`, `&#13;&#10;`). Each break is followed by a bounded look at one line, so the scan is
//! linear.
//!
//! Multi-line text is normal in a textarea and in chat messages (an email draft pasted into an
//! LLM app has `To:` and `Subject:` lines): a finding in a field that reads as prose (several
//! long lines) or a long document counts at level 2; a compact field (a name or address with a
//! smuggled line) counts at level 1.

use std::borrow::Cow;

use crate::{Check, Finding, Input, Trigger};

pub struct MailCheck;

/// Longest field judged compact enough for a level-1 finding.
const COMPACT_LEN: usize = 1024;
/// Lines in a compact field.
const COMPACT_LINES: usize = 24;
/// A line with this many words reads as prose.
const PROSE_WORDS: usize = 8;

#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Kind {
    /// A bare SMTP verb (`DATA`, `QUIT`): ordinary words, so alone they are weak.
    WeakVerb,
    Header,
    Imap,
    Smtp,
}

impl Check for MailCheck {
    fn trigger(&self) -> Trigger {
        // A line break, raw or escaped (a backslash escape, `%0d`, `&#13;`).
        Trigger::any_of(b"\r\n\\%&")
    }

    fn detector(&self) -> &'static str {
        "mail-injection"
    }

    fn inspect(&self, input: &Input<'_>) -> Option<Finding> {
        // The decoded view has every break collapsed to a space: only the plain view can
        // show one. Then a break needs CR/LF, `%` with `0`, `&#`, or a backslash.
        let bytes = input.bytes;
        let may_break = bytes.any(b"\r\n\\") || bytes.all(b"%0") || bytes.all(b"%2") || bytes.all(b"%5") || bytes.all(b"&#");
        if input.decoded || !may_break || input.text.len() < 4 {
            return None;
        }
        if !bytes.any(b"\r\n") && !has_break_marker(input.text.as_bytes()) {
            return None;
        }
        let normalized = normalize(input.text.as_bytes());
        let b: &[u8] = &normalized;
        let mut best: Option<Kind> = None;
        let mut weak = 0;
        let mut i = 0;
        while i < b.len() {
            let Some(len) = break_at(b, i) else {
                i += 1;
                continue;
            };
            // Skip the whole run of breaks and blanks: the line starts after it.
            let mut j = i + len;
            loop {
                if let Some(l) = break_at(b, j) {
                    j += l;
                } else if j < b.len() && (b[j] == b' ' || b[j] == b'\t') {
                    j += 1;
                } else {
                    break;
                }
            }
            // A break at the very start has no field value before it: still an injection
            // when the line is a command (the application prepends its own text).
            if let Some(kind) = line_kind(b, j) {
                if kind == Kind::WeakVerb {
                    weak += 1;
                }
                best = best.max(Some(kind));
            }
            i = j.max(i + 1);
        }
        let kind = match best? {
            Kind::WeakVerb if weak < 2 => return None,
            k => k,
        };
        let reason = match kind {
            Kind::Smtp | Kind::WeakVerb => "mail-injection:smtp-command",
            Kind::Imap => "mail-injection:imap-command",
            Kind::Header => "mail-injection:header-injection",
        };
        let level = if is_compact(b) { 1 } else { 2 };
        (level <= input.sensitivity).then_some(Finding { reason, score: 0.95, level })
    }
}

/// Whether a line break occurs in any spelling: CR/LF, `%0d`/`%0a` under any number of `%25`
/// layers, a literal `\r`/`\n`, or `&#10;`/`&#13;`/`&#xa;`/`&#xd;`. A cheap pass over the
/// `%`, `&` and `\` positions, so fields without a break skip the normalization.
fn has_break_marker(b: &[u8]) -> bool {
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'\r' | b'\n' => return true,
            b'\\' if matches!(b.get(i + 1), Some(b'r' | b'n')) => return true,
            b'%' => {
                // `%0a` `%0d`, an encoded `&` / `\` that may start `&#13;` / `\r`, or an
                // encoded `%` (a second layer: `%250d`, `%25%30%64`).
                let hex = [b.get(i + 1).copied().unwrap_or(0), b.get(i + 2).map_or(0, |c| c | 0x20)];
                if matches!(&hex, b"0a" | b"0d" | b"26" | b"5c" | b"25") {
                    return true;
                }
            }
            b'&' if b.get(i + 1) == Some(&b'#') => {
                let rest = b.get(i + 2..(i + 6).min(b.len())).unwrap_or(&[]);
                let lower: [u8; 4] = std::array::from_fn(|k| rest.get(k).map_or(0, u8::to_ascii_lowercase));
                if lower.starts_with(b"10")
                    || lower.starts_with(b"13")
                    || lower.starts_with(b"xa")
                    || lower.starts_with(b"xd")
                    || lower.starts_with(b"x0a")
                    || lower.starts_with(b"x0d")
                    || lower.starts_with(b"010")
                    || lower.starts_with(b"013")
                {
                    return true;
                }
            }
            _ => {}
        }
        i += 1;
    }
    false
}

/// First words a mail line can start with (commands and header names), upper case.
const LINE_STARTS: &[&[u8]] = &[
    b"MAIL",
    b"RCPT",
    b"HELO",
    b"EHLO",
    b"LHLO",
    b"VRFY",
    b"EXPN",
    b"AUTH",
    b"DATA",
    b"QUIT",
    b"RSET",
    b"NOOP",
    b"STARTTLS",
    b"TURN",
    b"BCC",
    b"CC",
    b"TO",
    b"FROM",
    b"REPLY-TO",
    b"SENDER",
    b"RETURN-PATH",
    b"RESENT-TO",
    b"RESENT-BCC",
    b"SUBJECT",
    b"CONTENT-TYPE",
    b"MIME-VERSION",
    b"X-MAILER",
    b"CONTENT-TRANSFER-ENCODING",
];

/// Whether the line at `at` can start a command or header: an IMAP tag (a short word with a
/// digit) or one of [`LINE_STARTS`]. Checked before any allocation.
fn may_start_command(b: &[u8], at: usize) -> bool {
    let rest = b.get(at..).unwrap_or(&[]);
    let end = rest.iter().take(32).position(|&c| matches!(c, b' ' | b'\t' | b':' | b'\r' | b'\n')).unwrap_or(rest.len().min(32));
    let word = &rest[..end];
    (word.len() <= 10 && word.iter().any(u8::is_ascii_digit)) || LINE_STARTS.iter().any(|s| s.eq_ignore_ascii_case(word))
}

/// Length of the line break at `i` (CR or LF) in the normalized text.
fn break_at(b: &[u8], i: usize) -> Option<usize> {
    matches!(b.get(i), Some(b'\r' | b'\n')).then_some(1)
}

/// The text with the encodings that hide a line break (and the command after it) undone:
/// up to three percent layers, numeric character references, and literal `\r` / `\n`
/// escapes. Each pass is linear and the passes are bounded. Borrowed when nothing is encoded.
pub(crate) fn normalize(text: &[u8]) -> Cow<'_, [u8]> {
    let mut out: Cow<[u8]> = Cow::Borrowed(text);
    for _ in 0..3 {
        if !out.contains(&b'%') {
            break;
        }
        let decoded = percent_decode(&out);
        if decoded.len() == out.len() {
            break;
        }
        out = Cow::Owned(decoded);
    }
    if out.contains(&b'&') {
        out = Cow::Owned(decode_char_refs(&out));
    }
    if out.windows(2).any(|w| w == b"\\r" || w == b"\\n") {
        let mut v = Vec::with_capacity(out.len());
        let mut i = 0;
        while i < out.len() {
            match (out[i], out.get(i + 1)) {
                (b'\\', Some(b'r')) => {
                    v.push(b'\r');
                    i += 2;
                }
                (b'\\', Some(b'n')) => {
                    v.push(b'\n');
                    i += 2;
                }
                (c, _) => {
                    v.push(c);
                    i += 1;
                }
            }
        }
        out = Cow::Owned(v);
    }
    out
}

fn hex_value(c: u8) -> Option<u8> {
    (c as char).to_digit(16).map(|d| d as u8)
}

pub(crate) fn percent_decode(b: &[u8]) -> Vec<u8> {
    let mut v = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            if let (Some(h), Some(l)) = (b.get(i + 1).and_then(|&c| hex_value(c)), b.get(i + 2).and_then(|&c| hex_value(c))) {
                v.push(h * 16 + l);
                i += 3;
                continue;
            }
        }
        v.push(b[i]);
        i += 1;
    }
    v
}

/// `&#13;` `&#x0a;` (the `;` optional, up to 7 digits) → the ASCII byte, and the markup
/// entities `&lt; &gt; &quot; &apos; &amp;`; others kept.
pub(crate) fn decode_char_refs(b: &[u8]) -> Vec<u8> {
    const NAMED: [(&[u8], u8); 5] = [(b"&lt;", b'<'), (b"&gt;", b'>'), (b"&quot;", b'"'), (b"&apos;", b'\''), (b"&amp;", b'&')];
    let mut v = Vec::with_capacity(b.len());
    let mut i = 0;
    'bytes: while i < b.len() {
        if b[i] == b'&' {
            for (name, byte) in NAMED {
                if b.get(i..i + name.len()).is_some_and(|w| w.eq_ignore_ascii_case(name)) {
                    v.push(byte);
                    i += name.len();
                    continue 'bytes;
                }
            }
        }
        if b[i] == b'&' && b.get(i + 1) == Some(&b'#') {
            let hex = matches!(b.get(i + 2), Some(b'x' | b'X'));
            let start = i + 2 + hex as usize;
            let mut j = start;
            let mut code: u32 = 0;
            while j < b.len() && j - start < 7 {
                let d = if hex { hex_value(b[j]).map(u32::from) } else { (b[j] as char).to_digit(10) };
                let Some(d) = d else { break };
                code = code * if hex { 16 } else { 10 } + d;
                j += 1;
            }
            if j > start && code < 0x80 {
                v.push(code as u8);
                i = if b.get(j) == Some(&b';') { j + 1 } else { j };
                continue;
            }
        }
        v.push(b[i]);
        i += 1;
    }
    v
}

/// The line from `at` up to the next break (bounded to 200 bytes).
fn line(b: &[u8], at: usize) -> &[u8] {
    let mut end = at;
    while end < b.len() && end - at < 200 && break_at(b, end).is_none() {
        end += 1;
    }
    b.get(at..end).unwrap_or(&[])
}

/// Blank-separated words; a `"quoted string"` (an IMAP mailbox or password) is one word.
fn words(line: &[u8]) -> Vec<&[u8]> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < line.len() && out.len() < 16 {
        if line[i] == b' ' || line[i] == b'\t' {
            i += 1;
            continue;
        }
        let start = i;
        if line[i] == b'"' {
            i += 1;
            while i < line.len() && line[i] != b'"' {
                i += 1;
            }
            i = (i + 1).min(line.len());
        } else {
            while i < line.len() && line[i] != b' ' && line[i] != b'\t' {
                i += 1;
            }
        }
        out.push(&line[start..i]);
    }
    out
}

fn is_host(w: &[u8]) -> bool {
    !w.is_empty() && w.iter().all(|&c| c.is_ascii_alphanumeric() || matches!(c, b'.' | b'-' | b'[' | b']' | b':' | b'_'))
}

fn is_seq_set(w: &[u8]) -> bool {
    !w.is_empty() && w.iter().all(|&c| c.is_ascii_digit() || matches!(c, b'*' | b':' | b','))
}

/// What the line starting at `at` is, if it is a mail command or header.
fn line_kind(b: &[u8], at: usize) -> Option<Kind> {
    // Every command, tag and header name starts with a letter or digit.
    if !b.get(at).is_some_and(u8::is_ascii_alphanumeric) || !may_start_command(b, at) {
        return None;
    }
    let line = line(b, at);
    let upper: Vec<u8> = line.iter().map(u8::to_ascii_uppercase).collect();
    let w = words(&upper);
    let first = *w.first()?;
    let rest_of = |prefix: &[u8]| upper.strip_prefix(prefix).map(|r| r.trim_ascii_start());
    // SMTP envelope: `MAIL FROM:<a@b>`, `RCPT TO: <a@b>`.
    for verb in [&b"MAIL FROM:"[..], b"RCPT TO:", b"MAIL FROM :", b"RCPT TO :"] {
        if let Some(rest) = rest_of(verb) {
            if rest.first().is_some_and(|&c| c == b'<' || c.is_ascii_alphanumeric()) {
                return Some(Kind::Smtp);
            }
        }
    }
    match (first, w.len()) {
        (b"HELO" | b"EHLO" | b"LHLO", 2) if is_host(w[1]) => return Some(Kind::Smtp),
        (b"VRFY" | b"EXPN", 2) => return Some(Kind::Smtp),
        (b"AUTH", 2 | 3) if matches!(w[1], b"LOGIN" | b"PLAIN" | b"CRAM-MD5" | b"XOAUTH2" | b"DIGEST-MD5") => return Some(Kind::Smtp),
        (b"DATA" | b"QUIT" | b"RSET" | b"NOOP" | b"STARTTLS" | b"TURN", 1) => return Some(Kind::WeakVerb),
        _ => {}
    }
    if let Some(kind) = imap_command(&w, line) {
        return Some(kind);
    }
    header_line(&upper)
}

/// `tag COMMAND args`: the tag is a short alphanumeric word with a digit (`a1`, `A001`).
/// A tag of digits only (`2 delete it` in a numbered list) counts only with the command in
/// upper case, as clients send it.
fn imap_command(w: &[&[u8]], original: &[u8]) -> Option<Kind> {
    let (&tag, rest) = w.split_first()?;
    if tag.is_empty() || tag.len() > 10 || !tag.iter().all(u8::is_ascii_alphanumeric) || !tag.iter().any(u8::is_ascii_digit) {
        return None;
    }
    if tag.iter().all(u8::is_ascii_digit) {
        let command = words(original).get(1).copied().unwrap_or(&[]);
        if command.iter().any(u8::is_ascii_lowercase) {
            return None;
        }
    }
    let (&cmd, args) = rest.split_first()?;
    let ok = match cmd {
        b"LOGIN" => args.len() == 2,
        b"AUTHENTICATE" => args.len() == 1,
        b"FETCH" | b"STORE" | b"COPY" | b"MOVE" => args.first().is_some_and(|a| is_seq_set(a)) && args.len() >= 2,
        b"UID" => args.first().is_some_and(|a| matches!(*a, b"FETCH" | b"STORE" | b"COPY" | b"MOVE" | b"SEARCH" | b"EXPUNGE")),
        b"SEARCH" => args.first().is_some_and(|a| {
            matches!(*a, b"ALL" | b"UNSEEN" | b"SEEN" | b"FROM" | b"TO" | b"SUBJECT" | b"BODY" | b"TEXT" | b"SINCE" | b"CHARSET")
        }),
        b"SELECT" | b"EXAMINE" | b"CREATE" | b"DELETE" | b"SUBSCRIBE" | b"UNSUBSCRIBE" => args.len() == 1,
        b"RENAME" | b"LIST" | b"LSUB" => args.len() == 2,
        b"STATUS" | b"APPEND" => args.len() >= 2 && args[1].first() == Some(&b'('),
        b"CAPABILITY" | b"LOGOUT" | b"NOOP" | b"EXPUNGE" | b"CLOSE" | b"STARTTLS" | b"IDLE" | b"CHECK" | b"NAMESPACE" => args.is_empty(),
        _ => false,
    };
    ok.then_some(Kind::Imap)
}

/// A mail header with a value of its kind: an address for the address headers.
fn header_line(upper: &[u8]) -> Option<Kind> {
    let colon = upper.iter().position(|&c| c == b':')?;
    let name = upper[..colon].trim_ascii_end();
    let value = upper[colon + 1..].trim_ascii();
    let ok = match name {
        b"BCC" | b"CC" | b"TO" | b"FROM" | b"REPLY-TO" | b"SENDER" | b"RETURN-PATH" | b"RESENT-TO" | b"RESENT-BCC" => value.contains(&b'@'),
        b"SUBJECT" => !value.is_empty(),
        b"CONTENT-TYPE" => value.starts_with(b"TEXT/") || value.starts_with(b"MULTIPART/"),
        b"MIME-VERSION" => value.first().is_some_and(u8::is_ascii_digit),
        b"X-MAILER" | b"CONTENT-TRANSFER-ENCODING" => !value.is_empty(),
        _ => false,
    };
    ok.then_some(Kind::Header)
}

/// Whether the field is a compact value (an address or a name with smuggled lines) rather
/// than prose or a long document.
pub(crate) fn is_compact(b: &[u8]) -> bool {
    if b.len() > COMPACT_LEN {
        return false;
    }
    let mut lines = 0;
    let mut prose = 0;
    let mut at = 0;
    while at <= b.len() {
        let l = line(b, at);
        if words(l).len() >= PROSE_WORDS {
            prose += 1;
        }
        lines += 1;
        at += l.len().max(1);
        match break_at(b, at) {
            Some(len) => at += len,
            None if at >= b.len() => break,
            None => {}
        }
    }
    lines <= COMPACT_LINES && prose <= 1
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reason(text: &str) -> Option<&'static str> {
        MailCheck.inspect(&Input::new(text)).map(|f| f.reason)
    }

    #[test]
    fn injections() {
        assert_eq!(reason("bob@example.com\r\nRCPT TO:<victim@example.org>"), Some("mail-injection:smtp-command"));
        assert_eq!(reason("bob%0d%0aMAIL FROM: attacker@evil.test"), Some("mail-injection:smtp-command"));
        assert_eq!(reason("x\\r\\na1 FETCH 1:* (BODY[])"), Some("mail-injection:imap-command"));
        assert_eq!(reason("INBOX\r\nA002 LOGIN admin secret"), Some("mail-injection:imap-command"));
        assert_eq!(reason("alice@example.com\nBcc: victim@example.org"), Some("mail-injection:header-injection"));
        assert_eq!(reason("Hi&#13;&#10;Subject: win"), Some("mail-injection:header-injection"));
        assert_eq!(reason("x\r\nDATA\r\nhello\r\n.\r\nQUIT"), Some("mail-injection:smtp-command"));
    }

    #[test]
    fn benign() {
        assert_eq!(reason("Line one\nData shows growth\nQuit smoking now"), None);
        assert_eq!(reason("100%0 done"), None);
        assert_eq!(reason("Thanks!\nQuit"), None);
        assert_eq!(reason("printf(\"to: %s\\n\", name);"), None);
        let draft = "Please improve this email for me, it is for my manager and needs to be polite\nTo: bob@example.com\nSubject: Leave request\n\nDear Bob, I would like to ask for two days off next week if possible.";
        let mut input = Input::new(draft);
        assert_eq!(MailCheck.inspect(&input), None);
        input.sensitivity = 2;
        assert_eq!(MailCheck.inspect(&input).map(|f| f.level), Some(2));
    }
}
