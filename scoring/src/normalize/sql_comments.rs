//! The SQL reading of a decoded text, for the SQLi model only (an extra text it scores, never
//! a pattern view): what a SQL server parses once its comments are gone.
//!
//! - `/* ... */` becomes a space; MySQL executable comments `/*!50000 ... */` keep their
//!   content (the server runs it).
//! - `#` (MySQL) and `--` start a comment that a line break ends: `union#x\nselect` is
//!   `union select`. `--` not followed by a space is a comment for MSSQL, PostgreSQL, Oracle
//!   and SQLite but arithmetic for MySQL; the model also reads the text with it, so either
//!   reading is scored.
//! - Whitespace runs (with the line breaks that ended comments) become one space; none is
//!   kept at either end.
//! - A `%` that is not a percent escape inside a word is dropped when the word without it is
//!   SQL (`se%lect`, `info%rmation_schema`): IIS/ASP drop such stray percents before the
//!   application sees the value, so the server runs `select`.
//!
//! Quotes are not tracked: an injected value starts inside a string of the query, so a
//! tokenizer cannot know which `#` is quoted; reading both ways is what the extra text is for.
//! Linear: three passes over the bytes, and one look at each word holding a `%`.

/// Appends the SQL reading of `input` to `out`; returns whether it differs from `input`.
pub fn sql_reading(input: &str, out: &mut String) -> bool {
    // Line comments first, while their line breaks are still there; then the decoded view's
    // own collapse (block and executable comments, whitespace); then stray percents.
    let mut uncommented = String::with_capacity(input.len());
    strip_line_comments(input, &mut uncommented);
    let mut collapsed = String::with_capacity(uncommented.len());
    super::collapse::collapse_dropping_comments(&uncommented, &mut collapsed);
    let b = collapsed.trim_matches(' ').as_bytes();
    let mut o: Vec<u8> = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if is_word_byte(b[i]) {
            let end = word_end(b, i);
            push_word(&b[i..end], &mut o);
            i = end;
        } else {
            o.push(b[i]);
            i += 1;
        }
    }
    let changed = o.as_slice() != input.as_bytes();
    // Only ASCII-delimited ranges, whole NBSPs and ASCII `%` were removed: `o` is valid UTF-8.
    match String::from_utf8(o) {
        Ok(s) => out.push_str(&s),
        Err(e) => out.push_str(&String::from_utf8_lossy(e.as_bytes())),
    }
    changed
}

/// `#` and `--` comments replaced by a space up to (not including) the line break.
fn strip_line_comments(input: &str, out: &mut String) {
    let b = input.as_bytes();
    let mut kept = 0;
    let mut i = 0;
    while let Some(k) = memchr::memchr2(b'#', b'-', &b[i..]) {
        let at = i + k;
        if b[at] == b'-' && b.get(at + 1) != Some(&b'-') {
            i = at + 1;
            continue;
        }
        out.push_str(&input[kept..at]);
        out.push(' ');
        kept = line_end(b, at);
        i = kept;
    }
    out.push_str(&input[kept..]);
}

/// Whether `text` holds anything [`sql_reading`] removes beyond what the decoded view's
/// collapse already did: a `#` or `--` comment, or a stray `%`.
pub fn may_differ(text: &str) -> bool {
    let b = text.as_bytes();
    memchr::memchr3_iter(b'#', b'-', b'%', b).any(|i| b[i] != b'-' || b.get(i + 1) == Some(&b'-'))
}

/// Index of the line break ending the comment that starts at `from` (or the end).
fn line_end(b: &[u8], from: usize) -> usize {
    memchr::memchr2(b'\n', b'\r', &b[from..]).map_or(b.len(), |k| from + k)
}

fn is_word_byte(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c == b'%'
}

fn word_end(b: &[u8], from: usize) -> usize {
    b[from..].iter().position(|&c| !is_word_byte(c)).map_or(b.len(), |k| from + k)
}

/// Pushes a word, without its `%` bytes when what remains is SQL.
fn push_word(word: &[u8], o: &mut Vec<u8>) {
    if !word.contains(&b'%') {
        o.extend_from_slice(word);
        return;
    }
    let bare: Vec<u8> = word.iter().copied().filter(|&c| c != b'%').collect();
    let sql = !bare.is_empty() && bare.split(|&c| c == b'_').filter(|p| !p.is_empty()).all(is_sql_word);
    o.extend_from_slice(if sql { &bare } else { word });
}

/// Keywords, functions and catalog-name parts an injection spells: a stray `%` inside one
/// of these is dropped (the word as a whole, or each `_`-separated part, must be one).
const SQL_WORDS: &str = "all and ascii benchmark by case cast char column columns concat convert count database declare delay delete \
     distinct drop else end exec execute extractvalue from group having hex if ifnull information insert into like limit load \
     file master mid name not null or order outfile schema schemata select set sleep substr substring sys sysobjects table \
     tables then top union update updatexml user values version waitfor when where xor xp cmdshell";

fn is_sql_word(part: &[u8]) -> bool {
    SQL_WORDS.split_ascii_whitespace().any(|w| w.as_bytes().eq_ignore_ascii_case(part))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(s: &str) -> String {
        crate::normalize::apply(sql_reading, s).0
    }

    #[test]
    fn line_comments_end_at_the_line_break() {
        assert_eq!(read("1\tunion#\n\rselect--\n\r1,2,3"), "1 union select 1,2,3");
        assert_eq!(read("@@new union#sqlmapsqlmap...\nselect 1,2,database#sqlmap\n()"), "@@new union select 1,2,database ()");
        assert_eq!(read("1 union-- x\nselect 2"), "1 union select 2");
        assert_eq!(read("' or 1=1 -- "), "' or 1=1");
    }

    #[test]
    fn block_comments_and_executable_comments() {
        assert_eq!(read("1 un/**/ion/*x*/select 2"), "1 un ion select 2");
        assert_eq!(read("1 /*!50000union*/ /*!select*/ 2"), "1 union select 2");
        assert_eq!(read("1 /* never closed"), "1");
    }

    #[test]
    fn stray_percents_go_only_from_sql_words() {
        assert_eq!(
            read("10 a%nd 1=0/(se%lect top 1 ta%ble_name fr%om info%rmation_schema.tables)"),
            "10 and 1=0/(select top 1 table_name from information_schema.tables)"
        );
        assert_eq!(read("50% off, 100%sure"), "50% off, 100%sure");
        assert_eq!(read("%"), "%");
    }

    #[test]
    fn unchanged_text_says_so() {
        assert_eq!(crate::normalize::apply(sql_reading, "select name from users"), ("select name from users".to_string(), false));
        assert!(sql_reading("a#b", &mut String::new()));
        assert!(may_differ("a--b") && may_differ("a#") && may_differ("5%"));
        assert!(!may_differ("2024-01-02 a-b /c"));
    }

    #[test]
    fn multibyte_text_survives() {
        assert_eq!(read("é#ü\nñ --ø"), "é ñ");
        assert_eq!(read("café\u{a0}bar"), "café bar");
    }
}
