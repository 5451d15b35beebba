//! Fixture sites: `tests/fixtures/` served over HTTP on two sites at once.
//!
//! Site A is `http://127.0.0.1:<port>`, site B `http://localhost:<port>`. Being different
//! *sites* (not just ports), a page on A that frames B gets a real out-of-process iframe.
//! In `.html`, `.js` and `.css` files, `{{SITE_A}}` and `{{SITE_B}}` become those origins.
//! `/redirect?to=URL` answers 302 to `URL`. Each site logs the paths it was asked for, so a
//! test can tell that a request never reached it.

use std::path::{Component, Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use tiny_http::{Header, Response, Server};

pub struct FixtureSites {
    a: Origin,
    b: Origin,
}

struct Origin {
    base: String,
    server: Arc<Server>,
    worker: Option<JoinHandle<()>>,
    /// Every request's path and query, in arrival order.
    log: Arc<Mutex<Vec<String>>>,
}

impl FixtureSites {
    /// Serves `tests/fixtures/`.
    pub fn serve() -> FixtureSites {
        FixtureSites::serve_dir(crate::workspace_root().join("tests/fixtures"))
    }

    pub fn serve_dir(root: PathBuf) -> FixtureSites {
        let bind = || Arc::new(Server::http("127.0.0.1:0").expect("binding a loopback port"));
        let (server_a, server_b) = (bind(), bind());
        let port = |s: &Server| s.server_addr().to_ip().expect("an ip listener").port();
        let site_a = format!("http://127.0.0.1:{}", port(&server_a));
        let site_b = format!("http://localhost:{}", port(&server_b));
        let origins = Arc::new((site_a.clone(), site_b.clone()));
        let start = |server: Arc<Server>, base: String| {
            let (root, origins, serving) = (root.clone(), origins.clone(), server.clone());
            let log = Arc::new(Mutex::new(Vec::new()));
            let logging = log.clone();
            let worker = std::thread::spawn(move || {
                for request in serving.incoming_requests() {
                    logging.lock().expect("the log").push(request.url().to_owned());
                    let response = respond(&root, &origins, request.url());
                    let _ = request.respond(response);
                }
            });
            Origin { base, server, worker: Some(worker), log }
        };
        FixtureSites { a: start(server_a, site_a), b: start(server_b, site_b) }
    }

    /// `path` on site A, `http://127.0.0.1:<port>/path`.
    pub fn url(&self, path: &str) -> String {
        format!("{}/{}", self.a.base, path.trim_start_matches('/'))
    }

    /// The paths (with queries) site A was asked for so far.
    pub fn requests(&self) -> Vec<String> {
        self.a.log.lock().expect("the log").clone()
    }

    /// The paths (with queries) site B was asked for so far.
    pub fn other_requests(&self) -> Vec<String> {
        self.b.log.lock().expect("the log").clone()
    }

    /// `path` on site B, `http://localhost:<port>/path`: cross-site to A.
    pub fn other_url(&self, path: &str) -> String {
        format!("{}/{}", self.b.base, path.trim_start_matches('/'))
    }
}

impl Drop for FixtureSites {
    fn drop(&mut self) {
        for origin in [&mut self.a, &mut self.b] {
            origin.server.unblock();
            if let Some(worker) = origin.worker.take() {
                let _ = worker.join();
            }
        }
    }
}

fn respond(
    root: &Path,
    origins: &(String, String),
    url: &str,
) -> Response<std::io::Cursor<Vec<u8>>> {
    let path = url.split(['?', '#']).next().unwrap_or("/").trim_start_matches('/');
    if path == "redirect" {
        let to = url.split_once("to=").map_or("/", |(_, to)| to);
        let to = percent_encoding::percent_decode_str(to).decode_utf8_lossy().into_owned();
        let header = Header::from_bytes("Location", to).expect("a valid header");
        return Response::from_string("").with_status_code(302).with_header(header);
    }
    if path == "generated.html" {
        let n = url.split_once("n=").and_then(|(_, n)| n.parse().ok()).unwrap_or(1000);
        let header = Header::from_bytes("Content-Type", "text/html; charset=utf-8").expect("valid");
        return Response::from_data(generated_page(n).into_bytes()).with_header(header);
    }
    let path = if path.is_empty() || path.ends_with('/') {
        format!("{path}index.html")
    } else {
        path.to_owned()
    };
    let relative = Path::new(&path);
    let safe = relative.components().all(|c| matches!(c, Component::Normal(_)));
    let Some(bytes) = safe.then(|| std::fs::read(root.join(relative)).ok()).flatten() else {
        return Response::from_string(format!("no fixture at /{path}")).with_status_code(404);
    };
    let extension = relative.extension().and_then(|e| e.to_str()).unwrap_or("");
    let content_type = match extension {
        "html" => "text/html; charset=utf-8",
        "js" => "text/javascript; charset=utf-8",
        "css" => "text/css; charset=utf-8",
        "json" => "application/json",
        "png" => "image/png",
        "svg" => "image/svg+xml",
        _ => "application/octet-stream",
    };
    let bytes = if matches!(extension, "html" | "js" | "css") {
        String::from_utf8_lossy(&bytes)
            .replace("{{SITE_A}}", &origins.0)
            .replace("{{SITE_B}}", &origins.1)
            .into_bytes()
    } else {
        bytes
    };
    let header = Header::from_bytes("Content-Type", content_type).expect("a valid header");
    Response::from_data(bytes).with_header(header)
}

/// `/generated.html?n=N`: a page of about `n` elements, a fifth of them interactive, laid
/// out in rows like a long listing, for benchmarks at sizes no fixture file has.
pub fn generated_page(n: usize) -> String {
    let mut html = String::with_capacity(n * 60);
    html.push_str("<!doctype html><html><head><meta charset=utf-8><title>Generated ");
    html.push_str(&n.to_string());
    html.push_str(" elements</title><style>.row{display:flex;gap:8px;padding:2px}</style>");
    html.push_str("</head><body><h1>Generated listing</h1><main>");
    // Each row is ten elements: div, span, a, button, p, b, i, label, input, em.
    for row in 0..n.div_ceil(10) {
        html.push_str(&format!(
            "<div class=row><span>Item {row}</span><a href=\"/item/{row}\">Open item {row}</a>\
             <button type=button>Add {row}</button><p>Some <b>bold</b> and <i>italic</i> text\
             </p><label>Qty <input name=qty{row} value=1 size=3></label><em>note</em></div>"
        ));
    }
    html.push_str("</main></body></html>");
    html
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::http;

    #[test]
    fn serves_fixtures_on_two_sites_with_origins_filled_in() {
        let sites = FixtureSites::serve();
        let page = http::get(&sites.url("/shop/index.html"));
        assert_eq!(page.status, 200);
        assert_eq!(page.header("content-type"), Some("text/html; charset=utf-8"));
        assert!(!page.body.contains("{{SITE_"), "templating left a placeholder");
        assert_eq!(http::get(&sites.other_url("/shop/index.html")).status, 200);
        assert!(sites.other_url("/").starts_with("http://localhost:"));
    }

    #[test]
    fn generates_pages_of_the_requested_size() {
        let sites = FixtureSites::serve();
        let page = http::get(&sites.url("/generated.html?n=1000"));
        assert_eq!(page.status, 200);
        assert_eq!(page.body.matches("<div class=row>").count(), 100);
    }

    #[test]
    fn refuses_paths_outside_the_fixture_folder() {
        let sites = FixtureSites::serve();
        assert_eq!(http::get(&sites.url("/../Cargo.toml")).status, 404);
        assert_eq!(http::get(&sites.url("/missing.html")).status, 404);
    }
}
