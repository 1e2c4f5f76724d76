//! Who a request comes from, for budgets and logs: the peer's address, or,
//! when the peer is a proxy the operator trusts, the address it forwarded.
//!
//! Only `X-Forwarded-For` from a trusted peer is believed, and only as far
//! as the chain of trusted proxies reaches: each hop appends the address it
//! saw, so the rightmost address that is not a trusted proxy is the visitor;
//! anything left of it the visitor wrote. `Forwarded` (RFC 7239) is never
//! read: a proxy that appends to one header passes the other through as the
//! visitor wrote it, so believing both would let a visitor name itself.
//! Used by [`super`]'s admission step only.

use actix_web::http::header::HeaderMap;
use std::net::IpAddr;
use std::str::FromStr;

/// An address block (`10.0.0.0/8`, `::1/128`, or one address).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cidr {
    net: IpAddr,
    prefix: u8,
}

/// Why a CIDR did not parse.
#[derive(Debug, thiserror::Error)]
#[error("{0:?} is not an address or address block (e.g. 10.0.0.0/8, ::1)")]
pub struct CidrError(String);

impl FromStr for Cidr {
    type Err = CidrError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad = || CidrError(s.chars().take(64).collect());
        let (addr, prefix) = match s.trim().split_once('/') {
            Some((a, p)) => (a, Some(p.parse::<u8>().map_err(|_| bad())?)),
            None => (s.trim(), None),
        };
        let net: IpAddr = addr.parse().map_err(|_| bad())?;
        let max = if net.is_ipv4() { 32 } else { 128 };
        let prefix = prefix.unwrap_or(max);
        if prefix > max {
            return Err(bad());
        }
        // An IPv4-mapped block is its IPv4 block, as peers are compared.
        match (net, canonical(net)) {
            (IpAddr::V6(_), v4 @ IpAddr::V4(_)) if prefix >= 96 => Ok(Self {
                net: v4,
                prefix: prefix - 96,
            }),
            _ => Ok(Self { net, prefix }),
        }
    }
}

impl Cidr {
    /// Whether `ip` lies in this block (an IPv4-mapped IPv6 address counts as IPv4).
    pub fn contains(&self, ip: IpAddr) -> bool {
        let ip = canonical(ip);
        match (self.net, ip) {
            (IpAddr::V4(n), IpAddr::V4(a)) => {
                masked(n.to_bits().into(), a.to_bits().into(), 32, self.prefix)
            }
            (IpAddr::V6(n), IpAddr::V6(a)) => masked(n.to_bits(), a.to_bits(), 128, self.prefix),
            _ => false,
        }
    }
}

/// Whether `a` and `n` agree on their first `prefix` of `width` bits.
fn masked(n: u128, a: u128, width: u32, prefix: u8) -> bool {
    let shift = width - u32::from(prefix);
    shift >= width || (n >> shift) == (a >> shift)
}

fn canonical(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
        v4 => v4,
    }
}

/// Whose budget an anonymous visitor at `ip` draws from: its address, or
/// for IPv6 its /64, one host's usual allocation (a visitor rotating
/// addresses inside it is still one visitor).
pub fn visitor(ip: IpAddr) -> String {
    match canonical(ip) {
        IpAddr::V6(v6) => {
            let s = v6.segments();
            format!("{:x}:{:x}:{:x}:{:x}::/64", s[0], s[1], s[2], s[3])
        }
        v4 => v4.to_string(),
    }
}

/// The visitor's address: `peer`, or, when `peer` is a trusted proxy, the
/// rightmost forwarded address that is not one.
pub fn client_ip(peer: Option<IpAddr>, headers: &HeaderMap, trusted: &[Cidr]) -> Option<IpAddr> {
    let peer = peer.map(canonical)?;
    let is_trusted = |ip: IpAddr| trusted.iter().any(|c| c.contains(ip));
    if !is_trusted(peer) {
        return Some(peer);
    }
    let chain = forwarded_chain(headers);
    // From the proxy nearest to us back towards the visitor.
    let mut client = peer;
    for ip in chain.into_iter().rev() {
        client = ip;
        if !is_trusted(ip) {
            break;
        }
    }
    Some(client)
}

/// The addresses the proxies recorded in `X-Forwarded-For`, leftmost
/// (farthest) first. An entry that is not an address (`unknown`, a name)
/// ends the chain there.
fn forwarded_chain(headers: &HeaderMap) -> Vec<IpAddr> {
    let joined = headers
        .get_all("x-forwarded-for")
        .filter_map(|v| v.to_str().ok())
        .collect::<Vec<_>>()
        .join(",");
    let entries: Vec<&str> = joined.split(',').map(str::trim).collect();
    let mut chain = Vec::new();
    for e in entries.iter().rev() {
        match parse_node(e) {
            Some(ip) => chain.push(canonical(ip)),
            None => break,
        }
    }
    chain.reverse();
    chain
}

/// `192.0.2.1`, `192.0.2.1:8080`, `"[2001:db8::1]:4711"` or `2001:db8::1` → the address.
fn parse_node(s: &str) -> Option<IpAddr> {
    let s = s.trim().trim_matches('"');
    if let Ok(ip) = s.parse() {
        return Some(ip);
    }
    if let Some(rest) = s.strip_prefix('[') {
        return rest.split(']').next()?.parse().ok();
    }
    let (host, port) = s.rsplit_once(':')?;
    port.bytes()
        .all(|b| b.is_ascii_digit())
        .then(|| host.parse().ok())?
}

#[cfg(test)]
mod tests {
    use super::*;
    use actix_web::http::header::{HeaderName, HeaderValue};

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.append(HeaderName::from_static(k), HeaderValue::from_static(v));
        }
        h
    }

    #[test]
    fn an_ipv6_visitor_is_its_64() {
        assert_eq!(visitor(ip("2001:db8::1")), "2001:db8:0:0::/64");
        assert_eq!(visitor(ip("2001:db8::ffff:1")), visitor(ip("2001:db8::2")));
        assert_ne!(visitor(ip("2001:db8:0:1::1")), visitor(ip("2001:db8::1")));
        assert_eq!(visitor(ip("203.0.113.7")), "203.0.113.7");
        assert_eq!(visitor(ip("::ffff:203.0.113.7")), "203.0.113.7");
    }

    fn ip(s: &str) -> IpAddr {
        s.parse().expect("ip")
    }

    #[test]
    fn blocks_parse_and_contain() {
        let c: Cidr = "10.0.0.0/8".parse().expect("cidr");
        assert!(c.contains(ip("10.200.1.1")) && !c.contains(ip("11.0.0.1")));
        assert!(c.contains(ip("::ffff:10.1.2.3")), "IPv4-mapped");
        let one: Cidr = "::1".parse().expect("cidr");
        assert!(one.contains(ip("::1")) && !one.contains(ip("::2")));
        let all: Cidr = "0.0.0.0/0".parse().expect("cidr");
        assert!(all.contains(ip("203.0.113.9")));
        for bad in ["10.0.0.0/33", "nope", "10.0.0.0/x", "::1/129", ""] {
            assert!(bad.parse::<Cidr>().is_err(), "{bad}");
        }
    }

    #[test]
    fn only_a_trusted_peer_is_believed_and_only_as_far_as_trusted_hops() {
        let trusted: Vec<Cidr> = vec![
            "127.0.0.1".parse().expect("c"),
            "10.0.0.0/8".parse().expect("c"),
        ];
        let xff = headers(&[("x-forwarded-for", "6.6.6.6, 198.51.100.7, 10.0.0.2")]);
        // A trusted proxy, behind another trusted one: the visitor is the first untrusted from the right.
        assert_eq!(
            client_ip(Some(ip("127.0.0.1")), &xff, &trusted),
            Some(ip("198.51.100.7"))
        );
        // An untrusted peer's header is its own words.
        assert_eq!(
            client_ip(Some(ip("203.0.113.5")), &xff, &trusted),
            Some(ip("203.0.113.5"))
        );
        // `Forwarded` is never believed: the proxy appended to X-Forwarded-For.
        let both = headers(&[
            ("forwarded", "for=192.0.2.60"),
            ("x-forwarded-for", "[2001:db8:cafe::17]:4711"),
        ]);
        assert_eq!(
            client_ip(Some(ip("10.1.1.1")), &both, &trusted),
            Some(ip("2001:db8:cafe::17"))
        );
        let mapped: Cidr = "::ffff:10.0.0.1".parse().expect("cidr");
        assert!(
            mapped.contains(ip("10.0.0.1")),
            "an IPv4-mapped proxy matches its IPv4 peer"
        );
        // `unknown` ends the chain: the last proxy is as far as we can see.
        let unknown = headers(&[("x-forwarded-for", "unknown")]);
        assert_eq!(
            client_ip(Some(ip("127.0.0.1")), &unknown, &trusted),
            Some(ip("127.0.0.1"))
        );
        assert_eq!(client_ip(None, &xff, &trusted), None);
    }
}
