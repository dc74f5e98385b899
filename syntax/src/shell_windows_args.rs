//! Argument shapes `shell_windows` reads after a command word: a PowerShell cmdlet name as
//! `powershell`'s first argument or as a command after a separator, and a redirect of `echo`
//! into a script file.

/// `Verb-Noun`, the shape of every PowerShell cmdlet (`Start-Process`, `Get-WmiObject`), as the
/// first argument of `powershell`: a command line for it, not a sentence about it.
pub(crate) fn verb_noun(a: &[u8]) -> bool {
    const VERBS: &[&[u8]] = &[
        b"get", b"set", b"invoke", b"start", b"stop", b"new", b"remove", b"add", b"out", b"write", b"copy", b"import", b"export", b"test",
    ];
    let Some(dash) = a.iter().position(|&c| c == b'-') else { return false };
    let noun = &a[dash + 1..];
    VERBS.contains(&&a[..dash]) && noun.len() >= 3 && noun.iter().all(|c| c.is_ascii_alphanumeric())
}

/// A PowerShell cmdlet an attacker runs after a separator (`;Start-Process calc`,
/// `| Get-ChildItem -Path C:\`): `Verb-Noun` with a verb and a noun of the cmdlets that run
/// programs, read files, users, services and settings. Both halves must be known, so prose
/// that hyphenates (`; Get-Well cards`) is no cmdlet.
pub(crate) fn cmdlet(a: &[u8]) -> bool {
    const VERBS: &[&[u8]] = &[
        b"get",
        b"set",
        b"invoke",
        b"start",
        b"stop",
        b"new",
        b"remove",
        b"add",
        b"out",
        b"copy",
        b"import",
        b"enable",
        b"disable",
        b"clear",
        b"restart",
        b"register",
        b"select",
        b"expand",
        b"compress",
        b"send",
        b"enter",
    ];
    const NOUNS: &[&[u8]] = &[
        b"process",
        b"childitem",
        b"content",
        b"item",
        b"itemproperty",
        b"service",
        b"wmiobject",
        b"ciminstance",
        b"localuser",
        b"localgroupmember",
        b"executionpolicy",
        b"mppreference",
        b"acl",
        b"command",
        b"expression",
        b"webrequest",
        b"restmethod",
        b"scheduledtask",
        b"clipboard",
        b"credential",
        b"eventlog",
        b"hotfix",
        b"computerinfo",
        b"netipaddress",
        b"nettcpconnection",
        b"psdrive",
        b"pssession",
        b"object",
        b"module",
        b"bitstransfer",
        b"archive",
        b"mailmessage",
        b"wmimethod",
        b"variable",
        b"psreadlineoption",
        b"history",
        b"smbshare",
        b"firewallprofile",
        b"netfirewallrule",
    ];
    let Some(dash) = a.iter().position(|&c| c == b'-') else { return false };
    VERBS.contains(&&a[..dash]) && NOUNS.contains(&&a[dash + 1..])
}

/// The rest of a command line redirects (`>`, `>>`) into a script file the web server runs.
pub(crate) fn redirect_to_script(rest: &[u8]) -> bool {
    let line = &rest[..rest.iter().take(512).position(|&c| matches!(c, b'\n' | b'\r' | b'&' | b'|')).unwrap_or(rest.len().min(512))];
    let Some(gt) = line.iter().rposition(|&c| c == b'>') else { return false };
    let target = line[gt + 1..].trim_ascii();
    [&b".asp"[..], b".aspx", b".php", b".jsp", b".bat", b".cmd", b".ps1", b".vbs", b".hta"].iter().any(|e| target.ends_with(e))
}
