//! `prototype-pollution:*`: a key path that reaches `Object.prototype` — `__proto__` or
//! `constructor` then `prototype` followed by a property — in a parameter or body key (the
//! field NAME carries it: `?__proto__[isAdmin]=1`, `user[constructor][prototype][x]=`), or in a
//! value that a client-side parser or a merge will read as a key path or object
//! (`__proto__.x=1`, `{"__proto__":{"x":1}}`). A JavaScript property name is case-sensitive,
//! so the segments are matched exactly. Levels: level 1 for a key, or a short value that is
//! nothing but the path or JSON; level 2 for the same in prose or long pasted source (chat
//! messages about JavaScript mention `obj.__proto__`). Python's class pollution
//! (`__class__.__init__.__globals__` as a key path) is the same attack on a dict merge.

use crate::{Check, Finding, Input, Place, Trigger};

pub struct PrototypePollution;

pub static PROTOTYPE_POLLUTION: PrototypePollution = PrototypePollution;

const KEY_REASON: &str = "prototype-pollution:key-path";
const VALUE_REASON: &str = "prototype-pollution:value-path";
const PYTHON_REASON: &str = "prototype-pollution:python-class-path";

impl Check for PrototypePollution {
    fn trigger(&self) -> Trigger {
        // The key may be the field's name, which the byte set does not cover.
        Trigger::Always
    }

    fn detector(&self) -> &'static str {
        "prototype-pollution"
    }

    fn inspect(&self, input: &Input<'_>) -> Option<Finding> {
        let finding = |reason, level: u8| (level <= input.sensitivity).then_some(Finding { reason, score: 0.95, level });
        if input.name.contains("proto") && pollutes(input.name, false) {
            return finding(KEY_REASON, 1);
        }
        // Python's analogue: a merge that follows `__class__.__init__.__globals__` (pydash's
        // `set_`, a recursive dict merge) rewrites the application's module globals.
        let key = if matches!(input.place, Place::QueryName | Place::BodyKey) { input.text } else { input.name };
        if key.contains("__") && python_class_path(key) {
            return finding(PYTHON_REASON, 1);
        }
        // The byte test first: most fields lack a `p`, and the substring search costs more.
        if !input.bytes.contains(b'p') || !input.text.contains("proto") {
            return None;
        }
        if matches!(input.place, Place::QueryName | Place::BodyKey) {
            // A JSON key `__proto__` alone (or `constructor.prototype`, which the JSON walker
            // writes for a `prototype` key under a `constructor` key): its members are the
            // properties set.
            let whole_key = matches!(input.text, "__proto__" | "constructor.prototype");
            return (pollutes(input.text, false) || whole_key).then(|| finding(KEY_REASON, 1)).flatten();
        }
        if !pollutes(input.text, true) {
            // A value that is nothing but a key path: what a client sends to a setter such as
            // lodash's `_.set(obj, path, value)` (`{"path": "__proto__.isAdmin", "value":
            // true}`). `__proto__` alone is also the first item of a path given as an array
            // (`["__proto__", "isAdmin"]`), but a search for the word on a docs site is the same
            // value: level 2.
            let path = input.text.trim();
            if path.len() <= 200 && is_key_path(path) && pollutes(path, false) {
                return finding(VALUE_REASON, 1);
            }
            return (path == "__proto__").then(|| finding(VALUE_REASON, 2)).flatten();
        }
        let pasted = crate::prose::is_long_or_prose(input.text.as_bytes()) || input.text.len() > 400;
        finding(VALUE_REASON, if pasted { 2 } else { 1 })
    }
}

/// The text holds `__proto__` or `constructor` `prototype` as path segments followed by one
/// more segment (a property); with `assigned`, that property must also be given a value
/// (`=`, or `:` in JSON) — a value is data, and only a path that sets something pollutes.
fn pollutes(text: &str, assigned: bool) -> bool {
    let b = text.as_bytes();
    let mut prev_constructor = false;
    let mut i = 0;
    // Linear without a cap (every turn moves `i` on): a cap would let filler words hide a path.
    while i < b.len() {
        if !is_ident(b[i]) {
            i += 1;
            continue;
        }
        let start = i;
        while i < b.len() && is_ident(b[i]) {
            i += 1;
        }
        let word = &text[start..i];
        let root = word == "__proto__" || prev_constructor && word == "prototype" || nests_proto(word);
        prev_constructor = word == "constructor" && (joined_to_next(b, i) || json_member_next(b, i));
        if root && joined_to_next(b, i) && (!assigned || sets_after(b, i)) {
            return true;
        }
        // JSON held in a value (`{"constructor":{"prototype":{"x":1}}}` in a query parameter
        // or a string leaf a server parses and merges): the root's value is an object.
        if root && json_object_after(b, i) {
            return true;
        }
    }
    false
}

/// A key path through a Python object's class to its function globals: `__globals__`, or
/// `__class__` with `__init__` (the road to `__globals__` and `__builtins__`).
fn python_class_path(key: &str) -> bool {
    key.contains("__globals__") || key.contains("__class__") && (key.contains("__init__") || key.contains("__base__"))
}

/// `__pro__proto__to__`: a sanitiser that deletes `__proto__` once leaves `__proto__`.
fn nests_proto(word: &str) -> bool {
    word.len() > 9 && word.contains("__proto__") && word.replacen("__proto__", "", 1) == "__proto__"
}

/// Identifiers joined by `.` or `[…]` and nothing else (`__proto__.isAdmin`, `a[b][c]`).
fn is_key_path(text: &str) -> bool {
    !text.is_empty() && text.bytes().all(|c| is_ident(c) || matches!(c, b'.' | b'[' | b']' | b'"' | b'\''))
}

fn is_ident(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c == b'$'
}

/// A path separator follows: `.`, `[`, `"]["`, `']['`, `"].`.
fn joined_to_next(b: &[u8], i: usize) -> bool {
    let mut j = i;
    while j < b.len() && j - i < 4 && matches!(b[j], b'"' | b'\'' | b']' | b'[' | b'.') {
        j += 1;
    }
    j > i && j < b.len() && is_ident(b[j]) && b[i..j].iter().any(|&c| c == b'.' || c == b'[')
}

/// Within the next path (bounded), the last segment is given a value: `=` (not `==`) or `:`.
fn sets_after(b: &[u8], i: usize) -> bool {
    let end = (i + 96).min(b.len());
    for j in i..end {
        match b[j] {
            b'=' => return b.get(j + 1) != Some(&b'='),
            b':' => return true,
            c if is_ident(c) || matches!(c, b'.' | b'[' | b']' | b'"' | b'\'' | b' ') => {}
            _ => return false,
        }
    }
    false
}

/// `": {"` then a name: the key ending at `i` holds a JSON object whose first member follows.
fn json_member_next(b: &[u8], i: usize) -> bool {
    object_opens_after(b, i, 12).is_some_and(|rest| rest.iter().find(|&&c| !matches!(c, b' ' | b'"' | b'\'')).is_some_and(|&c| is_ident(c)))
}

/// `"__proto__": {` (a JSON object as the value of the key).
fn json_object_after(b: &[u8], i: usize) -> bool {
    object_opens_after(b, i, 8).is_some()
}

/// Within `window` bytes from `i`: closing quotes, `:` and `{` (blanks between); the bytes of
/// the window after the `{`.
fn object_opens_after(b: &[u8], i: usize, window: usize) -> Option<&[u8]> {
    let rest = &b[i..b.len().min(i + window)];
    let colon = rest.iter().position(|&c| !matches!(c, b'"' | b'\'' | b' '))?;
    if rest[colon] != b':' {
        return None;
    }
    let open = colon + 1 + rest[colon + 1..].iter().position(|&c| c != b' ')?;
    (rest[open] == b'{').then(|| &rest[open + 1..])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn level(name: &str, text: &str, place: Place) -> Option<u8> {
        PROTOTYPE_POLLUTION.inspect(&Input { name, place, sensitivity: 4, ..Input::new(text) }).map(|f| f.level)
    }

    #[test]
    fn key_paths() {
        assert_eq!(level("__proto__[isAdmin]", "true", Place::QueryValue), Some(1));
        assert_eq!(level("user[constructor][prototype][role]", "admin", Place::BodyValue), Some(1));
        assert_eq!(level("", "a.__proto__.polluted", Place::QueryName), Some(1));
        assert_eq!(level("", "__proto__", Place::BodyKey), Some(1));
        assert_eq!(level("q", "__proto__.isAdmin=true", Place::QueryValue), Some(1));
        assert_eq!(level("body", "{\"__proto__\": {\"isAdmin\": true}}", Place::BodyValue), Some(1));
        assert_eq!(level("q", "constructor[prototype][x]=1", Place::QueryValue), Some(1));
        // JSON in a value reaches the prototype through `constructor` too.
        assert_eq!(level("data", "{\"constructor\":{\"prototype\":{\"isAdmin\":true}}}", Place::QueryValue), Some(1));
        assert_eq!(level("data", "{ 'constructor' : { 'prototype' : { 'polluted' : 1 } } }", Place::BodyValue), Some(1));
    }

    /// Red-team pass 4: a key path given as a value (to a path setter), `__proto__` alone as
    /// an array item, and the nested spelling that survives a one-pass sanitiser.
    #[test]
    fn paths_as_values_and_nested_spellings() {
        assert_eq!(level("path", "__proto__.isAdmin", Place::BodyValue), Some(1));
        assert_eq!(level("path", "constructor.prototype.isAdmin", Place::BodyValue), Some(1));
        assert_eq!(level("path[0]", "__proto__", Place::BodyValue), Some(2));
        assert_eq!(level("__pro__proto__to__[isAdmin]", "true", Place::QueryValue), Some(1));
        assert_eq!(level("path", "user.profile.name", Place::BodyValue), None);
        assert_eq!(level("path", "prototype", Place::BodyValue), None);
        assert_eq!(level("q", "what is __proto__.constructor for", Place::QueryValue), None);
        assert_eq!(level("__class__.__init__.__globals__.SECRET_KEY", "x", Place::BodyValue), Some(1));
        assert_eq!(level("", "__init__.__globals__.app.config.SECRET_KEY", Place::BodyKey), Some(1));
        assert_eq!(level("user.__init__", "x", Place::BodyValue), None);
    }

    #[test]
    fn filler_before_the_path_does_not_hide_it() {
        // More words than any cap would read, and more than 64 KiB.
        let padded = format!("{}__proto__.isAdmin=true", "x ".repeat(40_000));
        assert!(level("q", &padded, Place::QueryValue).is_some());
    }

    #[test]
    fn benign_mentions() {
        assert_eq!(level("q", "prototype", Place::QueryValue), None);
        assert_eq!(level("q", "the constructor prototype pattern", Place::QueryValue), None);
        assert_eq!(level("q", "if (a.__proto__ === B.prototype) return", Place::QueryValue), None);
        assert_eq!(level("proto", "https", Place::QueryValue), None);
        // A JSON object naming the words as data, not as the path.
        assert_eq!(level("q", "{\"constructor\":\"Widget\",\"prototype\":{\"x\":1}}", Place::QueryValue), None);
        assert_eq!(level("q", "{\"constructor\":{\"name\":\"Widget\"}}", Place::QueryValue), None);
        let chat = "Why is it a bad idea to write obj.__proto__.foo = 1 in my library? I read that it is slow and you should use Object.setPrototypeOf instead.";
        assert_eq!(level("message", chat, Place::BodyValue), Some(2));
    }
}
