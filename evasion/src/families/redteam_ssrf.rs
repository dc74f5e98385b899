//! Red-team server-side request forgery, written apart from the detectors (held out in spirit):
//! an internal target (cloud metadata of AWS/GCP/Azure/Alibaba/Oracle, loopback services,
//! private ranges) × how its host is spelled (dotted, decimal, hex, octal, short `127.1`,
//! IPv6 and IPv4-mapped, wildcard DNS such as `nip.io`, `@` userinfo and `#` confusion) × a
//! scheme (`http`, `https`, `gopher`, `dict`, `file`, `ftp`, `ldap`, `tftp`, `jar:`) × the
//! parameter a fetcher reads (`url`, `webhook`, `image`, `callback`, `feed`…) in a query, a
//! JSON body or a header.

use crate::mutate::{join, percent_specials};
use crate::place::{json_string, Request};
use crate::{Carrier, Family, Rng, Variant};

pub struct RedteamSsrf;

/// An IPv4 host as a URL parser accepts it.
fn spell_ipv4(rng: &mut Rng, ip: [u8; 4]) -> (String, &'static str) {
    let n = u32::from_be_bytes(ip);
    match rng.below(9) {
        0 => (n.to_string(), "decimal"),
        1 => (format!("0x{n:x}"), "hex"),
        2 => (ip.iter().map(|b| format!("0{b:o}")).collect::<Vec<_>>().join("."), "octal"),
        3 => (format!("[::ffff:{}.{}.{}.{}]", ip[0], ip[1], ip[2], ip[3]), "v4-mapped"),
        4 => (format!("{}.{}.{}.{}.nip.io", ip[0], ip[1], ip[2], ip[3]), "wildcard-dns"),
        5 => (ip.iter().map(|b| format!("0x{b:02x}")).collect::<Vec<_>>().join("."), "hex-dotted"),
        _ => (format!("{}.{}.{}.{}", ip[0], ip[1], ip[2], ip[3]), ""),
    }
}

/// Host, path and the target's name.
fn target(rng: &mut Rng) -> (String, String, &'static str, &'static str) {
    match rng.below(10) {
        0 | 1 => {
            let (h, s) = spell_ipv4(rng, [169, 254, 169, 254]);
            let path = *rng.pick(&[
                "/latest/meta-data/iam/security-credentials/",
                "/latest/user-data",
                "/metadata/instance?api-version=2021-02-01",
                "/computeMetadata/v1/instance/service-accounts/default/token",
                "/opc/v2/instance/",
                "/latest/api/token",
            ]);
            (h, path.into(), "metadata", s)
        }
        2 => ("metadata.google.internal".into(), "/computeMetadata/v1/project/project-id".into(), "metadata-name", ""),
        3 => ("100.100.100.200".into(), "/latest/meta-data/ram/security-credentials/".into(), "metadata", ""),
        4 => ("[fd00:ec2::254]".into(), "/latest/meta-data/".into(), "metadata-v6", ""),
        5 | 6 => {
            let (h, s) = spell_ipv4(rng, [127, 0, 0, 1]);
            let port = *rng.pick(&["", ":6379", ":8080", ":2375", ":9200", ":11211", ":22", ":5984", ":8500", ":10250"]);
            let path = *rng.pick(&["/", "/admin", "/server-status", "/_cat/indices", "/v1.24/containers/json", "/v1/agent/self", "/pods"]);
            (format!("{h}{port}"), path.into(), "loopback", s)
        }
        7 => {
            let h = *rng.pick(&[
                "localhost",
                "127.1",
                "0",
                "0.0.0.0",
                "[::1]",
                "[::]",
                "localtest.me",
                "127.0.0.1.nip.io",
                "[0:0:0:0:0:ffff:127.0.0.1]",
            ]);
            (h.into(), "/admin".into(), "loopback-alias", "")
        }
        8 => {
            let ip = [10, rng.range(0, 255) as u8, rng.range(0, 255) as u8, rng.range(1, 254) as u8];
            let (h, s) = spell_ipv4(rng, ip);
            (format!("{h}:{}", *rng.pick(&["8080", "80", "9000", "3000"])), "/internal/api".into(), "private", s)
        }
        _ => {
            let subnet = rng.range(0, 10) as u8;
            let (h, s) = spell_ipv4(rng, [192, 168, subnet, 1]);
            (h, "/cgi-bin/config.exp".into(), "private", s)
        }
    }
}

fn url(rng: &mut Rng) -> (String, Vec<&'static str>) {
    let (host, path, what, spell) = target(rng);
    let (url, scheme) = match rng.below(12) {
        0 => (format!("gopher://{host}/_%2A1%0D%0A%248%0D%0Aflushall%0D%0A"), "gopher"),
        1 => (format!("dict://{host}/info"), "dict"),
        2 => ("file:///etc/passwd".to_string(), "file"),
        3 => (format!("file://{host}/etc/hosts"), "file"),
        4 => (format!("https://{host}{path}"), "https"),
        5 => (format!("http://attacker.example@{host}{path}"), "userinfo"),
        6 => (format!("http://{host}#@cdn.example.com{path}"), "fragment-confusion"),
        7 => (format!("//{host}{path}"), "scheme-relative"),
        8 => (format!("ldap://{host}/dc=x"), "ldap"),
        9 => (format!("jar:http://{host}{path}!/"), "jar"),
        _ => (format!("http://{host}{path}"), "http"),
    };
    (url, vec![what, spell, scheme])
}

impl Family for RedteamSsrf {
    fn name(&self) -> &'static str {
        "redteam-ssrf"
    }

    fn detector(&self) -> &'static str {
        "ssrf"
    }

    fn generate(&self, rng: &mut Rng) -> Variant {
        let (url, mut names) = url(rng);
        let param = *rng.pick(&[
            "url",
            "uri",
            "webhook_url",
            "image",
            "imageUrl",
            "callback",
            "feed",
            "target",
            "proxy",
            "src",
            "avatar_url",
            "link",
            "dest",
        ]);
        let (carrier, place) = match rng.below(5) {
            0 => (Carrier::Request(Request::new("GET", &format!("/api/fetch?{param}={}", percent_specials(&url)))), "in-param"),
            1 => {
                let body = format!("{{\"{param}\":{},\"events\":[\"push\"]}}", json_string(&url));
                (Carrier::Request(Request::new("POST", "/api/hooks").header("Content-Type", "application/json").body(&body)), "in-json")
            }
            2 => {
                let body = format!("{param}={}&name=x", percent_specials(&url));
                (
                    Carrier::Request(
                        Request::new("POST", "/profile").header("Content-Type", "application/x-www-form-urlencoded").body(&body),
                    ),
                    "in-form",
                )
            }
            3 => (Carrier::Value, ""),
            _ => (
                Carrier::Request(Request::new("GET", &format!("/proxy?{param}={}", percent_specials(&percent_specials(&url))))),
                "double-url",
            ),
        };
        names.push(place);
        Variant { family: self.name(), mutation: join(&names), payload: url, carrier }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn varied_and_seeded() {
        super::super::assert_varied_and_seeded(&super::RedteamSsrf, 300, 120);
    }
}
