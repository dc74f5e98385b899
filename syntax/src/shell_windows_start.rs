//! The first-word test of `shell_windows`: whether a value opens with a word that can start a
//! Windows command line (`cmd`, `powershell`, `certutil`, `whoami`...).

/// Words that can open a Windows command line.
const STARTERS: &[&str] = &[
    "cmd",
    "cmd.exe",
    "powershell",
    "powershell.exe",
    "pwsh",
    "certutil",
    "certutil.exe",
    "bitsadmin",
    "regsvr32",
    "rundll32",
    "rundll32.exe",
    "mshta",
    "mshta.exe",
    "wmic",
    "cscript",
    "wscript",
    "schtasks",
    "reg",
    "net",
    "net1",
    "netsh",
    "sc",
    "taskkill",
    "tasklist",
    "timeout",
    "ipconfig",
    "whoami",
    "systeminfo",
    "for",
    "if",
    "start",
    "dir",
    "type",
    "ping",
    "iex",
    "iwr",
    "irm",
    "iwmi",
    "invoke-expression",
    "invoke-webrequest",
    "invoke-restmethod",
    "invoke-wmimethod",
    "start-process",
    "saps",
    "new-object",
    "invoke-command",
    "icm",
    "vssadmin",
    "getmac",
    "hostname",
    "ver",
    "c:\\windows\\system32\\cmd.exe",
];

/// For each first letter, a bit per length of the [`STARTERS`] beginning with it: this test
/// runs on the first word of every field, so an ordinary word must be rejected by one bit
/// test, not by comparing it with every starter.
const STARTER_FIRST_LEN: [u64; 26] = {
    let mut table = [0u64; 26];
    let mut k = 0;
    while k < STARTERS.len() {
        let w = STARTERS[k].as_bytes();
        table[(w[0] - b'a') as usize] |= 1 << w.len();
        k += 1;
    }
    table
};

/// The value opens with a Windows command word (checked before any other work, on fields
/// without a separator, escape or variable byte).
pub(crate) fn starts_with_command(raw: &[u8]) -> bool {
    let t = raw.trim_ascii_start();
    let len = t.iter().take(40).take_while(|&&c| !c.is_ascii_whitespace()).count();
    let word = &t[..len];
    let first = word.first().map_or(0, u8::to_ascii_lowercase);
    let candidate = first.is_ascii_lowercase() && STARTER_FIRST_LEN[(first - b'a') as usize] & (1 << len) != 0;
    candidate && STARTERS.iter().any(|s| s.as_bytes().eq_ignore_ascii_case(word))
        || len >= 8 && word[len - 8..].eq_ignore_ascii_case(b"\\cmd.exe")
}
