//! Argument shapes `shell_windows` reads after a command word: a PowerShell cmdlet name as
//! `powershell`'s first argument, and a redirect of `echo` into a script file.

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

/// The rest of a command line redirects (`>`, `>>`) into a script file the web server runs.
pub(crate) fn redirect_to_script(rest: &[u8]) -> bool {
    let line = &rest[..rest.iter().take(512).position(|&c| matches!(c, b'\n' | b'\r' | b'&' | b'|')).unwrap_or(rest.len().min(512))];
    let Some(gt) = line.iter().rposition(|&c| c == b'>') else { return false };
    let target = line[gt + 1..].trim_ascii();
    [&b".asp"[..], b".aspx", b".php", b".jsp", b".bat", b".cmd", b".ps1", b".vbs", b".hta"].iter().any(|e| target.ends_with(e))
}
