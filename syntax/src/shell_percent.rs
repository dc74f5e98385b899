//! Percent layers over shell text. A double-encoded command reaches the application with
//! `%0A`, `%20` still in it, so the shell checks read the text once more with the layers the
//! engine's own decoding left undone. Only ASCII is produced, and cmd's substring syntax
//! (`%PUBLIC:~12,1%`) keeps its letters and digits.

/// One `%XX` layer undone where it yields ASCII (a double-encoded payload reaches the
/// application with `%0A`, `%20` still in it); `None` when there is none.
pub fn percent_layer(text: &[u8]) -> Option<Vec<u8>> {
    // Up to three layers (`%25250A`).
    let mut cur = one_percent_layer(text)?;
    for _ in 0..2 {
        match one_percent_layer(&cur) {
            Some(next) => cur = next,
            None => break,
        }
    }
    Some(cur)
}

fn one_percent_layer(text: &[u8]) -> Option<Vec<u8>> {
    let hex = |c: u8| (c as char).to_digit(16).map(|d| d as u8);
    // Nothing to undo unless some `%` is followed by an ASCII hex pair (`50%` and `% off` in
    // prose are not): checked first so such a field costs no copy.
    let decodable =
        |i: usize| text[i] == b'%' && i + 2 < text.len() && hex(text[i + 1]).is_some_and(|h| h < 8) && hex(text[i + 2]).is_some();
    if !(0..text.len()).any(decodable) {
        return None;
    }
    let mut out = Vec::with_capacity(text.len());
    let mut changed = false;
    let cmd_vars = text.windows(2).any(|w| w == b":~");
    let mut i = 0;
    while i < text.len() {
        if text[i] == b'%' && i + 2 < text.len() {
            if let (Some(h), Some(l)) = (hex(text[i + 1]), text.get(i + 2).and_then(|&c| hex(c))) {
                // Letters and digits too, unless cmd substrings are about: `%32` after
                // `%PUBLIC:~12,1%` is cmd text.
                let b = h * 16 + l;
                if h < 8 && !(cmd_vars && b.is_ascii_alphanumeric()) {
                    out.push(b);
                    changed = true;
                    i += 3;
                    continue;
                }
            }
        }
        out.push(text[i]);
        i += 1;
    }
    changed.then_some(out)
}

#[cfg(test)]
mod tests {
    use super::percent_layer;

    #[test]
    fn layers_to_ascii() {
        assert_eq!(percent_layer(b"id%250Awhoami").as_deref(), Some(&b"id\nwhoami"[..]));
        assert_eq!(percent_layer(b"cat%2520%252Fetc").as_deref(), Some(&b"cat /etc"[..]));
        assert_eq!(percent_layer(b"50% off"), None);
        assert_eq!(percent_layer(b"%E3%81%82"), None, "not ASCII: left alone");
        assert_eq!(percent_layer(b"%PUBLIC:~10,1%%32").as_deref(), None, "cmd substring text keeps its digits");
    }
}
