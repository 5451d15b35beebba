//! A tiny blocking HTTP/1.1 client for tests that talk to the harness's own servers.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

pub struct Response {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

/// The value of header `name` (case-insensitive) in a list of (name, value) pairs.
pub fn find_header<'a>(headers: &'a [(String, String)], name: &str) -> Option<&'a str> {
    headers.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
}

impl Response {
    pub fn header(&self, name: &str) -> Option<&str> {
        find_header(&self.headers, name)
    }

    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("{e} in {:?}", self.body))
    }
}

/// Sends one request to `http://host:port/path` and reads the whole answer.
pub fn request(method: &str, url: &str, headers: &[(&str, &str)], body: &str) -> Response {
    let rest = url.strip_prefix("http://").expect("an http:// url");
    let (host, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    let mut stream = TcpStream::connect(host).unwrap_or_else(|e| panic!("{url}: {e}"));
    stream.set_read_timeout(Some(Duration::from_secs(30))).ok();
    let mut head = format!(
        "{method} {} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\nContent-Length: {}\r\n",
        if path.is_empty() { "/" } else { path },
        body.len()
    );
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes()).and_then(|_| stream.write_all(body.as_bytes())).unwrap();
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).unwrap_or_else(|e| panic!("reading {url}: {e}"));
    let raw = String::from_utf8_lossy(&raw);
    let (head, body) = raw.split_once("\r\n\r\n").unwrap_or((&raw, ""));
    let mut lines = head.lines();
    let status = lines
        .next()
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_owned(), v.trim().to_owned()))
        .collect();
    Response { status, headers, body: body.to_owned() }
}

pub fn post_json(url: &str, headers: &[(&str, &str)], body: &serde_json::Value) -> Response {
    let mut all = vec![("Content-Type", "application/json")];
    all.extend_from_slice(headers);
    request("POST", url, &all, &body.to_string())
}

pub fn get(url: &str) -> Response {
    request("GET", url, &[], "")
}
