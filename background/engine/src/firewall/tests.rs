//! Hostile URLs against allow and deny lists: each names the host Chrome would visit.

use super::*;

fn lists(allow: &[&str], deny: &[&str]) -> Firewall {
    let owned = |list: &[&str]| list.iter().map(|s| (*s).to_owned()).collect();
    Firewall { allow: owned(allow), deny: owned(deny) }
}

/// URLs that reach evil.test (or the loopback host) however they are spelled.
const EVIL: &[&str] = &[
    "https://evil.test/",
    "HTTPS://EVIL.TEST/",
    "https://evil.test\\@good.test/",
    "https://evil.test\\.good.test/",
    "https://evil.test./",
    "https://ev%69l.test/",
    "https://ｅｖｉｌ.test/",
    "https://ev\til.test/",
    "https://ev\nil.test/",
    "https://user:pass@evil.test:8443/path?q=1#f",
    "https://shop.evil.test/",
    " https://evil.test/ ",
];

const LOOPBACK: &[&str] = &[
    "http://127.0.0.1/",
    "http://2130706433/",
    "http://0x7f.1/",
    "http://0177.0.0.1/",
    "http://127.1/",
    "http://localhost/",
    "http://LOCALHOST./",
];

#[test]
fn the_deny_list_holds_however_the_host_is_written() {
    let firewall = lists(&[], &["evil.test", "127.0.0.1", "localhost"]);
    for url in EVIL.iter().chain(LOOPBACK) {
        let refused = firewall.check(url);
        assert!(
            refused.as_ref().is_err_and(|why| why.contains("deny list")),
            "{url:?}: {refused:?}"
        );
    }
    for url in ["https://good.test/", "https://notevil.test/", "https://evil.test.good.test/"] {
        assert_eq!(firewall.check(url), Ok(()), "{url}");
    }
}

#[test]
fn the_allow_list_admits_only_its_hosts() {
    let firewall = lists(&["good.test"], &[]);
    for url in EVIL.iter().chain(LOOPBACK) {
        assert!(firewall.check(url).is_err(), "{url:?} passed an allow list of good.test");
    }
    for url in [
        "https://good.test/a",
        "HTTPS://GOOD.TEST./",
        "https://shop.good.test/",
        "https://go%6fd.test/",
    ] {
        assert_eq!(firewall.check(url), Ok(()), "{url}");
    }
    // Wildcards and full-URL patterns are matched against the normalised URL too.
    let firewall = lists(&["https://good.test/shop/*"], &[]);
    assert_eq!(firewall.check("HTTPS://good.test/shop/a"), Ok(()));
    assert!(firewall.check("https://good.test/admin").is_err());
    assert!(firewall.check("https://evil.test/?https://good.test/shop/").is_err());
    let firewall = lists(&["http://127.0.0.1:*/shop/*"], &[]);
    assert_eq!(firewall.check("http://127.0.0.1:8080/shop/a.html"), Ok(()));
    let refused = firewall.check("http://localhost:8080/shop/a.html").unwrap_err();
    assert!(refused.contains("allow list"), "{refused}");
}

#[test]
fn only_web_pages_may_be_visited() {
    let open = Firewall::default();
    assert_eq!(open.check("about:blank"), Ok(()));
    for url in [
        "file:///etc/passwd",
        "FILE:///C:/Users",
        "chrome-extension://abcdefghijklmnopabcdefghijklmnop/options.html",
        "chrome://settings",
        "javascript:alert(1)",
        "data:text/html,<script>alert(1)</script>",
        "view-source:https://good.test/",
        "ftp://good.test/",
        "blob:https://good.test/1234",
        "about:settings",
    ] {
        let refused = open.check(url);
        assert!(refused.is_err(), "{url} was allowed");
    }
    assert!(open.check("good.test").unwrap_err().contains("not a web address"));
}
