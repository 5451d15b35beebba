//! A small, safe Markdown reader for agent answers and plans. It produces a tree of
//! [`Block`]s and [`Inline`]s that the `markdown` component turns into Yew nodes: text is
//! only ever text, never HTML, and links are kept only for `http(s):` and `mailto:`.
//!
//! Supported: paragraphs (single newlines are kept as line breaks), `#` headings, `**bold**`,
//! `*italic*` / `_italic_`, `` `code` ``, fenced code blocks, `-`/`*`/`+` and `1.` lists,
//! `>` quotes, `---` rules, `[text](url)` links, bare `https://` links and `\` escapes.

#[derive(Debug, Clone, PartialEq)]
pub enum Block {
    Heading(u8, Vec<Inline>),
    Paragraph(Vec<Inline>),
    Code { lang: String, text: String },
    List { ordered: bool, start: u32, items: Vec<Vec<Inline>> },
    Quote(Vec<Inline>),
    Rule,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Inline {
    Text(String),
    Strong(Vec<Inline>),
    Em(Vec<Inline>),
    Code(String),
    Link { href: String, children: Vec<Inline> },
    Break,
}

/// Whether `href` may become a link: absolute `http(s)` or `mailto` only.
pub fn safe_href(href: &str) -> bool {
    let lower = href.trim().to_ascii_lowercase();
    (lower.starts_with("https://") || lower.starts_with("http://") || lower.starts_with("mailto:"))
        && !href.contains(char::is_whitespace)
        && !href.contains(['"', '<', '>'])
}

enum Item {
    Bullet,
    Number(u32),
}

fn list_item(line: &str) -> Option<(Item, &str)> {
    let trimmed = line.trim_start();
    if let Some(rest) = trimmed
        .strip_prefix("- ")
        .or_else(|| trimmed.strip_prefix("* "))
        .or_else(|| trimmed.strip_prefix("+ "))
    {
        return Some((Item::Bullet, rest.trim()));
    }
    let digits = trimmed.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 || digits > 9 {
        return None;
    }
    let rest = &trimmed[digits..];
    let rest = rest.strip_prefix(". ").or_else(|| rest.strip_prefix(") "))?;
    Some((Item::Number(trimmed[..digits].parse().ok()?), rest.trim()))
}

fn heading(line: &str) -> Option<(u8, &str)> {
    let trimmed = line.trim_start();
    let level = trimmed.bytes().take_while(|b| *b == b'#').count();
    if !(1..=6).contains(&level) {
        return None;
    }
    let rest = &trimmed[level..];
    if rest.is_empty() {
        return Some((level as u8, ""));
    }
    rest.strip_prefix(' ').map(|text| (level as u8, text.trim().trim_end_matches('#').trim_end()))
}

fn is_rule(line: &str) -> bool {
    let compact: String = line.chars().filter(|c| !c.is_whitespace()).collect();
    compact.len() >= 3
        && ["-", "*", "_"].iter().any(|c| compact.chars().all(|x| x.to_string() == *c))
}

fn fence(line: &str) -> Option<&str> {
    let trimmed = line.trim_start();
    trimmed.strip_prefix("```").or_else(|| trimmed.strip_prefix("~~~"))
}

fn quote(line: &str) -> Option<&str> {
    let trimmed = line.trim_start();
    trimmed.strip_prefix("> ").or_else(|| trimmed.strip_prefix('>'))
}

/// Starts a block of its own, so it ends a paragraph.
fn starts_block(line: &str) -> bool {
    heading(line).is_some()
        || fence(line).is_some()
        || list_item(line).is_some()
        || quote(line).is_some()
        || is_rule(line)
}

/// Reads `source` into blocks.
pub fn parse(source: &str) -> Vec<Block> {
    let lines: Vec<&str> = source.lines().collect();
    let mut blocks = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        if line.trim().is_empty() {
            i += 1;
        } else if let Some(lang) = fence(line) {
            let marker = &line.trim_start()[..3];
            let mut text = Vec::new();
            i += 1;
            while i < lines.len() && !lines[i].trim_start().starts_with(marker) {
                text.push(lines[i]);
                i += 1;
            }
            i += 1; // the closing fence, if any
            blocks.push(Block::Code { lang: lang.trim().to_owned(), text: text.join("\n") });
        } else if let Some((level, text)) = heading(line) {
            blocks.push(Block::Heading(level, inlines(text)));
            i += 1;
        } else if is_rule(line) {
            blocks.push(Block::Rule);
            i += 1;
        } else if quote(line).is_some() {
            let mut text = Vec::new();
            while i < lines.len()
                && let Some(rest) = quote(lines[i])
            {
                text.push(rest);
                i += 1;
            }
            blocks.push(Block::Quote(inlines(&text.join("\n"))));
        } else if let Some((first, _)) = list_item(line) {
            let ordered = matches!(first, Item::Number(_));
            let start = match first {
                Item::Number(n) => n,
                Item::Bullet => 1,
            };
            let mut items: Vec<String> = Vec::new();
            while i < lines.len() {
                let line = lines[i];
                if line.trim().is_empty() {
                    // A blank line ends the list unless another item of it follows.
                    let next = lines.get(i + 1).and_then(|l| list_item(l));
                    if next.is_some_and(|(item, _)| matches!(item, Item::Number(_)) == ordered) {
                        i += 1;
                        continue;
                    }
                    break;
                }
                match list_item(line) {
                    Some((item, text)) if matches!(item, Item::Number(_)) == ordered => {
                        items.push(text.to_owned());
                    }
                    // A nested list of the other kind reads as items of this one.
                    Some((_, text)) if line.starts_with([' ', '\t']) => items.push(text.to_owned()),
                    Some(_) => break,
                    None if starts_block(line) => break,
                    None => {
                        // A continuation line of the item above.
                        if let Some(last) = items.last_mut() {
                            last.push(' ');
                            last.push_str(line.trim());
                        }
                    }
                }
                i += 1;
            }
            let items = items.iter().map(|item| inlines(item)).collect();
            blocks.push(Block::List { ordered, start, items });
        } else {
            let mut text = vec![line.trim()];
            i += 1;
            while i < lines.len() && !lines[i].trim().is_empty() && !starts_block(lines[i]) {
                text.push(lines[i].trim());
                i += 1;
            }
            blocks.push(Block::Paragraph(inlines(&text.join("\n"))));
        }
    }
    blocks
}

/// Reads inline markup: emphasis, code, links, line breaks.
pub fn inlines(text: &str) -> Vec<Inline> {
    let mut out = Vec::new();
    let mut plain = String::new();
    let flush = |plain: &mut String, out: &mut Vec<Inline>| {
        if !plain.is_empty() {
            out.push(Inline::Text(std::mem::take(plain)));
        }
    };
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        let prev = plain.chars().last();
        match c {
            '\\' => {
                let next = rest[1..].chars().next();
                match next {
                    Some(n) if n.is_ascii_punctuation() => {
                        plain.push(n);
                        rest = &rest[1 + n.len_utf8()..];
                    }
                    _ => {
                        plain.push('\\');
                        rest = &rest[1..];
                    }
                }
                continue;
            }
            '\n' => {
                flush(&mut plain, &mut out);
                out.push(Inline::Break);
                rest = &rest[1..];
                continue;
            }
            '`' => {
                let ticks = rest.bytes().take_while(|b| *b == b'`').count();
                let marker = &rest[..ticks];
                if let Some(end) = rest[ticks..].find(marker) {
                    flush(&mut plain, &mut out);
                    out.push(Inline::Code(rest[ticks..ticks + end].trim().to_owned()));
                    rest = &rest[ticks + end + ticks..];
                    continue;
                }
            }
            '*' | '_' => {
                let double = rest.len() > 1 && rest.as_bytes()[1] == c as u8;
                let marker = if double { &rest[..2] } else { &rest[..1] };
                // `_` inside a word (snake_case) is not emphasis.
                let word_inside = c == '_' && prev.is_some_and(char::is_alphanumeric);
                let body = &rest[marker.len()..];
                let opens = !word_inside && body.chars().next().is_some_and(|n| !n.is_whitespace());
                if opens && let Some(end) = closing(body, marker, c) {
                    flush(&mut plain, &mut out);
                    let children = inlines(&body[..end]);
                    out.push(if double { Inline::Strong(children) } else { Inline::Em(children) });
                    rest = &body[end + marker.len()..];
                    continue;
                }
                plain.push_str(marker);
                rest = &rest[marker.len()..];
                continue;
            }
            '[' => {
                if let Some((label, href, used)) = link(rest) {
                    flush(&mut plain, &mut out);
                    let children = inlines(label);
                    if safe_href(href) {
                        out.push(Inline::Link { href: href.to_owned(), children });
                    } else {
                        // Not a link we open: keep what it said, as text.
                        out.extend(children);
                        out.push(Inline::Text(format!(" ({href})")));
                    }
                    rest = &rest[used..];
                    continue;
                }
            }
            'h' | 'H' if !prev.is_some_and(char::is_alphanumeric) => {
                let lower = rest.get(..8).unwrap_or(rest).to_ascii_lowercase();
                if lower.starts_with("https://") || lower.starts_with("http://") {
                    let end =
                        rest.find(|c: char| c.is_whitespace() || c == '<').unwrap_or(rest.len());
                    let url = rest[..end]
                        .trim_end_matches(['.', ',', ';', ':', '!', '?', ')', '\'', '"']);
                    if url.len() > "https://".len() && safe_href(url) {
                        flush(&mut plain, &mut out);
                        out.push(Inline::Link {
                            href: url.to_owned(),
                            children: vec![Inline::Text(url.to_owned())],
                        });
                        rest = &rest[url.len()..];
                        continue;
                    }
                }
            }
            _ => {}
        }
        plain.push(c);
        rest = &rest[c.len_utf8()..];
    }
    flush(&mut plain, &mut out);
    out
}

/// Where the emphasis opened by `marker` closes in `body`: a marker not preceded by
/// whitespace (and, for `_`, not followed by a letter).
fn closing(body: &str, marker: &str, c: char) -> Option<usize> {
    let mut from = 0;
    while let Some(found) = body[from..].find(marker) {
        let at = from + found;
        let before = body[..at].chars().last();
        let after = body[at + marker.len()..].chars().next();
        let double_next = marker.len() == 1 && after == Some(c);
        let ok = at > 0
            && before.is_some_and(|b| !b.is_whitespace())
            && !(c == '_' && after.is_some_and(char::is_alphanumeric))
            && !double_next;
        if ok {
            return Some(at);
        }
        from = at + marker.len() + usize::from(double_next);
    }
    None
}

/// `[label](href)` at the start of `text`: the label, the href and the bytes used.
fn link(text: &str) -> Option<(&str, &str, usize)> {
    let mut depth = 0;
    let mut label_end = None;
    for (i, c) in text.char_indices() {
        match c {
            '[' => depth += 1,
            ']' => {
                depth -= 1;
                if depth == 0 {
                    label_end = Some(i);
                    break;
                }
            }
            '\n' => return None,
            _ => {}
        }
    }
    let label_end = label_end?;
    let after = text[label_end + 1..].strip_prefix('(')?;
    let close = after.find(')')?;
    let href = after[..close].trim();
    let href = href.split_once(char::is_whitespace).map_or(href, |(h, _)| h); // drop a title
    if href.is_empty() {
        return None;
    }
    Some((&text[1..label_end], href, label_end + 2 + close + 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(s: &str) -> Inline {
        Inline::Text(s.into())
    }

    #[test]
    fn paragraphs_keep_line_breaks_and_split_on_blank_lines() {
        assert_eq!(
            parse("one\ntwo\n\nthree"),
            vec![
                Block::Paragraph(vec![text("one"), Inline::Break, text("two")]),
                Block::Paragraph(vec![text("three")]),
            ]
        );
    }

    #[test]
    fn headings_lists_code_quotes_and_rules() {
        let blocks = parse(
            "## Result\n- a **b**\n- c\n\n3. x\n4. y\n```rust\nlet a = 1 < 2;\n```\n> note\n---",
        );
        assert_eq!(blocks[0], Block::Heading(2, vec![text("Result")]));
        assert_eq!(
            blocks[1],
            Block::List {
                ordered: false,
                start: 1,
                items: vec![vec![text("a "), Inline::Strong(vec![text("b")])], vec![text("c")]],
            }
        );
        assert_eq!(
            blocks[2],
            Block::List { ordered: true, start: 3, items: vec![vec![text("x")], vec![text("y")]] }
        );
        assert_eq!(blocks[3], Block::Code { lang: "rust".into(), text: "let a = 1 < 2;".into() });
        assert_eq!(blocks[4], Block::Quote(vec![text("note")]));
        assert_eq!(blocks[5], Block::Rule);
    }

    #[test]
    fn list_items_continue_and_loose_lists_stay_one_list() {
        let blocks = parse("1. first\n   more\n\n2. second\nAfter");
        assert_eq!(
            blocks[0],
            Block::List {
                ordered: true,
                start: 1,
                items: vec![vec![text("first more")], vec![text("second After")]],
            }
        );
    }

    #[test]
    fn emphasis_code_and_escapes() {
        assert_eq!(
            inlines("*it* and _em_ with `a*b*c` and \\*not\\* snake_case_name"),
            vec![
                Inline::Em(vec![text("it")]),
                text(" and "),
                Inline::Em(vec![text("em")]),
                text(" with "),
                Inline::Code("a*b*c".into()),
                text(" and *not* snake_case_name"),
            ]
        );
        assert_eq!(inlines("2 * 3 * 4"), vec![text("2 * 3 * 4")]);
        assert_eq!(inlines("**unclosed"), vec![text("**unclosed")]);
    }

    #[test]
    fn links_are_kept_only_for_safe_schemes() {
        assert_eq!(
            inlines("see [the shop](https://shop.test/a?b=1) now"),
            vec![
                text("see "),
                Inline::Link {
                    href: "https://shop.test/a?b=1".into(),
                    children: vec![text("the shop")]
                },
                text(" now"),
            ]
        );
        let script = inlines("[x](javascript:alert(1))");
        assert!(!script.iter().any(|i| matches!(i, Inline::Link { .. })), "{script:?}");
        let shown: String = script
            .iter()
            .map(|i| match i {
                Inline::Text(t) => t.as_str(),
                _ => "",
            })
            .collect();
        assert_eq!(shown, "x (javascript:alert(1))", "a script URL stays text");
        assert_eq!(
            inlines("Found at https://a.test/p."),
            vec![
                text("Found at "),
                Inline::Link {
                    href: "https://a.test/p".into(),
                    children: vec![text("https://a.test/p")]
                },
                text("."),
            ]
        );
        assert!(!safe_href("data:text/html,<b>x</b>"));
        assert!(safe_href("mailto:a@b.test"));
    }

    #[test]
    fn html_is_just_text() {
        assert_eq!(
            parse("<img src=x onerror=alert(1)>"),
            vec![Block::Paragraph(vec![text("<img src=x onerror=alert(1)>")])]
        );
    }
}
