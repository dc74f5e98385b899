//! Session fixation: a value that makes the victim's browser store a session cookie the
//! attacker chose — script that writes `document.cookie`, a `<meta http-equiv="Set-Cookie">`,
//! a `Set-Cookie` header smuggled after a line break — × session cookie names of common
//! platforms × cookie attributes × case and a transport layer.

use crate::mutate::{join, random_case, transport_layer};
use crate::{Carrier, Family, Rng, Variant};

pub struct SessionFixation;

const SESSION_NAMES: &[&str] = &[
    "JSESSIONID",
    "PHPSESSID",
    "ASP.NET_SessionId",
    "ASPSESSIONIDQQGGGNCR",
    "sessionid",
    "connect.sid",
    "laravel_session",
    "CFID",
    "sid",
    "session",
];

fn cookie(rng: &mut Rng) -> String {
    let id: String = (0..rng.range(8, 32)).map(|_| *rng.pick(&['a', 'b', 'c', 'd', 'e', 'f', '0', '1', '2', '7', '9', 'X'])).collect();
    let mut c = format!("{}={id}", rng.pick(SESSION_NAMES));
    for attr in ["; path=/", "; domain=.example.com", "; expires=Fri, 01 Jan 2038 00:00:00 GMT", "; SameSite=None"] {
        if rng.chance(0.3) {
            c.push_str(attr);
        }
    }
    c
}

impl Family for SessionFixation {
    fn name(&self) -> &'static str {
        "session-fixation"
    }

    fn detector(&self) -> &'static str {
        "session-fixation"
    }

    fn generate(&self, rng: &mut Rng) -> Variant {
        let c = cookie(rng);
        let (text, kind) = match rng.below(6) {
            0 => (format!("<script>document.cookie=\"{c}\"</script>"), "script-cookie"),
            1 => (format!("\";document.cookie='{c}';//"), "js-breakout-cookie"),
            2 => (format!("<img src=x onerror=\"document.cookie='{c}'\">"), "handler-cookie"),
            3 => (format!("<meta http-equiv=\"Set-Cookie\" content=\"{c}\">"), "meta-set-cookie"),
            4 => (
                format!("{}{}Set-Cookie: {c}", rng.pick(&["en", "/home", "x"]), rng.pick(&["\r\n", "%0d%0a", "\n", "%0a"])),
                "crlf-set-cookie",
            ),
            _ => (
                format!("{}document.cookie={}", rng.pick(&["", "javascript:", "'-"]), rng.pick(&[format!("'{c}'"), format!("\"{c}\"")])),
                "bare-cookie-write",
            ),
        };
        let mut names = vec![kind];
        let text = if matches!(kind, "meta-set-cookie" | "crlf-set-cookie") && rng.chance(0.3) {
            names.push("case");
            random_case(rng, &text)
        } else {
            text
        };
        let (payload, layer) = transport_layer(rng, &text);
        names.push(layer);
        Variant { family: "session-fixation", mutation: join(&names), payload, carrier: Carrier::Value }
    }
}
