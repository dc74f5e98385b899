//! HTTP-edge fuzzing (feature `fuzzing`; also built for this crate's unit tests): arbitrary
//! bytes become a request's headers, a verdict, a peer and a trust policy, and each function
//! asserts the property its code promises. fuzz/fuzz_targets/{waf_headers,client_ip}.rs are
//! thin wrappers; [`Bytes`] and [`headers_from`] serve the other front doors' fuzzing too.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use hyper::header::{HeaderName, HeaderValue};
use hyper::HeaderMap;

use crate::client_ip::{canonical, source_ip, ClientIpHeader, ClientIpPolicy, IpNet};
use crate::decision::{Action, Decision, Effect, WafMode};
use crate::scorer::{ScoreError, Verdict};
use crate::waf_headers::{stamp, verdict_headers};

/// Reads the fuzzer's bytes front to back; past the end every read is 0 / empty.
pub struct Bytes<'a>(pub &'a [u8]);

impl<'a> Bytes<'a> {
    pub fn byte(&mut self) -> u8 {
        let (first, rest) = self.0.split_first().map_or((0, &[][..]), |(b, r)| (*b, r));
        self.0 = rest;
        first
    }

    /// Up to the next 0xFF byte (or the end).
    pub fn chunk(&mut self) -> &'a [u8] {
        let end = self.0.iter().position(|&b| b == 0xFF).unwrap_or(self.0.len());
        let (chunk, rest) = self.0.split_at(end);
        self.0 = rest.get(1..).unwrap_or(&[]);
        chunk
    }

    pub fn text(&mut self) -> String {
        String::from_utf8_lossy(self.chunk()).into_owned()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// Headers from `name: value` chunks; those hyper refuses are skipped, as a server would
/// never have parsed them. Names starting with `x-waf-` are what a forger sends.
pub fn headers_from(input: &mut Bytes, max: usize) -> HeaderMap {
    let mut headers = HeaderMap::new();
    while !input.is_empty() && headers.len() < max {
        let line = input.chunk();
        let (name, value) = match line.iter().position(|&b| b == b':') {
            Some(at) => (&line[..at], line[at + 1..].trim_ascii()),
            None => (line, &b""[..]),
        };
        if let (Ok(name), Ok(value)) = (HeaderName::from_bytes(name), HeaderValue::from_bytes(value)) {
            headers.append(name, value);
        }
    }
    headers
}

/// Verdict-header preparation and stamping: whatever the client sent and whatever the verdict
/// holds (a reason or partial slug with any characters), the stamped map carries exactly the
/// verdict's X-Waf-* headers, each a valid header value, and every other header untouched.
pub fn waf_headers(data: &[u8]) {
    let mut input = Bytes(data);
    let action = [Action::Passed, Action::ShadowKill, Action::ActiveKill, Action::Error][input.byte() as usize % 4];
    let effect = [Effect::Forward, Effect::Kill, Effect::Refuse][input.byte() as usize % 3];
    let mode = if input.byte() % 2 == 0 { WafMode::Shadow } else { WafMode::Active };
    let shape = input.byte();
    let score = f32::from_bits(u32::from_le_bytes([input.byte(), input.byte(), input.byte(), input.byte()]));
    let verdict = if shape % 5 == 4 {
        Err(ScoreError::BadStatus { status: 500, detail: input.text() })
    } else {
        Ok(Verdict {
            score,
            reason: input.text(),
            detector: input.text(),
            incomplete: (shape & 1 != 0).then(|| input.text()),
            partial: (shape & 2 != 0).then(|| input.text()),
            evidence: Vec::new(),
        })
    };
    let decision = Decision { action, effect, cause: None };
    let mut headers = headers_from(&mut input, 64);
    let others = not_verdict(&headers);

    let pairs = verdict_headers(&verdict, decision, mode);
    for (name, value) in &pairs {
        assert!(name.starts_with("x-waf-") && HeaderName::from_bytes(name.as_bytes()).is_ok(), "bad verdict header name {name:?}");
        assert!(HeaderValue::from_str(value).is_ok(), "{name}: {value:?} is not a valid header value");
    }
    stamp(&mut headers, &pairs);

    let stamped: Vec<(&str, &str)> = headers
        .iter()
        .filter(|(n, _)| n.as_str().starts_with("x-waf-"))
        .map(|(n, v)| (n.as_str(), v.to_str().unwrap_or("<opaque>")))
        .collect();
    let expected: Vec<(&str, &str)> = pairs.iter().map(|(n, v)| (*n, v.as_str())).collect();
    assert_eq!(sorted(stamped), sorted(expected), "the stamped X-Waf-* headers are not exactly the verdict's");
    assert_eq!(not_verdict(&headers), others, "stamping changed a header that is not the verdict's");
}

/// The headers that are not X-Waf-*, sorted (removing entries may reorder a `HeaderMap`).
fn not_verdict(headers: &HeaderMap) -> Vec<(String, Vec<u8>)> {
    sorted(headers.iter().filter(|(n, _)| !n.as_str().starts_with("x-waf-")).map(|(n, v)| (n.to_string(), v.as_bytes().to_vec())).collect())
}

fn sorted<T: Ord>(mut items: Vec<T>) -> Vec<T> {
    items.sort();
    items
}

/// An address from 5 or 17 bytes (a family byte, then the address).
fn ip_from(input: &mut Bytes) -> IpAddr {
    if input.byte().is_multiple_of(2) {
        IpAddr::V4(Ipv4Addr::from([input.byte(), input.byte(), input.byte(), input.byte()]))
    } else {
        let mut octets = [0u8; 16];
        octets.iter_mut().for_each(|o| *o = input.byte());
        IpAddr::V6(Ipv6Addr::from(octets))
    }
}

/// Client IP from forwarded headers: the answer is the peer or an address one of the client
/// IP headers names (never something made up), the peer whenever the peer is not trusted or
/// no header is configured, and an IPv4-mapped address always comes back as IPv4.
pub fn client_ip(data: &[u8]) {
    let mut input = Bytes(data);
    let header = [
        ClientIpHeader::XForwardedFor,
        ClientIpHeader::XRealIp,
        ClientIpHeader::CfConnectingIp,
        ClientIpHeader::TrueClientIp,
        ClientIpHeader::None,
    ][input.byte() as usize % 5];
    let peer = ip_from(&mut input);
    let mut trusted = Vec::new();
    for _ in 0..input.byte() % 4 {
        let net = ip_from(&mut input);
        let prefix = input.byte() % if net.is_ipv4() { 33 } else { 129 };
        trusted.push(format!("{net}/{prefix}").parse::<IpNet>().expect("a formatted network parses"));
    }
    // Sometimes the peer itself is trusted, or the fuzzer would rarely reach the header path.
    if input.byte() % 2 == 0 {
        trusted.push(canonical(peer).to_string().parse().expect("an address parses as a network"));
    }
    let headers = headers_from(&mut input, 16);
    let policy = ClientIpPolicy { trusted: trusted.clone(), header };

    let chosen = source_ip(&headers, peer, &policy);
    assert!(!matches!(chosen, IpAddr::V6(v6) if v6.to_ipv4_mapped().is_some()), "{chosen} is IPv4-mapped");
    let peer_trusted = trusted.iter().any(|n| n.contains(peer));
    if !peer_trusted || header == ClientIpHeader::None {
        assert_eq!(chosen, canonical(peer), "an untrusted peer (or no header configured) must be the client");
    }
    if chosen != canonical(peer) {
        let named: Vec<IpAddr> = ["x-forwarded-for", "x-real-ip", "cf-connecting-ip", "true-client-ip"]
            .iter()
            .flat_map(|name| headers.get_all(*name).iter())
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(','))
            .filter_map(|hop| hop.trim().parse::<IpAddr>().ok())
            .map(canonical)
            .collect();
        assert!(named.contains(&chosen), "{chosen} is neither the peer {peer} nor named in {headers:?}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forged_verdict_headers_and_odd_reasons_are_handled() {
        let mut data = vec![1, 0, 1, 2, 0, 0, 0x80, 0x3f];
        data.extend_from_slice(b"sqli:\xe2\x80\x8bunion\r\n\xffsqli\xffbudget\x01\xff");
        data.extend_from_slice(b"x-waf-score: 0.0000\xffhost: shop.example\xffx-waf-reason: clean");
        waf_headers(&data);
        waf_headers(&[]);
        waf_headers(&[4, 1, 0, 4, 0, 0, 0, 0, b'e', b'\n']);
    }

    #[test]
    fn a_trusted_proxy_names_the_client_and_a_stranger_does_not() {
        // X-Forwarded-For, peer 10.0.0.1 trusted (no extra nets), one header.
        let mut data = vec![0, 0, 10, 0, 0, 1, 0, 0];
        data.extend_from_slice(b"x-forwarded-for: 203.0.113.9, ::ffff:10.0.0.1");
        client_ip(&data);
        // Peer not trusted: the header is ignored.
        let mut data = vec![1, 0, 192, 0, 2, 1, 0, 1];
        data.extend_from_slice(b"x-real-ip: 203.0.113.9");
        client_ip(&data);
        client_ip(&[]);
    }
}
