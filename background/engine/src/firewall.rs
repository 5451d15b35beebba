//! Where the agent may go: web pages only (http and https, and `about:blank`), and within
//! them the user's allow and deny lists.
//!
//! A URL is read the way Chrome reads it (WHATWG parsing through the `url` crate): the
//! scheme and host are normalised first, so `HTTPS://`, a backslash before an `@`, a
//! percent-encoded or full-width host, a tab inside it, a trailing dot and numeric IPv4
//! forms (`2130706433`, `0x7f.1`) all name the host Chrome would visit. Lists are matched
//! against that host, never against the text as typed.

use protocol::settings::Settings;
use url::{Host, Url};

/// The allow and deny lists of the settings a run uses.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Firewall {
    allow: Vec<String>,
    deny: Vec<String>,
}

impl Firewall {
    pub fn new(settings: &Settings) -> Firewall {
        Firewall { allow: settings.allow.clone(), deny: settings.deny.clone() }
    }

    /// Whether the agent may open or act on `raw`, or why not (a sentence for the model and
    /// the person).
    pub fn check(&self, raw: &str) -> Result<(), String> {
        let Ok(url) = Url::parse(raw.trim()) else {
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
        if let Some(pattern) = self.deny.iter().find(|p| matches(p, &url, &host)) {
            return Err(format!(
                "{raw} is on your deny list ({pattern}). Edit the list in Settings to allow it."
            ));
        }
        if !self.allow.is_empty() && !self.allow.iter().any(|p| matches(p, &url, &host)) {
            return Err(format!(
                "{raw} is not on your allow list. Add it in Settings to let the agent go there."
            ));
        }
        Ok(())
    }
}

/// The host as Chrome resolves it: lowercase ASCII (IDNA), no trailing dot, IPv4 dotted.
fn host_of(url: &Url) -> Option<String> {
    Some(match url.host()? {
        Host::Domain(domain) => domain.trim_end_matches('.').to_owned(),
        Host::Ipv4(ip) => ip.to_string(),
        Host::Ipv6(ip) => format!("[{ip}]"),
    })
}

/// `pattern` with `*` wildcards against the whole (normalised) URL when it has a scheme, or
/// else against the host and its subdomains (normalised like a URL's host).
fn matches(pattern: &str, url: &Url, host: &str) -> bool {
    let pattern = pattern.trim().to_ascii_lowercase();
    if pattern.contains("://") {
        let pattern = Url::parse(&pattern).map_or(pattern, |p| p.to_string());
        return wildcard(&pattern, url.as_str());
    }
    let pattern = pattern.trim_end_matches('/').trim_end_matches('.');
    let pattern = match pattern.contains('*') {
        true => pattern.to_owned(),
        false => Url::parse(&format!("http://{pattern}/"))
            .ok()
            .and_then(|p| host_of(&p))
            .unwrap_or_else(|| pattern.to_owned()),
    };
    !pattern.is_empty() && (wildcard(&pattern, host) || host.ends_with(&format!(".{pattern}")))
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
