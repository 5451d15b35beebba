//! Hostile URLs against allow and deny lists: each names the host Chrome would visit.

use super::*;

fn lists(allow: &[&str], deny: &[&str]) -> Firewall {
    let owned = |list: &[&str]| list.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
    Firewall::from_lists(&owned(allow), &owned(deny))
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

/// Ways to write a URL of the server at 127.0.0.9:8080 and of evil.test:8080.
const LOOPBACK_9: &[&str] = &[
    "http://127.0.0.9:8080/",
    "HTTP://127.0.0.9:8080/a/b?x=1#f",
    "http://user@127.0.0.9:8080/",
    "http://user:pw@127.0.0.9:8080/",
    "http://127.0.0.9.:8080/",
    "http://[::ffff:127.0.0.9]:8080/",
    "http://[::FFFF:7f00:9]:8080/",
    "http://2130706441:8080/",
    "http://0x7f.0.0.9:8080/",
    "http://0177.0.0.011:8080/",
];

const EVIL_8080: &[&str] = &[
    "http://evil.test:8080/",
    "http://EVIL.test.:8080/",
    "http://user@evil.test:8080/x",
    "http://good.test@evil.test:8080/",
    "http://ｅｖｉｌ.test:8080/",
    "http://ev%69l.test:8080/",
];

/// Every form of the host is refused by a deny pattern and admitted by an allow pattern,
/// written as a host or as a full URL (with user info, trailing dot, capitals or another
/// form of the address in the pattern too); other hosts are not.
#[test]
fn hosts_are_compared_as_parsed_in_both_kinds_of_pattern() {
    let table: &[(&[&str], &[&str], &[&str])] = &[
        (
            LOOPBACK_9,
            &[
                "127.0.0.9",
                "http://127.0.0.9:8080/*",
                "http://127.0.0.9:8080",
                "*://127.0.0.9:*/*",
                "http://[::ffff:127.0.0.9]:8080/*",
                "http://admin@127.0.0.9.:8080/*",
                "http://2130706441:*",
            ],
            &[
                "http://127.0.0.10:8080/",
                "http://[::ffff:127.0.0.10]:8080/",
                "http://127.0.0.1:8080/",
            ],
        ),
        (
            EVIL_8080,
            &[
                "evil.test",
                "EVIL.TEST.",
                "http://evil.test:8080/*",
                "HTTP://Evil.Test.:8080/*",
                "*://evil.test:*",
                "http://ｅｖｉｌ.test:8080/*",
            ],
            &[
                "http://evil.test.good.test:8080/",
                "http://good.test:8080/?evil.test:8080",
                "http://notevil.test:8080/",
            ],
        ),
    ];
    for (forms, patterns, others) in table {
        for pattern in *patterns {
            let deny = lists(&[], &[pattern]);
            let allow = lists(&[pattern], &[]);
            for url in *forms {
                let refused = deny.check(url);
                assert!(
                    refused.as_ref().is_err_and(|why| why.contains(pattern)),
                    "deny {pattern:?} let {url:?} through: {refused:?}"
                );
                assert_eq!(allow.check(url), Ok(()), "allow {pattern:?} refused {url:?}");
            }
            for url in *others {
                assert_eq!(deny.check(url), Ok(()), "deny {pattern:?} refused {url:?}");
                assert!(allow.check(url).is_err(), "allow {pattern:?} admitted {url:?}");
            }
        }
    }
}

#[test]
fn a_full_url_pattern_compares_its_port_and_path_as_parsed() {
    let deny = lists(&[], &["https://shop.test/admin/*"]);
    for url in [
        "https://shop.test/admin/x",
        "https://shop.test:443/admin/x",
        "https://u:p@SHOP.test./admin/users?id=1",
        "https://shop.test/public/../admin/x",
        "https://shop.test/%61dmin/x",
    ] {
        assert!(deny.check(url).is_err(), "{url} passed");
    }
    for url in ["https://shop.test/", "https://shop.test:8443/admin/x", "http://shop.test/admin/x"]
    {
        assert_eq!(deny.check(url), Ok(()), "{url}");
    }
}
