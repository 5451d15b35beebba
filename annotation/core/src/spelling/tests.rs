use super::*;

const AFF: &str = "SET UTF-8\nTRY esianrtolcdugmfphbyvkw'\nICONV 1\nICONV ’ '\n";
const DIC: &str = "16\nand\nI\ncan\nsee\nthe\nsearch\nbutton\nclick\ndon't\nI'm\non\npage\nhello\ndress\naddress\ncadres\n";

fn speller() -> Speller {
    Speller::new(AFF, DIC).unwrap()
}

fn flagged(s: &Speller, text: &str) -> Vec<String> {
    s.check(Thought::Two, text).iter().map(|i| text[i.start..i.end].to_string()).collect()
}

#[test]
fn flags_unknown_words_with_suggestions() {
    let s = speller();
    let text = "I can see the serch button";
    let issues = s.check(Thought::Two, text);
    assert_eq!(issues.len(), 1);
    let i = &issues[0];
    assert_eq!(&text[i.start..i.end], "serch");
    assert_eq!(i.kind, IssueKind::Spelling);
    assert_eq!(i.thought, Thought::Two);
    assert_eq!(i.message, "“serch” is not in the dictionary");
    assert_eq!(i.replacements.first().map(String::as_str), Some("search"));
    assert!(i.replacements.len() <= MAX_SUGGESTIONS);
    // Applying the first replacement fixes the text.
    assert_eq!(lint::apply(text, i, &i.replacements[0]), "I can see the search button");
}

#[test]
fn distance_counts_a_swap_or_a_missing_letter_as_one_edit() {
    assert_eq!(distance("adress", "address"), 1, "a letter missing");
    assert_eq!(distance("adress", "dress"), 1, "a letter too many");
    assert_eq!(distance("teh", "the"), 1, "two letters swapped");
    assert_eq!(distance("pirce", "price"), 1);
    assert_eq!(distance("serch", "perch"), 1, "a letter wrong");
    assert_eq!(distance("clik", "cleek"), 2);
    assert_eq!(distance("kitten", "sitting"), 3);
    // A swap, then a letter between the swapped ones: the restricted variant says 3.
    assert_eq!(distance("ca", "abc"), 2);
    assert_eq!((distance("", "abc"), distance("abc", ""), distance("", "")), (3, 3, 0));
    assert_eq!(distance("same", "same"), 0);
    assert_eq!(distance("café", "cafe"), 1, "characters, not bytes");
    assert_eq!(distance("😀a", "a😀"), 1);
    for (a, b) in [("adress", "cadres"), ("ca", "abc"), ("heder", "he der")] {
        assert_eq!(distance(a, b), distance(b, a), "{a} / {b}");
    }
}

#[test]
fn suggestions_rank_by_edits_then_by_how_common_the_word_is() {
    let owned = |words: &[&str]| words.iter().map(|w| w.to_string()).collect::<Vec<_>>();
    // As spellbook orders them for "adress": all but "cadres" one edit away.
    let found = owned(&["dress", "address", "a dress", "cadres"]);
    assert_eq!(rank("adress", found), ["address", "dress", "a dress", "cadres"]);
    let found = owned(&["Dress", "A dress", "Address", "Cadres"]);
    assert_eq!(rank("Adress", found), ["Address", "Dress", "A dress", "Cadres"], "any case");
    // Fewer edits first, whatever the order found: "cleek" and "lick" are two away.
    let found = owned(&["cleek", "clink", "click", "lick"]);
    assert_eq!(rank("clik", found), ["click", "clink", "cleek", "lick"], "unlisted keep order");
    assert!(rank("x", Vec::new()).is_empty());
    assert!(commonness("the") < commonness("address"));
    assert!(commonness("address") < usize::MAX);
    assert_eq!(commonness("dress"), usize::MAX);
}

#[test]
fn the_common_words_are_each_listed_once() {
    let words: Vec<&str> = COMMON
        .lines()
        .filter(|line| !line.starts_with('#'))
        .flat_map(str::split_whitespace)
        .collect();
    let distinct: BTreeSet<String> = words.iter().map(|w| w.to_lowercase()).collect();
    assert_eq!(distinct.len(), words.len(), "a word listed twice ranks by its first place only");
    assert!(words.len() > 300);
}

#[test]
fn the_likeliest_fix_comes_first() {
    let s = speller();
    assert_eq!(s.suggest("adress").first().map(String::as_str), Some("address"));
    assert_eq!(s.suggest("Adress").first().map(String::as_str), Some("Address"));
    assert_eq!(s.check(Thought::Two, "I can see the adress")[0].replacements[0], "address");
}

#[test]
fn apostrophes_and_capitals() {
    let s = speller();
    assert!(flagged(&s, "I'm on the page, I don't see... I’m on. Don’t! Hello").is_empty());
    assert_eq!(flagged(&s, "I can see the 'Serch' button"), ["Serch"]);
}

#[test]
fn skips_what_is_not_prose() {
    let s = speller();
    let text = "I can see https://exmple.com/serch and foo@bar.baz and exmple.org \
                {\"serch\": \"x\"} \\{qqq\\} [\"zzz\"] `fooBar` <serch target> \
                ID URL X ab12 snake_case camelCase iPhone a/b";
    assert_eq!(flagged(&s, text), Vec::<String>::new());
    assert_eq!(flagged(&s, "<serch target> serch"), ["serch"]);
    // A word that merely starts near a skipped span is still checked.
    assert_eq!(flagged(&s, "{a} zzz"), ["zzz"]);
    // An unclosed brace hides the rest: better silent than noisy over pasted code.
    assert!(flagged(&s, "see { zzz").is_empty());
}

#[test]
fn user_words_count_as_spelled() {
    let mut s = speller();
    assert!(!s.check_word("kettle"));
    s.add_words(&["kettle", "  ", "a/b", "Zalando"]);
    assert!(s.check_word("kettle"));
    assert!(s.check_word("Kettle"));
    assert!(s.check_word("a/b"));
    assert!(s.check_word("Zalando"));
    assert!(flagged(&s, "the kettle on Zalando").is_empty());
    assert!(s.check_word(""));
    assert!(format!("{s:?}").contains("own_words: 3"));
}

#[test]
fn repeated_typos_are_each_flagged() {
    let s = speller();
    let text = "serch serch";
    let issues = s.check(Thought::One, text);
    assert_eq!(issues.len(), 2);
    assert_eq!((issues[1].start, issues[1].end), (6, 11));
    assert_eq!(issues[0].replacements, issues[1].replacements);
    let quick = s.check_only(Thought::One, text);
    assert_eq!(quick.len(), 2);
    assert!(quick.iter().all(|i| i.replacements.is_empty()));
    assert_eq!(quick[1].start, issues[1].start);
}

#[test]
fn odd_input_never_panics() {
    let s = speller();
    let long = "serch ".repeat(2000);
    for t in ["", " ", "'", "’", "😀", "é", "{", "}", "`", "<", "{{}", "a\u{0301}b", &long] {
        for i in s.check(Thought::One, t) {
            assert!(t.is_char_boundary(i.start) && t.is_char_boundary(i.end));
        }
    }
    assert!(Speller::new("FLAG bogus\n", "1\nx/ab\n").is_err());
}

/// Debian's dictionary, as the page loads it; skipped where it is not installed.
#[test]
fn real_en_us_dictionary() {
    let (Ok(aff), Ok(dic)) = (
        std::fs::read_to_string("/usr/share/hunspell/en_US.aff"),
        std::fs::read_to_string("/usr/share/hunspell/en_US.dic"),
    ) else {
        eprintln!("no /usr/share/hunspell/en_US.{{aff,dic}}: skipped");
        return;
    };
    let started = std::time::Instant::now();
    let s = Speller::new(&aff, &dic).unwrap();
    eprintln!("Speller::new(en_US) took {:?}", started.elapsed());
    let text = "I can see the serch button";
    let started = std::time::Instant::now();
    let issues = s.check(Thought::Two, text);
    eprintln!("check with one suggestion took {:?}", started.elapsed());
    assert_eq!(issues.len(), 1);
    assert_eq!(&text[issues[0].start..issues[0].end], "serch");
    assert_eq!(issues[0].replacements[0], "search", "{:?}", issues[0].replacements);
    // The likeliest fix first: one edit away, and the commoner word on a tie.
    for (typo, fix) in [
        ("adress", "address"),
        ("clik", "click"),
        ("buton", "button"),
        ("pirce", "price"),
        ("tipe", "type"),
        ("teh", "the"),
        ("recieve", "receive"),
        ("becuase", "because"),
    ] {
        let found = s.suggest(typo);
        assert_eq!(found.first().map(String::as_str), Some(fix), "{typo}: {found:?}");
    }
    let fine = "I’m on the results page and I don't see the 'Add to cart' button; the drop-down \
                menu shows ten items, so I should click the user's avatar to open their profile.";
    assert_eq!(flagged(&s, fine), Vec::<String>::new());
}
