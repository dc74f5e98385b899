//! Mail command and header injection: a form value (an address, a name, a mailbox) × a
//! smuggled line break in one of its spellings × SMTP commands, IMAP tagged commands or mail
//! headers × case × a transport layer.

use crate::mutate::{join, transport_layer};
use crate::{Carrier, Family, Rng, Variant};

pub struct Mail;

const VALUES: &[&str] = &["alice@example.com", "bob", "John Smith", "INBOX", "support@shop.test", "", "hello", "x@y.z"];
const DOMAINS: &[&str] = &["evil.test", "attacker.example", "mail.invalid", "198.51.100.23", "spam.example.org"];
const USERS: &[&str] = &["victim", "admin", "root", "all", "ceo", "list"];

/// A line break as the attacker writes it, and the mutation's name.
fn line_break(rng: &mut Rng) -> (&'static str, &'static str) {
    *rng.pick(&[
        ("\r\n", "crlf"),
        ("\r\n", "crlf"),
        ("\n", "lf"),
        ("\r", "cr"),
        ("%0d%0a", "pct-crlf"),
        ("%0A", "pct-lf"),
        ("\\r\\n", "escaped-crlf"),
        ("&#13;&#10;", "entity-crlf"),
    ])
}

fn address(rng: &mut Rng) -> String {
    format!("{}{}@{}", rng.pick(USERS), rng.below(100), rng.pick(DOMAINS))
}

/// The injected lines (without breaks), and the kind's name.
fn lines(rng: &mut Rng) -> (Vec<String>, &'static str) {
    match rng.below(3) {
        0 => {
            let mut l = Vec::new();
            if rng.chance(0.3) {
                l.push(format!("{} {}", rng.pick(&["HELO", "EHLO"]), rng.pick(DOMAINS)));
            }
            if rng.chance(0.5) {
                l.push(format!("MAIL FROM:<{}>", address(rng)));
            }
            l.push(format!("RCPT TO:{}<{}>", rng.pick(&["", " "]), address(rng)));
            if rng.chance(0.5) {
                l.push("DATA".into());
                l.push(format!("Subject: {}", rng.pick(&["hi", "invoice", "urgent"])));
                l.push(".".into());
            }
            if rng.chance(0.5) {
                l.push("QUIT".into());
            }
            (l, "smtp")
        }
        1 => {
            let tag = format!("{}{}", rng.pick(&["a", "A", "x", "t", ""]), rng.range(1, 999));
            let cmd = match rng.below(7) {
                0 => format!("LOGIN {} {}", rng.pick(USERS), rng.pick(&["secret", "pass123", "\"p w\""])),
                1 => format!("FETCH {} ({})", rng.pick(&["1:*", "1", "2,4", "*"]), rng.pick(&["BODY[]", "FLAGS", "RFC822", "ENVELOPE"])),
                2 => format!("SELECT {}", rng.pick(&["INBOX", "Sent", "\"Deleted Items\"", "Drafts"])),
                3 => {
                    format!("UID {} 1:* {}", rng.pick(&["FETCH", "SEARCH", "STORE"]), rng.pick(&["(BODY[])", "ALL", "+FLAGS (\\Deleted)"]))
                }
                4 => "CAPABILITY".into(),
                5 => format!("DELETE {}", rng.pick(&["INBOX", "Archive", "Trash"])),
                _ => format!("STORE {} +FLAGS (\\Deleted)", rng.pick(&["1:*", "1"])),
            };
            let mut l = vec![format!("{tag} {cmd}")];
            if rng.chance(0.3) {
                l.push(format!("{tag}b LOGOUT"));
            }
            (l, "imap")
        }
        _ => {
            let header = match rng.below(6) {
                0 | 1 => format!("Bcc: {}", address(rng)),
                2 => format!("Cc: {}", address(rng)),
                3 => format!("To: {}", address(rng)),
                4 => format!("Subject: {}", rng.pick(&["You won", "Reset your password", "hi"])),
                _ => format!("Reply-To: {}", address(rng)),
            };
            let mut l = vec![header];
            if rng.chance(0.2) {
                l.push(format!("Bcc: {}", address(rng)));
            }
            (l, "header")
        }
    }
}

impl Family for Mail {
    fn name(&self) -> &'static str {
        "mail-injection"
    }

    fn detector(&self) -> &'static str {
        "mail-injection"
    }

    fn generate(&self, rng: &mut Rng) -> Variant {
        let (injected, kind) = lines(rng);
        let (brk, brk_name) = line_break(rng);
        let mut names = vec![kind, brk_name];
        let mut text = rng.pick(VALUES).to_string();
        let mut lowered = false;
        for line in &injected {
            let line = if rng.chance(0.2) {
                lowered = true;
                line.to_ascii_lowercase()
            } else {
                line.clone()
            };
            text.push_str(brk);
            text.push_str(&line);
        }
        if lowered {
            names.push("lower-case");
        }
        let (payload, layer) = transport_layer(rng, &text);
        names.push(layer);
        Variant { family: "mail-injection", mutation: join(&names), payload, carrier: Carrier::Value }
    }
}
