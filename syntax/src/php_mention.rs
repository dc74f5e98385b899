//! The trigram test of the PHP check: whether a text names `php`, `expect`, `phar`, `data`,
//! `include` or `require` (any case). Runs on every field holding a `.` (most prose), so it
//! is one table load per byte: a trigram's first letter alone names its other two.

/// For each byte, the lower-case second and third letters of the trigram it may start (both 0
/// where it starts none). The six trigrams have six different first letters (`phar` is found
/// by its `har`), so one entry per letter is enough.
const NEXT: [[u8; 2]; 256] = {
    let mut table = [[0u8; 2]; 256];
    let pairs: [(u8, u8, u8); 6] =
        [(b'p', b'h', b'p'), (b'e', b'c', b't'), (b'h', b'a', b'r'), (b'a', b't', b'a'), (b'l', b'u', b'd'), (b'u', b'i', b'r')];
    let mut k = 0;
    while k < pairs.len() {
        let (first, second, third) = pairs[k];
        table[first as usize] = [second, third];
        table[first.to_ascii_uppercase() as usize] = [second, third];
        k += 1;
    }
    table
};

/// A trigram `ph p`, `ec t`, `ha r`, `at a`, `lu d` or `ui r` occurs (any case): the forms
/// of a PHP payload without `(` need one (`php`, `expect`, `phar`, `data`, `include`, `require`).
pub(crate) fn mentions_php(t: &[u8]) -> bool {
    t.windows(3).any(|w| {
        let [second, third] = NEXT[w[0] as usize];
        second != 0 && w[1].to_ascii_lowercase() == second && w[2].to_ascii_lowercase() == third
    })
}

#[cfg(test)]
mod tests {
    use super::mentions_php;

    /// The keyed-on-two-letters form the table replaced: the oracle.
    fn by_pairs(t: &[u8]) -> bool {
        t.windows(3).any(|w| {
            let third = match (w[0].to_ascii_lowercase(), w[1].to_ascii_lowercase()) {
                (b'p', b'h') => b'p',
                (b'e', b'c') => b't',
                (b'h', b'a') => b'r',
                (b'a', b't') => b'a',
                (b'l', b'u') => b'd',
                (b'u', b'i') => b'r',
                _ => return false,
            };
            w[2].to_ascii_lowercase() == third
        })
    }

    #[test]
    fn names_and_prose() {
        for (text, want) in
            [("php://input", true), ("PHAR://x", true), ("eXpEcT://id", true), ("data:", true), ("inclUde", true), ("reqUIRe", true)]
        {
            assert_eq!(mentions_php(text.as_bytes()), want, "{text}");
        }
        assert!(!mentions_php(b"I ordered the red one in medium. Fine."));
        assert!(!mentions_php(b"ph"));
    }

    /// Every text over a small alphabet holding all trigram letters in both cases, and bytes
    /// past ASCII, gets the oracle's answer.
    #[test]
    fn agrees_with_the_pair_form() {
        let alphabet = b"phPHecECtTarARdluLUiIx.\xc3\xa9";
        let mut state = 0x2545_f491_4f6c_dd1du64;
        for len in 0..12 {
            for _ in 0..3000 {
                let text: Vec<u8> = (0..len)
                    .map(|_| {
                        state ^= state << 13;
                        state ^= state >> 7;
                        state ^= state << 17;
                        alphabet[(state % alphabet.len() as u64) as usize]
                    })
                    .collect();
                assert_eq!(mentions_php(&text), by_pairs(&text), "{:?}", String::from_utf8_lossy(&text));
            }
        }
    }
}
