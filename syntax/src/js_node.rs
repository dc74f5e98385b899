//! `command-injection:nodejs-*`: server-side JavaScript that reaches the Node.js module loader
//! or the process object from a data field (`require('child_process').exec(...)`,
//! `process.mainModule.require`, `this.constructor.constructor('return process')()`,
//! `process.binding(...)`, node-serialize's `_$$ND_FUNC$$_`). Its slug is command-injection
//! rather than a new detector: every form ends in running a command or touching files as the
//! server, which is what that detector stands for, and the engine keeps one best finding per
//! slug either way.
//!
//! The text is compacted first (whitespace dropped, `'a'+'b'` joined, `x['y']` read as `x.y`,
//! `String.fromCharCode(..)`, `atob('..')` and `Buffer.from('..','base64')` decoded to a
//! string literal), so the anchors below match every spelling. Levels:
//! - level 1: the loader reached through `process`/`module` internals or a constructor chain
//!   (forms application code does not use), a module name hidden by an encoding, or a
//!   short code-only value that loads `child_process`/`vm` or chains a file read/write;
//! - level 2: the same calls in prose or long pasted source (chat messages about Node.js).

use crate::{Check, Finding, Input, Trigger};

pub struct NodeJsInjection;

pub static NODEJS_INJECTION: NodeJsInjection = NodeJsInjection;

/// Loader forms application code never writes: `(reason, anchor)`.
const LEVEL1_ANCHORS: &[(&str, &str)] = &[
    ("command-injection:nodejs-mainmodule", "mainModule.require("),
    ("command-injection:nodejs-mainmodule", "mainModule.constructor._load("),
    ("command-injection:nodejs-module-load", "constructor._load("),
    ("command-injection:nodejs-process-binding", "process.binding("),
    ("command-injection:nodejs-serialize", "_$$ND_FUNC$$_"),
    // The other server-side runtimes' process APIs, and the process object ending or killing
    // the server: no data field holds a call to them.
    ("command-injection:nodejs-runtime-spawn", "Deno.run("),
    ("command-injection:nodejs-runtime-spawn", "Deno.Command("),
    ("command-injection:nodejs-runtime-spawn", "Bun.spawn("),
    ("command-injection:nodejs-runtime-spawn", "Bun.spawnSync("),
    ("command-injection:nodejs-process-control", "process.kill("),
    ("command-injection:nodejs-process-control", "process.exit("),
    ("command-injection:nodejs-process-control", "process.dlopen("),
];

const PROCESS_MODULES: &[&str] = &["child_process", "vm", "worker_threads"];
const RUN_CALLS: &[&str] =
    &["exec", "execSync", "spawn", "spawnSync", "execFile", "execFileSync", "fork", "runInNewContext", "runInThisContext", "runInContext"];
const FILE_CALLS: &[&str] =
    &["readFileSync", "writeFileSync", "appendFileSync", "readdirSync", "unlinkSync", "createWriteStream", "readFile", "writeFile"];

impl Check for NodeJsInjection {
    fn trigger(&self) -> Trigger {
        Trigger::any_of(b"(`")
    }

    fn detector(&self) -> &'static str {
        "command-injection"
    }

    fn inspect(&self, input: &Input<'_>) -> Option<Finding> {
        // Every form calls something: without `(` or a backtick there is nothing to run. No
        // length cap: padding must not hide a loader (every pass below is linear).
        if !input.bytes.any(b"(`") || !has_anchor_letters(input.text) {
            return None;
        }
        let raw = compact(input.text, false);
        let folded = compact(input.text, true);
        let pasted = crate::prose::is_long_or_prose(input.text.as_bytes()) || input.text.len() > 600;
        let reason = judge(&folded, &raw)?;
        // Pasted Node.js source in a chat message or a long field is level 2, unless a module
        // name was hidden by an encoding: nobody obfuscates the code they ask about.
        let level = if pasted && !hidden_module(&folded, &raw) { 2 } else { 1 };
        (level <= input.sensitivity).then_some(Finding { reason, score: 0.95, level })
    }
}

/// Cheap pre-filter: every anchor holds one of these words.
fn has_anchor_letters(text: &str) -> bool {
    ["require", "process", "_load", "ND_FUNC", "import", "fromCharCode", "base64", "atob", "Deno", "Bun"].iter().any(|w| text.contains(w))
}

/// The reason of the strongest loader form in the compacted text.
fn judge(folded: &str, raw: &str) -> Option<&'static str> {
    for (reason, anchor) in LEVEL1_ANCHORS {
        if folded.contains(anchor) {
            return Some(reason);
        }
    }
    // A constructor chain or `Function` handing back the process object.
    if (folded.contains("constructor(") || folded.contains("Function(")) && folded.contains("returnprocess") {
        return Some("command-injection:nodejs-constructor-process");
    }
    let mut found: Option<&'static str> = None;
    // Read once, not per call: every call is judged, however many benign ones come first.
    let written: Vec<bool> = PROCESS_MODULES.iter().map(|m| raw.contains(m)).collect();
    for loader in ["require(", "import("] {
        for (at, _) in folded.match_indices(loader) {
            let Some(module) = quoted_at(folded, at + loader.len()) else { continue };
            let after = &folded[at + loader.len() + module.len() + 2..];
            let chained = after.strip_prefix(')').and_then(|r| r.strip_prefix('.')).map(|r| r.split('(').next().unwrap_or(""));
            let chained_then = after.starts_with(").then(");
            if let Some(m) = PROCESS_MODULES.iter().position(|p| *p == module) {
                let hidden = !written[m];
                let runs = chained.is_some_and(|c| RUN_CALLS.contains(&c)) || chained_then;
                found = Some("command-injection:nodejs-child-process");
                if hidden || runs {
                    return found;
                }
            } else if module == "fs" && chained.is_some_and(|c| FILE_CALLS.contains(&c)) {
                found = found.or(Some("command-injection:nodejs-fs"));
            }
        }
    }
    found
}

/// The module name was not in the text as written: built by concatenation or an encoding.
fn hidden_module(folded: &str, raw: &str) -> bool {
    PROCESS_MODULES.iter().any(|m| folded.contains(m) && !raw.contains(m))
}

/// The string literal starting at byte `at` (`'x'`, `"x"` or `` `x` ``), without its quotes.
fn quoted_at(s: &str, at: usize) -> Option<&str> {
    let q = *s.as_bytes().get(at)?;
    if !matches!(q, b'\'' | b'"' | b'`') {
        return None;
    }
    let body = s.get(at + 1..)?;
    let end = body.bytes().take(40).position(|b| b == q)?;
    body.get(..end)
}

/// The text without whitespace; with `fold`, string concatenation joined, `x['y']` read as
/// `x.y`, and decoder calls on constants replaced by the string they produce.
pub(crate) fn compact(text: &str, fold: bool) -> String {
    let mut s: String = text.chars().filter(|c| !c.is_whitespace()).collect();
    if !fold {
        return s;
    }
    if s.contains('\\') {
        s = unescape(&s);
    }
    for q1 in ['\'', '"', '`'] {
        for q2 in ['\'', '"', '`'] {
            s = s.replace(&format!("{q1}+{q2}"), "");
        }
    }
    s = decode_calls(&s);
    for q in ['\'', '"', '`'] {
        s = s.replace(&format!("[{q}"), ".").replace(&format!("{q}]"), "");
    }
    s
}

/// `\xHH` and `\uHHHH` escapes of a string literal undone (the engine's decoded view does
/// this too; a check's plain text may still hold them).
fn unescape(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = String::with_capacity(s.len());
    let mut i = 0;
    while i < b.len() {
        let width = match (b[i], b.get(i + 1)) {
            (b'\\', Some(b'x')) => 2,
            (b'\\', Some(b'u')) => 4,
            _ => 0,
        };
        let code = (width > 0).then(|| s.get(i + 2..i + 2 + width)).flatten().and_then(|h| u32::from_str_radix(h, 16).ok());
        match code.and_then(char::from_u32) {
            Some(c) => {
                out.push(c);
                i += 2 + width;
            }
            None => {
                let ch = s[i..].chars().next().unwrap_or(' ');
                out.push(ch);
                i += ch.len_utf8();
            }
        }
    }
    out
}

/// `String.fromCharCode(99,104)`, `atob('Y2g=')`, `Buffer.from('Y2g=','base64').toString()`
/// replaced by `'ch'`: one pass, each call decoded once.
fn decode_calls(s: &str) -> String {
    const CALLS: [&str; 3] = ["String.fromCharCode(", "atob(", "Buffer.from("];
    let mut out = String::with_capacity(s.len());
    // `rest` is `s[pos..]`; `next[k]` is where call `k` next occurs in `s`, searched again
    // only once `rest` has passed it, so the text is read once per call kind, not per call.
    let mut pos = 0;
    let mut next: [Option<usize>; 3] = CALLS.map(|p| s.find(p));
    while pos < s.len() {
        let rest = &s[pos..];
        for (k, at) in next.iter_mut().enumerate() {
            if at.is_some_and(|a| a < pos) {
                *at = rest.find(CALLS[k]).map(|i| pos + i);
            }
        }
        let Some((i, k)) = next.iter().enumerate().filter_map(|(k, at)| at.map(|a| (a - pos, k))).min() else {
            out.push_str(rest);
            break;
        };
        let prefix = CALLS[k];
        out.push_str(&rest[..i]);
        let args_at = i + prefix.len();
        let Some(close) = rest[args_at..].find(')') else {
            out.push_str(&rest[i..]);
            break;
        };
        let args = &rest[args_at..args_at + close];
        let mut end = args_at + close + 1;
        let decoded = match prefix {
            "String.fromCharCode(" => args.split(',').map(|n| n.parse::<u32>().ok().and_then(char::from_u32)).collect::<Option<String>>(),
            _ => {
                let b64 = args.split(',').next().unwrap_or("").trim_matches(|c| matches!(c, '\'' | '"' | '`'));
                if prefix == "Buffer.from(" {
                    if !args.contains("base64") {
                        None
                    } else {
                        end += if rest[end..].starts_with(".toString()") { ".toString()".len() } else { 0 };
                        crate::base64::decode(b64.as_bytes()).and_then(|v| String::from_utf8(v).ok())
                    }
                } else {
                    crate::base64::decode(b64.as_bytes()).and_then(|v| String::from_utf8(v).ok())
                }
            }
        };
        match decoded {
            Some(text) if !text.is_empty() => {
                out.push('\'');
                out.push_str(&text);
                out.push('\'');
            }
            _ => out.push_str(&rest[i..end]),
        }
        pos += end;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn level(text: &str) -> Option<u8> {
        NODEJS_INJECTION.inspect(&Input { sensitivity: 4, ..Input::new(text) }).map(|f| f.level)
    }

    #[test]
    fn loader_forms() {
        assert_eq!(level("require('child_process').exec('id')"), Some(1));
        assert_eq!(level("process.mainModule.require('child_process').execSync('id')"), Some(1));
        assert_eq!(level("this.constructor.constructor('return process')().mainModule"), Some(1));
        assert_eq!(level("require('child'+'_process').exec('id')"), Some(1));
        assert_eq!(level("require(String.fromCharCode(99,104,105,108,100,95,112,114,111,99,101,115,115)).exec('id')"), Some(1));
        assert_eq!(level("require(Buffer.from('Y2hpbGRfcHJvY2Vzcw==','base64').toString()).exec('id')"), Some(1));
        assert_eq!(level("process['mainModule']['require']('fs')"), Some(1));
        assert_eq!(level("';require('\\x63\\x68ild_process').spawn('sh')//"), Some(1));
        assert_eq!(level("';require('fs').readFileSync('/etc/passwd')//"), Some(1));
        // Red-team pass 3: other runtimes' spawn calls, and code handed to a timer.
        assert_eq!(level("Deno.run({cmd:[\"id\"]})"), Some(1));
        assert_eq!(level("Bun.spawnSync([\"id\"])"), Some(1));
        assert_eq!(level("setTimeout('process.exit()',1)"), Some(1));
        assert_eq!(level("process.kill(process.pid)"), Some(1));
        assert_eq!(level("the process exits (kill it)"), None);
    }

    #[test]
    fn pasted_node_code_is_level_2_and_plain_words_nothing() {
        let chat = "How do I run a shell command from my Express app? I tried const { exec } = require('child_process'); exec('ls', cb) but it hangs.";
        assert_eq!(level(chat), Some(2));
        assert_eq!(level("const fs = require('fs'); const data = fs.readFileSync(path)"), None);
        assert_eq!(level("the process (binding of contracts) requires care"), None);
        assert_eq!(level("import('lodash').then(m => m.default)"), None);
    }

    /// A loader after 100 benign `require` calls, or after 100 KiB of text, is judged; a
    /// hundred decoder calls are each decoded once.
    #[test]
    fn padding_hides_no_loader() {
        let calls = "require('lodash');".repeat(100);
        assert_eq!(level(&format!("{calls}require('child_process').exec('id')")), Some(2));
        let pad = "lorem ipsum ".repeat(9 * 1024);
        assert_eq!(level(&format!("{pad}require('child_process').exec('id')")), Some(2));
        let decoded = "atob('bG9kYXNo');".repeat(100);
        assert_eq!(level(&format!("{decoded}require(atob('Y2hpbGRfcHJvY2Vzcw==')).exec('id')")), Some(1));
        assert_eq!(level(&format!("{calls}{pad}")), None);
    }
}
