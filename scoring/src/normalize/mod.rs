//! One normalisation pass: the decoded views detectors see.
//!
//! Each transformation lives in its own file and is a pure function
//! `fn(input: &str, out: &mut String) -> bool` (appends to `out`, returns whether it changed
//! anything). `decode_deep` chains them to a fixpoint with a bounded number of rounds, so the
//! work stays linear in input length times `MAX_ROUNDS`.
//!
//! | file          | transformation                                                    |
//! |---------------|-------------------------------------------------------------------|
//! | `percent.rs`  | `%XX` (repeated), `+`, IIS `%uXXXX`                              |
//! | `entities.rs` | HTML entities: named, `&#60;`, `&#x3c;`, with or without `;`      |
//! | `escapes.rs`  | `\uXXXX`, `\u{..}`, `\xXX`, octal `\NNN`, `\/`                  |
//! | `utf8.rs`     | NUL removal, overlong UTF-8 → ASCII, invalid bytes → U+FFFD       |
//! | `fullwidth.rs`| fullwidth ASCII and the ideographic space → ASCII (NFKC, best fit) |
//! | `collapse.rs` | comments removed, whitespace collapsed (case kept)                 |
//! | `base64.rs`   | printable text hidden in base64 segments                           |
//!
//! Model-facing readings for the prompt-injection model only (`prompt_fields`), not the views:
//!
//! | file             | reading                                                          |
//! |------------------|------------------------------------------------------------------|
//! | `invisible.rs`   | Unicode tags → ASCII, smuggled variation-selector bytes, zero-width and bidi controls removed |
//! | `confusables.rs` | fullwidth / mathematical / enclosed letters, mixed-script homoglyphs → ASCII |
//! | `leet.rs`        | leetspeak and ROT13 signals and readings (extra texts)            |
//! | `glued.rs`       | words glued by one mark (`ignore.all.previous…`) read with spaces (extra text) |
//! | `word_noise.rs`  | words kept apart by letterless tokens or wrapped in brackets, read bare (extra text of a gated-out text) |
//!
//! And for the SQLi model only (`Views::sql_text`): `sql_comments.rs`, the text without SQL
//! comments (`#`, `--`, `/* */`) and IIS stray percents.
//!
//! Bounds: no transformation makes its text longer (every encoded form is at least as long as
//! the UTF-8 it decodes to), and `decode_deep` additionally stops at [`max_decoded_len`].

pub mod base64;
pub mod collapse;
pub mod confusables;
pub mod entities;
pub mod escapes;
pub mod fullwidth;
pub mod glued;
pub mod invisible;
pub mod leet;
pub mod percent;
pub mod sql_comments;
pub mod tokens;
pub mod utf8;
pub mod word_noise;

/// Upper bound on decode rounds (double/triple encoding is common, more is noise).
pub const MAX_ROUNDS: usize = 4;

/// Fixed slack in [`max_decoded_len`].
pub const MAX_DECODED_SLACK: usize = 64 * 1024;

/// Most bytes `decode_deep` writes for an input of `input_len` bytes: `4 × input + 64 KiB`.
/// (In practice the output is never longer than the input; this is the enforced guarantee.)
pub fn max_decoded_len(input_len: usize) -> usize {
    input_len.saturating_mul(4).saturating_add(MAX_DECODED_SLACK)
}

type Transform = fn(&str, &mut String) -> bool;

/// Runs one transformation into a fresh buffer: the tests of every transform file use it.
#[cfg(test)]
pub(crate) fn apply(transform: Transform, input: &str) -> (String, bool) {
    let mut out = String::new();
    let changed = transform(input, &mut out);
    (out, changed)
}

/// The decoders `decode_deep` chains, in order, each round.
const DECODERS: [Transform; 5] = [utf8::clean, percent::deep_decode_into, entities::decode, escapes::decode, fullwidth::fold];

/// Decodes everything an application or browser might decode: repeated percent-decoding,
/// `+`, `%uXXXX`, HTML entities, JS/JSON escapes, NUL bytes and overlong UTF-8.
/// Writes the result to `out` (cleared first) and returns true when it differs from `input`.
pub fn decode_deep(input: &str, out: &mut String) -> bool {
    decode_deep_bounded(input, out).changed
}

/// What [`decode_deep_bounded`] did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DecodeOutcome {
    /// The output differs from the input.
    pub changed: bool,
    /// A bound stopped decoding while the text still decoded further ([`MAX_ROUNDS`] spent, or
    /// the output would pass [`max_decoded_len`]): the caller reports `decode-rounds`.
    pub bound_hit: bool,
}

/// [`decode_deep`], also saying whether a bound stopped it early.
pub fn decode_deep_bounded(input: &str, out: &mut String) -> DecodeOutcome {
    out.clear();
    let b = input.as_bytes();
    if !b.iter().any(|&c| matches!(c, b'%' | b'+' | b'&' | b'\\' | 0 | 0xEF)) {
        out.push_str(input);
        return DecodeOutcome::default();
    }
    let limit = max_decoded_len(input.len());
    // The input's own `+` are form-encoded spaces, read once here. A `+` that a later round
    // decodes (`%2B`, `%252B`) is a plus the application sees. (When every round read `+` as
    // a space, a double-encoded `+cmd|' /C calc'!A0` lost the sign of a spreadsheet formula.)
    let mut cur = input.replace('+', " ");
    let mut next = String::with_capacity(input.len());
    let mut changed_any = cur != input;
    let mut bound_hit = false;
    let mut last_round_changed = false;
    'rounds: for _ in 0..MAX_ROUNDS {
        let mut changed = false;
        for decoder in DECODERS {
            next.clear();
            if decoder(&cur, &mut next) {
                if next.len() > limit {
                    bound_hit = true;
                    break 'rounds;
                }
                std::mem::swap(&mut cur, &mut next);
                changed = true;
            }
        }
        last_round_changed = changed;
        if !changed {
            break;
        }
        changed_any = true;
    }
    // Every round changed something: one probe round says whether more layers were left.
    if last_round_changed && !bound_hit {
        bound_hit = DECODERS.iter().any(|decoder| {
            next.clear();
            decoder(&cur, &mut next)
        });
    }
    out.push_str(&cur);
    DecodeOutcome { changed: changed_any && cur != input, bound_hit }
}

/// Removes comments (`/* */`, `<!-- -->`) and collapses whitespace runs to one space; case
/// is kept. Writes to `out` (cleared first); returns true when it differs from `input`.
pub fn collapse(input: &str, out: &mut String) -> bool {
    out.clear();
    collapse::collapse(input, out)
}

/// Finds base64 segments of at least 16 characters that decode to printable text and pushes
/// each decoded text to `out` (at most [`base64::MAX_SEGMENTS`] texts and
/// [`base64::MAX_DECODED_BYTES`] bytes). Returns true when those bounds left candidates unread.
pub fn base64_segments(input: &str, out: &mut Vec<String>) -> bool {
    base64::base64_segments(input, out)
}

/// A byte that by itself means the decoded view may differ: encoding syntax (`% + & \\`),
/// NUL, control whitespace (`\t \n \v \f \r`) and 0xC2 (the lead byte of NBSP and of the
/// other U+0080..U+00BF). Other non-ASCII text cannot change: a `&str` holds no overlong
/// sequences, and decoding only starts from ASCII syntax.
#[inline(always)]
fn is_trigger(c: u8) -> bool {
    // 0xEF: the lead byte of every fullwidth form, which decode_deep folds to ASCII
    // (fullwidth.rs); without it `ｐ` said "nothing to decode" and the fold was skipped.
    matches!(c, b'%' | b'+' | b'&' | b'\\' | 0 | 0x09..=0x0d | 0xC2 | 0xEF)
}

/// `/*` (SQL comment) or `<!` (HTML comment, CDATA, declaration).
#[inline(always)]
fn is_comment_start(a: u8, b: u8) -> bool {
    (a == b'/') & (b == b'*') | (a == b'<') & (b == b'!')
}

/// Cheap pre-check: false means none of `decode_deep`, `collapse` (comments, control
/// whitespace, NBSP) and `base64_segments` can reveal anything, so the decoded view can be
/// skipped. True for encoding bytes (`% + & \\`), NUL, control whitespace, U+0080..U+00BF
/// (NBSP), the lead byte 0xEF of fullwidth forms, `/*`, `<!`, and runs of 16+ base64 characters with both cases. Other non-ASCII text
/// (accents, CJK) and ASCII upper case do not trigger it (a case change alone reveals nothing).
/// Cost: one vectorisable pass for the bytes, and a strided probe for base64 runs.
pub fn may_need_decoding(input: &str) -> bool {
    let b = input.as_bytes();
    let Some(&first) = b.first() else { return false };
    if is_trigger(first) {
        return true;
    }
    // Pairs (previous, current) in blocks of 64, with no early exit inside a block so the
    // comparisons vectorise.
    for (prev, cur) in b.chunks(64).zip(b[1..].chunks(64)) {
        let mut hit = false;
        for (&p, &c) in prev.iter().zip(cur) {
            hit |= is_trigger(c) | is_comment_start(p, c);
        }
        if hit {
            return true;
        }
    }
    base64::has_candidate_run(b)
}

/// [`may_need_decoding`] for a text whose byte set is known (the views compute it for every
/// field anyway): most benign fields are decided by a few bit tests instead of a pass.
pub fn may_need_decoding_given(input: &str, bytes: &syntax::ByteSet) -> bool {
    // 0xEF: the lead byte of every fullwidth form (fullwidth.rs).
    if bytes.any(b"%+&\\\0\t\n\x0b\x0c\r\xc2\xef") {
        return true;
    }
    let comment_pair = bytes.all(b"/*") || bytes.all(b"<!");
    let mixed_case = bytes.intersects(&UPPER) && bytes.intersects(&LOWER);
    (comment_pair || mixed_case && input.len() >= base64::MIN_SEGMENT) && may_need_decoding(input)
}

const UPPER: syntax::ByteSet = syntax::ByteSet::range(b'A', b'Z');
const LOWER: syntax::ByteSet = syntax::ByteSet::range(b'a', b'z');

#[cfg(test)]
mod tests {
    use super::*;

    fn deep(s: &str) -> String {
        let mut out = String::new();
        decode_deep(s, &mut out);
        out
    }

    fn view(s: &str) -> String {
        let mut d = String::new();
        decode_deep(s, &mut d);
        let mut c = String::new();
        collapse(&d, &mut c);
        c
    }

    #[test]
    fn classic_evasions() {
        assert_eq!(deep("%253Cscript%253E"), "<script>");
        assert_eq!(deep("%u003cscript%u003e"), "<script>");
        assert_eq!(deep("&#x3C;script&#62;"), "<script>");
        assert_eq!(deep("\\u003cimg src=x onerror=alert(1)\\u003e"), "<img src=x onerror=alert(1)>");
        assert_eq!(deep("%c0%ae%c0%ae%c0%af"), "../");
        assert_eq!(deep("..%c0%af..%c0%afetc%c0%afpasswd"), "../../etc/passwd");
        assert_eq!(view("<scr<!-- -->ipt>"), "<script>");
        assert_eq!(view("SeLeCt/**/uNiOn"), "SeLeCt uNiOn", "case is kept for case-sensitive rules");
        let mut segs = Vec::new();
        base64_segments("PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==", &mut segs);
        assert_eq!(segs, ["<script>alert(1)</script>"]);
    }

    #[test]
    fn mixed_layers_decode_to_a_fixpoint() {
        assert_eq!(deep("%26lt%3Bscript%26gt%3B"), "<script>");
        assert_eq!(deep("&amp;amp;lt;"), "<");
        assert_eq!(deep("%5Cu003cx"), "<x");
        assert_eq!(deep("\\x25\\x33\\x43"), "<");
        assert_eq!(deep("java%26%23x09%3Bscript%26colon%3B"), "java\tscript:");
        assert_eq!(deep("a%00b\0c"), "abc");
        assert_eq!(view("UNION%0aSELECT%09*%2F**%2FFROM"), "UNION SELECT * FROM");
    }

    /// The input's own `+` are spaces; a `+` that decoding produced is a plus.
    #[test]
    fn only_the_inputs_own_plus_is_a_space() {
        assert_eq!(deep("1+union+select"), "1 union select");
        assert_eq!(deep("%2Bcmd|'/C calc'!A0"), "+cmd|'/C calc'!A0");
        assert_eq!(deep("%252BHYPERLINK(%2522x%2522)"), "+HYPERLINK(\"x\")");
        assert_eq!(deep("a+b&#43;c%2B"), "a b+c+");
    }

    #[test]
    fn decode_deep_reports_changes() {
        let mut out = String::new();
        assert!(!decode_deep("plain text", &mut out));
        assert_eq!(out, "plain text");
        assert!(!decode_deep("100% & \\d", &mut out));
        assert_eq!(out, "100% & \\d");
        assert!(decode_deep("a+b", &mut out));
        assert_eq!(out, "a b");
    }

    #[test]
    fn output_is_bounded() {
        let inputs = [
            "%25".repeat(5000),
            "&#x10FFFF;".repeat(1000),
            "%uD83D%uDE00".repeat(1000),
            "\\u{10FFFF}".repeat(1000),
            "&nbsp".repeat(1000),
            "%ff".repeat(1000),
            "\\xff".repeat(1000),
        ];
        for s in &inputs {
            let mut out = String::new();
            decode_deep(s, &mut out);
            assert!(out.len() <= s.len(), "{}", &s[..12]);
            assert!(out.len() <= max_decoded_len(s.len()));
        }
    }

    #[test]
    fn precheck() {
        for s in ["%3c", "a+b", "&lt;", "\\u003c", "a\0", "a\u{a0}b", "a\nb", "a/**/b", "<!--", "PHNjcmlwdD5hbGVydCgx", "ｐ", "＜script＞"]
        {
            assert!(may_need_decoding(s), "{s:?}");
        }
        for s in [
            "",
            "hello world",
            "/shop/item",
            "id=42",
            "user@example.com",
            "0123456789abcdef0123",
            "<b>x</b>",
            "Siobhán",
            "日本語",
            "/api/v1/users/list",
        ] {
            assert!(!may_need_decoding(s), "{s:?}");
        }
    }

    #[test]
    fn precheck_base64_runs_anywhere() {
        let payload = "PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg";
        for pad in 0..40 {
            let s = format!("{}{}", "x ".repeat(pad), &payload[..16 + pad % 10]);
            assert!(may_need_decoding(&s), "{s}");
            let lower = s.to_ascii_lowercase();
            assert!(!may_need_decoding(&lower), "{lower}");
            let t = format!("{s} tail words here");
            assert!(may_need_decoding(&t));
        }
        assert!(!may_need_decoding("abcdefghijO"));
        assert!(may_need_decoding("abcdefghijkO"));
        assert!(may_need_decoding(&format!("{}Z", "a".repeat(1000))));
    }

    #[test]
    fn never_panics_on_odd_input() {
        let odd = ["%", "%u", "%uD800", "&#", "&#x", "&", "\\", "\\u{", "\\x", "é%", "%c0", "/*", "<!--", "\u{a0}"];
        for a in odd {
            for b in odd {
                let s = format!("{a}{b}é{a}");
                let mut out = String::new();
                decode_deep(&s, &mut out);
                collapse(&s, &mut out);
                let mut segs = Vec::new();
                base64_segments(&s, &mut segs);
                let _ = may_need_decoding(&s);
            }
        }
    }
}
