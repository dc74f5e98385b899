//! Who sent a request. One header names the client (WAF_CLIENT_IP_HEADER), and it is believed
//! only when the socket peer is a configured trusted proxy: anyone can send those headers, and a
//! believed forgery would pin an attacker's events on someone else's address. Only the one
//! configured header is read: if several were consulted in a fixed order, a client could add
//! the higher-ranked one (say CF-Connecting-IP behind a proxy that only rewrites
//! X-Forwarded-For) and choose its own address.

use std::net::IpAddr;
use std::str::FromStr;

use hyper::HeaderMap;

/// An IP network (`10.0.0.0/8`, `::1/128`, or a bare address).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IpNet {
    addr: IpAddr,
    prefix: u8,
}

impl FromStr for IpNet {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let (addr_text, prefix_text) = match s.split_once('/') {
            Some((a, p)) => (a, Some(p)),
            None => (s, None),
        };
        let addr: IpAddr = addr_text.parse().map_err(|_| format!("`{s}` is not an IP address or CIDR"))?;
        let max = if addr.is_ipv4() { 32 } else { 128 };
        let prefix = match prefix_text {
            None => max,
            Some(p) => p.parse::<u8>().ok().filter(|p| *p <= max).ok_or_else(|| format!("`{s}`: prefix must be 0..={max}"))?,
        };
        Ok(IpNet { addr, prefix })
    }
}

impl IpNet {
    pub fn contains(&self, ip: IpAddr) -> bool {
        let ip = canonical(ip);
        match (self.addr, ip) {
            (IpAddr::V4(net), IpAddr::V4(ip)) => {
                let mask = u32::MAX.checked_shl(32 - self.prefix as u32).unwrap_or(0);
                u32::from(net) & mask == u32::from(ip) & mask
            }
            (IpAddr::V6(net), IpAddr::V6(ip)) => {
                let mask = u128::MAX.checked_shl(128 - self.prefix as u32).unwrap_or(0);
                u128::from(net) & mask == u128::from(ip) & mask
            }
            _ => false,
        }
    }
}

/// IPv4 peers on a dual-stack socket arrive as `::ffff:a.b.c.d`.
pub fn canonical(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map(IpAddr::V4).unwrap_or(ip),
        v4 => v4,
    }
}

pub fn any_contains(nets: &[IpNet], ip: IpAddr) -> bool {
    nets.iter().any(|n| n.contains(ip))
}

/// Which request header names the client when the peer is a trusted proxy
/// (WAF_CLIENT_IP_HEADER).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ClientIpHeader {
    /// The rightmost X-Forwarded-For entry that is not a trusted proxy.
    #[default]
    XForwardedFor,
    /// X-Real-IP (nginx `proxy_set_header X-Real-IP $remote_addr`).
    XRealIp,
    /// CF-Connecting-IP (Cloudflare).
    CfConnectingIp,
    /// True-Client-IP (Akamai, Cloudflare Enterprise).
    TrueClientIp,
    /// No header: the socket peer is the client.
    None,
}

impl ClientIpHeader {
    fn single_value_header(self) -> Option<&'static str> {
        match self {
            ClientIpHeader::XRealIp => Some("x-real-ip"),
            ClientIpHeader::CfConnectingIp => Some("cf-connecting-ip"),
            ClientIpHeader::TrueClientIp => Some("true-client-ip"),
            ClientIpHeader::XForwardedFor | ClientIpHeader::None => None,
        }
    }
}

/// Who may name the client, and in which header.
#[derive(Clone, Debug, Default)]
pub struct ClientIpPolicy {
    pub trusted: Vec<IpNet>,
    pub header: ClientIpHeader,
}

/// The client address for events and logs.
pub fn source_ip(headers: &HeaderMap, peer: IpAddr, policy: &ClientIpPolicy) -> IpAddr {
    let peer = canonical(peer);
    let trusted = policy.trusted.as_slice();
    if !any_contains(trusted, peer) || policy.header == ClientIpHeader::None {
        return peer;
    }
    if let Some(name) = policy.header.single_value_header() {
        // Exactly one value: a repeated header means something upstream appended instead of
        // replacing, and the first copy may be the client's.
        let mut values = headers.get_all(name).iter();
        return match (values.next(), values.next()) {
            (Some(v), None) => v.to_str().ok().and_then(|v| v.trim().parse::<IpAddr>().ok()).map(canonical).unwrap_or(peer),
            _ => peer,
        };
    }
    // Rightmost address not belonging to our own proxies: entries left of it were written by
    // the client and prove nothing.
    let hops: Vec<IpAddr> = headers
        .get_all("x-forwarded-for")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .filter_map(|hop| hop.trim().parse::<IpAddr>().ok())
        .map(canonical)
        .collect();
    hops.iter().rev().find(|ip| !any_contains(trusted, **ip)).or(hops.first()).copied().unwrap_or(peer)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nets(list: &[&str]) -> Vec<IpNet> {
        list.iter().map(|s| s.parse().unwrap()).collect()
    }

    #[test]
    fn cidr_matching() {
        let net: IpNet = "10.1.0.0/16".parse().unwrap();
        assert!(net.contains("10.1.200.3".parse().unwrap()));
        assert!(!net.contains("10.2.0.1".parse().unwrap()));
        assert!(net.contains("::ffff:10.1.0.9".parse().unwrap()));
        let lo: IpNet = "127.0.0.1".parse().unwrap();
        assert!(!lo.contains("127.0.0.2".parse().unwrap()));
        assert!("::1".parse::<IpNet>().unwrap().contains("::1".parse().unwrap()));
        assert!("0.0.0.0/0".parse::<IpNet>().unwrap().contains("8.8.8.8".parse().unwrap()));
        assert!("10.0.0.0/33".parse::<IpNet>().is_err());
        assert!("nope".parse::<IpNet>().is_err());
    }

    fn policy(trusted: &[&str], header: ClientIpHeader) -> ClientIpPolicy {
        ClientIpPolicy { trusted: nets(trusted), header }
    }

    #[test]
    fn forwarded_headers_only_from_trusted_peers_and_only_the_configured_one() {
        let mut headers = HeaderMap::new();
        headers.insert("x-forwarded-for", "6.6.6.6, 203.0.113.7, 10.0.0.5".parse().unwrap());
        let xff = policy(&["10.0.0.0/8"], ClientIpHeader::XForwardedFor);
        let from_lb: IpAddr = "10.0.0.9".parse().unwrap();
        let from_internet: IpAddr = "198.51.100.1".parse().unwrap();
        assert_eq!(source_ip(&headers, from_lb, &xff), "203.0.113.7".parse::<IpAddr>().unwrap());
        assert_eq!(source_ip(&headers, from_internet, &xff), from_internet);
        // A client-added X-Real-IP or CF-Connecting-IP does not outrank the configured header.
        headers.insert("x-real-ip", "192.0.2.44".parse().unwrap());
        headers.insert("cf-connecting-ip", "192.0.2.55".parse().unwrap());
        assert_eq!(source_ip(&headers, from_lb, &xff), "203.0.113.7".parse::<IpAddr>().unwrap());
        let real = policy(&["10.0.0.0/8"], ClientIpHeader::XRealIp);
        assert_eq!(source_ip(&headers, from_lb, &real), "192.0.2.44".parse::<IpAddr>().unwrap());
        let cf = policy(&["10.0.0.0/8"], ClientIpHeader::CfConnectingIp);
        assert_eq!(source_ip(&headers, from_lb, &cf), "192.0.2.55".parse::<IpAddr>().unwrap());
        let tci = policy(&["10.0.0.0/8"], ClientIpHeader::TrueClientIp);
        assert_eq!(source_ip(&headers, from_lb, &tci), from_lb, "absent header: the peer");
        let none = policy(&["10.0.0.0/8"], ClientIpHeader::None);
        assert_eq!(source_ip(&headers, from_lb, &none), from_lb);
        assert_eq!(source_ip(&headers, from_lb, &policy(&[], ClientIpHeader::XRealIp)), from_lb);
        headers.append("x-real-ip", "192.0.2.99".parse().unwrap());
        assert_eq!(source_ip(&headers, from_lb, &real), from_lb, "two X-Real-IP values prove nothing");
    }
}
