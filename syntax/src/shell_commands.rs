//! The Unix commands `shell_unix` knows at a command position, with the arguments each wants
//! (its [`Class`]), and the paths that make an argument an attack's. `lookup` runs on every
//! word at a command position, so it rejects most words with one bit test.

/// What a command wants as arguments before it reads as a command rather than a word.
#[derive(Clone, Copy, PartialEq)]
pub(crate) enum Class {
    /// Meaningful alone: `; id`, `|whoami`. Arguments, if any, must be flags or paths.
    Recon,
    /// Reads or touches files: needs a path, file name or variable (`cat /etc/passwd`).
    File,
    /// Network tools: needs a URL, host, IP, port or flag.
    Net,
    /// Shells and interpreters: a flag (`-c`, `-i`, `-e`), a script path, or being piped into.
    Shell,
    /// `sleep` / `timeout`: a number.
    Delay,
    /// `echo` / `printf`: a variable, a redirect, a flag or an upper-case marker.
    Echo,
}

/// (command, class, distinctive): distinctive words are never ordinary field values, so a value
/// that is only that word counts.
const COMMANDS: &[(&str, Class, bool)] = &[
    ("whoami", Class::Recon, true),
    ("id", Class::Recon, false),
    ("uname", Class::Recon, true),
    ("ifconfig", Class::Recon, true),
    ("pwd", Class::Recon, false),
    ("hostname", Class::Recon, false),
    ("ls", Class::Recon, false),
    ("ps", Class::Recon, false),
    ("env", Class::Recon, false),
    ("printenv", Class::Recon, true),
    ("netstat", Class::Recon, true),
    ("uptime", Class::Recon, false),
    ("who", Class::Recon, false),
    ("getent", Class::Recon, true),
    ("dir", Class::Recon, false),
    ("cat", Class::File, false),
    ("head", Class::File, false),
    ("tail", Class::File, false),
    ("more", Class::File, false),
    ("less", Class::File, false),
    ("nl", Class::File, false),
    ("tac", Class::File, false),
    ("strings", Class::File, false),
    ("xxd", Class::File, false),
    ("od", Class::File, false),
    ("base64", Class::File, false),
    ("grep", Class::File, false),
    ("find", Class::File, false),
    ("rm", Class::File, false),
    ("touch", Class::File, false),
    ("chmod", Class::File, false),
    ("cp", Class::File, false),
    ("mv", Class::File, false),
    ("wc", Class::File, false),
    ("mkfifo", Class::File, false),
    ("crontab", Class::File, false),
    ("kill", Class::File, false),
    ("useradd", Class::File, false),
    ("awk", Class::File, false),
    ("gawk", Class::File, false),
    ("sed", Class::File, false),
    ("tee", Class::File, false),
    ("tar", Class::File, false),
    ("chown", Class::File, false),
    ("curl", Class::Net, false),
    ("wget", Class::Net, false),
    ("nc", Class::Net, false),
    ("ncat", Class::Net, false),
    ("netcat", Class::Net, false),
    ("socat", Class::Net, false),
    ("telnet", Class::Net, false),
    ("ping", Class::Net, false),
    ("nslookup", Class::Net, false),
    ("dig", Class::Net, false),
    ("host", Class::Net, false),
    ("traceroute", Class::Net, false),
    ("tftp", Class::Net, false),
    ("ftp", Class::Net, false),
    ("ssh", Class::Net, false),
    ("scp", Class::Net, false),
    ("rsync", Class::Net, false),
    ("nmap", Class::Net, true),
    ("openssl", Class::Net, false),
    ("telnetd", Class::Net, true),
    ("xterm", Class::Net, false),
    ("sh", Class::Shell, false),
    ("bash", Class::Shell, false),
    ("zsh", Class::Shell, false),
    ("ksh", Class::Shell, false),
    ("dash", Class::Shell, false),
    ("csh", Class::Shell, false),
    ("busybox", Class::Shell, false),
    ("python", Class::Shell, false),
    ("python2", Class::Shell, false),
    ("python3", Class::Shell, false),
    ("perl", Class::Shell, false),
    ("php", Class::Shell, false),
    ("ruby", Class::Shell, false),
    ("node", Class::Shell, false),
    ("lua", Class::Shell, false),
    ("tclsh", Class::Shell, false),
    ("pwsh", Class::Shell, false),
    ("jrunscript", Class::Shell, true),
    ("sleep", Class::Delay, false),
    ("timeout", Class::Delay, false),
    ("echo", Class::Echo, false),
    ("printf", Class::Echo, false),
];

/// Prefixes that run the next word as the command (`busybox` runs its applet: `busybox telnetd
/// -l /bin/sh`; it stays a shell command too, for `| busybox sh`).
/// `env`, `builtin` and `coproc` run their argument too (`;coproc bash -i >&/dev/tcp/…`), as do
/// the process-attribute setters `setsid`, `nice` and `stdbuf`.
pub(crate) const WRAPPERS: &[&str] = &[
    "sudo", "nohup", "exec", "time", "command", "xargs", "eval", "busybox", "doas", "env", "builtin", "coproc", "setsid", "nice", "stdbuf",
];

/// Targets of an attack rather than of an admin's script.
pub(crate) const HOSTILE: &[&str] = &["/etc/passwd", "/etc/shadow", "/proc/self/environ", "/dev/tcp/", "/dev/udp/", "/.ssh/id_"];

pub(crate) const SENSITIVE: &[&str] = &[
    "/etc/passwd",
    "/etc/shadow",
    "/etc/group",
    "/etc/hosts",
    "/etc/issue",
    "/etc/hostname",
    "/proc/self",
    "/dev/tcp/",
    "/dev/udp/",
    "/root/",
    "/.ssh",
    "/var/www",
    "/tmp/",
];

/// Every command word the tokenizer knows (glob paths are resolved against them).
pub(crate) fn command_names() -> impl Iterator<Item = &'static str> {
    COMMANDS.iter().map(|c| c.0)
}

/// For each first letter, a bit per length of the command names starting with it: `lookup`
/// runs on every word at a command position and on the first word of every field, so most
/// words must be rejected by one bit test rather than compared with every name.
const FIRST_LEN: [u32; 26] = {
    let mut table = [0u32; 26];
    let mut k = 0;
    while k < COMMANDS.len() {
        let w = COMMANDS[k].0.as_bytes();
        table[(w[0] - b'a') as usize] |= 1 << w.len();
        k += 1;
    }
    table
};

/// For each first letter, a bit per index into [`COMMANDS`] of the names starting with it: a
/// word that passes the length test is compared with those few names, not all of them.
const FIRST_INDEX: [u128; 26] = {
    assert!(COMMANDS.len() <= 128);
    let mut table = [0u128; 26];
    let mut k = 0;
    while k < COMMANDS.len() {
        table[(COMMANDS[k].0.as_bytes()[0] - b'a') as usize] |= 1 << k;
        k += 1;
    }
    table
};

pub(crate) fn lookup(word: &[u8]) -> Option<(Class, bool)> {
    let (&first, len) = (word.first()?, word.len());
    if !first.is_ascii_lowercase() || len >= 32 || FIRST_LEN[(first - b'a') as usize] & (1 << len) == 0 {
        return None;
    }
    let mut candidates = FIRST_INDEX[(first - b'a') as usize];
    while candidates != 0 {
        let (name, class, distinct) = COMMANDS[candidates.trailing_zeros() as usize];
        if name.as_bytes() == word {
            return Some((class, distinct));
        }
        candidates &= candidates - 1;
    }
    None
}
