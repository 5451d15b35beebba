//! The two percent-encodings in use, each for its place:
//!
//! - [`form_encode`]/[`form_decode`]: `application/x-www-form-urlencoded`, space as `+`.
//!   That is what an HTML form sends, so it is what search engines' query strings and
//!   LanguageTool's bodies read, and what the sync server reads its query strings as.
//! - [`component_encode`]: RFC 3986 unreserved characters kept, space as `%20`, for a value
//!   in a URL that anything (`URLSearchParams`, a router) may read.
//!
//! And [`WebUrl`]: a URL read as the browser reads it; [`origin`]: where a request to a URL
//! really goes, for binding a secret to its server;
//! [`params`]: a page's own address (`?a=1&b=2` or `#a=1`) read as a browser would.

use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, percent_decode_str, utf8_percent_encode};

/// WHATWG's form set: everything but letters, digits and `*-._` is escaped.
const FORM: &AsciiSet = &NON_ALPHANUMERIC.remove(b'*').remove(b'-').remove(b'.').remove(b'_');

/// RFC 3986 unreserved: letters, digits and `-._~` are kept.
const COMPONENT: &AsciiSet = &NON_ALPHANUMERIC.remove(b'-').remove(b'.').remove(b'_').remove(b'~');

/// `value` as a form field's value: UTF-8, percent-encoded, spaces as `+`.
pub fn form_encode(value: &str) -> String {
    // Spaces are encoded as %20 first, then that one sequence becomes `+`: a literal `+`
    // was already escaped as %2B, so no other `%20` can appear.
    utf8_percent_encode(value, FORM).to_string().replace("%20", "+")
}

/// A form-encoded value read back: `+` is a space. `None` if the bytes are not UTF-8 or a
/// `%` is not followed by two hex digits.
pub fn form_decode(text: &str) -> Option<String> {
    let well_formed = text
        .split('%')
        .skip(1)
        .all(|rest| rest.as_bytes().get(..2).is_some_and(|h| h.iter().all(u8::is_ascii_hexdigit)));
    if !well_formed {
        return None;
    }
    let spaced = text.replace('+', " ");
    percent_decode_str(&spaced).decode_utf8().ok().map(|text| text.into_owned())
}

/// `value` as a URL component: UTF-8, percent-encoded, spaces as `%20`.
pub fn component_encode(value: &str) -> String {
    utf8_percent_encode(value, COMPONENT).to_string()
}

/// The `key=value` pairs of a query or fragment (`?`/`#` first or not), values decoded as a
/// browser's `URLSearchParams` does: `+` is a space, a `%` not followed by two hex digits
/// stays as it is, bytes that are not UTF-8 become U+FFFD. Never fails: it reads a page's
/// own address, which a person may have typed.
pub fn params(text: &str) -> impl Iterator<Item = (&str, String)> {
    text.trim_start_matches(['?', '#']).split('&').filter(|p| !p.is_empty()).map(|pair| {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        (key, percent_decode_str(&value.replace('+', " ")).decode_utf8_lossy().into_owned())
    })
}

/// The origin a request to `endpoint` goes to, as a browser reads the URL (WHATWG: `\`
/// as `/`, user info dropped, host lowercased and IDNA-mapped, default port dropped), with
/// a host's trailing dot removed. A string that is no URL is compared as itself, trimmed
/// and lowercased, so it only ever matches the same string.
pub fn origin(endpoint: &str) -> String {
    let endpoint = endpoint.trim();
    let Some(url) = WebUrl::parse(endpoint) else { return endpoint.to_ascii_lowercase() };
    let host = url.host_str().unwrap_or_default().trim_end_matches('.');
    match url.port() {
        Some(port) => format!("{}://{host}:{port}", url.scheme()),
        None => format!("{}://{host}", url.scheme()),
    }
}

/// A URL read as the browser reads it (the WHATWG URL standard). In the extension the
/// browser's own `URL` parses it, so the agent sees exactly the host Chrome would visit and
/// no bundle carries a second parser with its Unicode tables; natively (tests, the sync
/// server) the `url` crate, which implements the same standard, does.
#[derive(Debug, Clone, PartialEq)]
pub struct WebUrl {
    scheme: String,
    /// As serialized: a domain in lowercase ASCII (IDNA-mapped), IPv4 dotted, IPv6 in `[]`.
    host: Option<String>,
    port: Option<u16>,
    path: String,
    query: Option<String>,
    origin: String,
}

/// A URL's host, by kind.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Host<'a> {
    Domain(&'a str),
    Ipv4(std::net::Ipv4Addr),
    Ipv6(std::net::Ipv6Addr),
}

impl WebUrl {
    /// `text` as an absolute URL, or `None` if it is none.
    #[cfg(not(target_arch = "wasm32"))]
    pub fn parse(text: &str) -> Option<WebUrl> {
        let url = url::Url::parse(text).ok()?;
        Some(WebUrl {
            scheme: url.scheme().to_owned(),
            host: url.host_str().filter(|h| !h.is_empty()).map(str::to_owned),
            port: url.port(),
            path: url.path().to_owned(),
            query: url.query().map(str::to_owned),
            origin: url.origin().ascii_serialization(),
        })
    }

    /// `text` as an absolute URL, or `None` if it is none.
    #[cfg(target_arch = "wasm32")]
    pub fn parse(text: &str) -> Option<WebUrl> {
        let url = web_sys::Url::new(text).ok()?;
        let search = url.search();
        let port = url.port();
        let host = url.hostname();
        Some(WebUrl {
            scheme: url.protocol().trim_end_matches(':').to_owned(),
            host: (!host.is_empty()).then_some(host),
            port: port.parse().ok(),
            path: url.pathname(),
            // `search` is "" both for no query and for a bare `?`; the `url` crate tells
            // them apart, and nothing here needs to.
            query: search.strip_prefix('?').map(str::to_owned),
            origin: url.origin(),
        })
    }

    pub fn scheme(&self) -> &str {
        &self.scheme
    }

    pub fn host_str(&self) -> Option<&str> {
        self.host.as_deref()
    }

    pub fn host(&self) -> Option<Host<'_>> {
        let host = self.host.as_deref()?;
        Some(match host.strip_prefix('[').and_then(|h| h.strip_suffix(']')) {
            Some(v6) => Host::Ipv6(v6.parse().ok()?),
            // The parser writes an IPv4 host in dotted decimal; a domain never is all digits.
            None => match host.parse() {
                Ok(v4) => Host::Ipv4(v4),
                Err(_) => Host::Domain(host),
            },
        })
    }

    /// The port written in the URL, `None` when it is the scheme's default.
    pub fn port(&self) -> Option<u16> {
        self.port
    }

    pub fn port_or_known_default(&self) -> Option<u16> {
        self.port.or(match self.scheme.as_str() {
            "http" | "ws" => Some(80),
            "https" | "wss" => Some(443),
            "ftp" => Some(21),
            _ => None,
        })
    }

    pub fn path(&self) -> &str {
        &self.path
    }

    pub fn query(&self) -> Option<&str> {
        self.query.as_deref()
    }

    /// `scheme://host[:port]`, or `null` for a URL with no such origin.
    pub fn origin(&self) -> &str {
        &self.origin
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pages_own_address_is_read_leniently() {
        let read: Vec<_> = params("?agentRunId=a%26b%20c&qa=true&x=50%+1&&flag").collect();
        assert_eq!(
            read,
            [
                ("agentRunId", "a&b c".to_owned()),
                ("qa", "true".to_owned()),
                ("x", "50% 1".to_owned()),
                ("flag", String::new()),
            ]
        );
        assert_eq!(params("#run=r%C3%A9&step=2").next(), Some(("run", "ré".to_owned())));
        assert_eq!(component_encode("a&b c/é"), "a%26b%20c%2F%C3%A9");
    }

    #[test]
    fn the_origin_is_where_the_browser_sends_the_request() {
        for (url, expected) in [
            ("HTTPS://API.Example./v1?x#y", "https://api.example"),
            ("https://api.example:443/v1", "https://api.example"),
            ("http://localhost:8080", "http://localhost:8080"),
            ("https://api.example@collector.evil/v1", "https://collector.evil"),
            ("https://collector.evil\\@api.example/", "https://collector.evil"),
            ("not a url", "not a url"),
        ] {
            assert_eq!(origin(url), expected, "{url}");
        }
    }

    #[test]
    fn form_encoding_is_what_an_html_form_sends() {
        // What a search box sends for this query: spaces as `+`, a literal `+` escaped.
        assert_eq!(form_encode("rust & wasm? 1+1"), "rust+%26+wasm%3F+1%2B1");
        assert_eq!(form_encode("naïve*-._~"), "na%C3%AFve*-._%7E");
    }

    #[test]
    fn form_decoding_reverses_it_and_refuses_broken_escapes() {
        for text in ["a b&c=d+e", "Café 😀", "x*-._~/?#%", "100% sure"] {
            assert_eq!(form_decode(&form_encode(text)).as_deref(), Some(text));
        }
        assert_eq!(form_decode("a%20b+c").as_deref(), Some("a b c"));
        assert_eq!(form_decode("%zz"), None);
        assert_eq!(form_decode("50%"), None);
        assert_eq!(form_decode("%FF"), None, "not UTF-8");
    }

    #[test]
    fn components_keep_unreserved_characters_and_escape_spaces() {
        assert_eq!(component_encode("run 1/é~"), "run%201%2F%C3%A9~");
        assert_eq!(component_encode("a+b"), "a%2Bb");
    }
}
