//! Where the agent may go: web pages only (http and https, and `about:blank`), and within
//! them the user's allow and deny lists.
//!
//! A URL is read the way Chrome reads it (WHATWG parsing, by the browser itself): the
//! scheme and host are normalised first, so `HTTPS://`, a backslash before an `@`, a
//! percent-encoded or full-width host, a tab inside it, a trailing dot, numeric IPv4
//! forms (`2130706433`, `0x7f.1`) and an IPv4-mapped IPv6 address (`[::ffff:127.0.0.1]`)
//! all name the host Chrome would visit. A pattern is read the same way, once, into its
//! parts: lists compare schemes, hosts and ports as parsed, never the text as typed, so
//! user info (`user@`) in a URL changes nothing.

use protocol::settings::Settings;
use run_contract::url::{Host, WebUrl as Url};

/// The allow and deny lists of the settings a run uses, read into patterns.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Firewall {
    allow: Vec<Pattern>,
    deny: Vec<Pattern>,
    /// Whether the pages' own requests (not only documents) to denied hosts are stopped too.
    pub page_requests: bool,
}

impl Firewall {
    pub fn new(settings: &Settings) -> Firewall {
        Firewall {
            page_requests: settings.agent.block_page_requests,
            ..Firewall::from_lists(&settings.allow, &settings.deny)
        }
    }

    pub fn from_lists(allow: &[String], deny: &[String]) -> Firewall {
        let read = |list: &[String]| list.iter().map(|p| Pattern::read(p)).collect();
        Firewall { allow: read(allow), deny: read(deny), page_requests: false }
    }

    /// Whether a page's own request (a script, an image, a fetch) to `raw` may go: only
    /// the deny list applies, since an allow list names the sites to visit, not the hosts
    /// their pages load from.
    pub fn check_page_request(&self, raw: &str) -> Result<(), String> {
        let Some(url) = Url::parse(raw.trim()) else { return Ok(()) };
        let Some(host) = host_of(&url) else { return Ok(()) };
        let target = Target { url: &url, host: &host };
        match self.deny.iter().find(|p| p.matches(&target)) {
            Some(pattern) => Err(format!("{raw} is on your deny list ({}).", pattern.text)),
            None => Ok(()),
        }
    }

    /// Whether the agent may open or act on `raw`, or why not (a sentence for the model and
    /// the person).
    pub fn check(&self, raw: &str) -> Result<(), String> {
        let Some(url) = Url::parse(raw.trim()) else {
            return Err(format!(
                "{raw:?} is not a web address. Give a full URL starting with https://."
            ));
        };
        match url.scheme() {
            "http" | "https" => {}
            "about" if url.path() == "blank" => return Ok(()),
            scheme => {
                return Err(format!(
                    "{raw} is not a web address the agent may open: it visits http and https pages only, never {scheme}: ones."
                ));
            }
        }
        let Some(host) = host_of(&url) else {
            return Err(format!("{raw} names no host."));
        };
        let target = Target { url: &url, host: &host };
        if let Some(pattern) = self.deny.iter().find(|p| p.matches(&target)) {
            return Err(format!(
                "{raw} is on your deny list ({}). Edit the list in Settings to allow it.",
                pattern.text
            ));
        }
        if !self.allow.is_empty() && !self.allow.iter().any(|p| p.matches(&target)) {
            return Err(format!(
                "{raw} is not on your allow list. Add it in Settings to let the agent go there."
            ));
        }
        Ok(())
    }
}

/// A URL being checked, with its host as Chrome resolves it.
struct Target<'a> {
    url: &'a Url,
    host: &'a str,
}

/// One list entry, as written (for messages) and as read.
#[derive(Debug, Clone, PartialEq)]
struct Pattern {
    text: String,
    rule: Rule,
}

#[derive(Debug, Clone, PartialEq)]
enum Rule {
    /// `shop.test`: that host and its subdomains; with `*`, a wildcard over the host.
    Host(String),
    /// `https://shop.test:8443/cart/*`: the scheme (or `*`), the host (exact, or a
    /// wildcard), the port and a wildcard over the path and query. No path: any path.
    Url { scheme: String, host: String, port: Port, path: String },
}

/// A full-URL pattern's port.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Port {
    /// None written: the scheme's default port.
    Default,
    /// `:*`
    Any,
    Exactly(u16),
}

impl Pattern {
    fn read(text: &str) -> Pattern {
        let lowered = text.trim().to_ascii_lowercase();
        let rule = match lowered.split_once("://") {
            Some((scheme, rest)) => url_rule(scheme, rest),
            None => {
                let host = lowered.trim_end_matches('/').trim_end_matches('.');
                match host.contains('*') {
                    true => Rule::Host(host.to_owned()),
                    false => Rule::Host(normal_host(host).unwrap_or_else(|| host.to_owned())),
                }
            }
        };
        Pattern { text: text.trim().to_owned(), rule }
    }

    fn matches(&self, target: &Target) -> bool {
        match &self.rule {
            Rule::Host(pattern) => {
                !pattern.is_empty()
                    && (wildcard(pattern, target.host)
                        || target.host.ends_with(&format!(".{pattern}")))
            }
            Rule::Url { scheme, host, port, path } => {
                let url = target.url;
                let port_matches = match port {
                    Port::Any => true,
                    Port::Default => url.port().is_none(),
                    Port::Exactly(n) => url.port_or_known_default() == Some(*n),
                };
                let path_and_query = unreserved_decoded(&match url.query() {
                    Some(query) => format!("{}?{query}", url.path()),
                    None => url.path().to_owned(),
                });
                (scheme == "*" || scheme == url.scheme())
                    && wildcard(host, target.host)
                    && port_matches
                    && wildcard(path, &path_and_query)
            }
        }
    }
}

/// `rest` (after `scheme://`) read into its parts: user info is dropped, the host is
/// normalised as a URL's host is, and the path as a URL's path is.
fn url_rule(scheme: &str, rest: &str) -> Rule {
    let rest = rest.split('#').next().unwrap_or_default();
    let split = rest.find(['/', '?']).unwrap_or(rest.len());
    let (authority, path) = rest.split_at(split);
    let authority = authority.rsplit_once('@').map_or(authority, |(_, host)| host);
    let (host, port) = match authority.strip_prefix('[') {
        Some(v6) => match v6.split_once(']') {
            Some((inside, after)) => (format!("[{inside}]"), after.strip_prefix(':')),
            None => (authority.to_owned(), None),
        },
        None => match authority.rsplit_once(':') {
            Some((host, port)) => (host.to_owned(), Some(port)),
            None => (authority.to_owned(), None),
        },
    };
    let port = match port {
        None | Some("") => Port::Default,
        Some("*") => Port::Any,
        // A port that is no number matches no URL.
        Some(n) => Port::Exactly(n.parse().unwrap_or(0)),
    };
    let port = match (port, scheme) {
        (Port::Exactly(80), "http") | (Port::Exactly(443), "https") => Port::Default,
        (port, _) => port,
    };
    let host = match host.contains('*') {
        true => host.trim_end_matches('.').to_owned(),
        false => normal_host(&host).unwrap_or(host),
    };
    let path = match path {
        "" => "*".to_owned(),
        // Parsed like a URL's path, so `%7E` and `~`, or `a/../b` and `b`, are one path.
        path => unreserved_decoded(
            &Url::parse(&format!("http://h{path}"))
                .map(|u| match u.query() {
                    Some(query) => format!("{}?{query}", u.path()),
                    None => u.path().to_owned(),
                })
                .unwrap_or_else(|| path.to_owned()),
        ),
    };
    Rule::Url { scheme: scheme.to_owned(), host, port, path }
}

/// `path` with escaped letters, digits and `-._~` written plainly and other escapes in
/// capitals: servers read `/%61dmin` as `/admin` (RFC 3986 6.2.2), so a pattern must too.
fn unreserved_decoded(path: &str) -> String {
    let bytes = path.as_bytes();
    let mut out = String::with_capacity(path.len());
    let mut i = 0;
    while i < bytes.len() {
        let escape = (bytes[i] == b'%')
            .then(|| path.get(i + 1..i + 3))
            .flatten()
            .and_then(|hex| u8::from_str_radix(hex, 16).ok());
        match escape {
            Some(b) if b.is_ascii_alphanumeric() || b"-._~".contains(&b) => out.push(b as char),
            Some(b) => out.push_str(&format!("%{b:02X}")),
            None => {
                let ch = path[i..].chars().next().unwrap_or_default();
                out.push(ch);
                i += ch.len_utf8();
                continue;
            }
        }
        i += 3;
    }
    out
}

/// `host` (as written in a pattern) as Chrome would resolve it, if it is one.
fn normal_host(host: &str) -> Option<String> {
    let host = host.trim_end_matches('.');
    Url::parse(&format!("http://{host}/")).and_then(|u| host_of(&u))
}

/// The host as Chrome resolves it: lowercase ASCII (IDNA), no trailing dot, IPv4 dotted,
/// and an IPv4-mapped IPv6 address as the IPv4 address it reaches.
fn host_of(url: &Url) -> Option<String> {
    Some(match url.host()? {
        Host::Domain(domain) => domain.trim_end_matches('.').to_owned(),
        Host::Ipv4(ip) => ip.to_string(),
        Host::Ipv6(ip) => match ip.to_ipv4_mapped() {
            Some(v4) => v4.to_string(),
            None => format!("[{ip}]"),
        },
    })
}

fn wildcard(pattern: &str, text: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    if parts.len() == 1 {
        return pattern == text;
    }
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if text.len() < first.len() + last.len() || !text.starts_with(first) || !text.ends_with(last) {
        return false;
    }
    let mut rest = &text[first.len()..text.len() - last.len()];
    for middle in &parts[1..parts.len() - 1] {
        match rest.find(middle) {
            Some(at) => rest = &rest[at + middle.len()..],
            None => return false,
        }
    }
    true
}

#[cfg(test)]
mod tests;
