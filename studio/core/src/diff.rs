//! A line diff with the changed words marked, for a saved prompt version against the text
//! in the editor, over the product's one diff (`text-diff`): lines first, then the words
//! of each pair of a removed and an added line.

/// Where a line is: on both sides, only in the old text, or only in the new.
pub use text_diff::Edit as LineKind;
use text_diff::{edit_script, tokens as words};

/// One piece of a line: text both sides share, or text only one side has.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Piece {
    Same(String),
    Changed(String),
}

/// One line of the diff, its changed words marked when it pairs with a line on the
/// other side.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Line {
    pub kind: LineKind,
    pub pieces: Vec<Piece>,
}

impl Line {
    pub fn text(&self) -> String {
        self.pieces
            .iter()
            .map(|p| match p {
                Piece::Same(t) | Piece::Changed(t) => t.as_str(),
            })
            .collect()
    }
}

/// What the diff shows: a line, or a run of unchanged lines left out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Row {
    Line(Line),
    Unchanged(usize),
}

/// The lines of `old` turned into `new`: removed and added lines, with the words that
/// changed marked on each pair of a removed and an added line.
pub fn diff(old: &str, new: &str) -> Vec<Line> {
    let a: Vec<&str> = old.lines().collect();
    let b: Vec<&str> = new.lines().collect();
    let mut out = Vec::new();
    let mut removed: Vec<&str> = Vec::new();
    let mut added: Vec<&str> = Vec::new();
    for (kind, line) in edit_script(&a, &b) {
        match kind {
            LineKind::Removed => removed.push(line),
            LineKind::Added => added.push(line),
            LineKind::Same => {
                flush(&mut out, &mut removed, &mut added);
                out.push(Line { kind, pieces: vec![Piece::Same(line.to_owned())] });
            }
        }
    }
    flush(&mut out, &mut removed, &mut added);
    out
}

/// A block of removed lines then added ones: the removed first, then the added, each
/// paired line (first with first) marked word by word.
fn flush<'a>(out: &mut Vec<Line>, removed: &mut Vec<&'a str>, added: &mut Vec<&'a str>) {
    let pairs: Vec<(Vec<Piece>, Vec<Piece>)> =
        removed.iter().zip(added.iter()).map(|(r, a)| word_pieces(r, a)).collect();
    for (n, line) in removed.iter().enumerate() {
        let pieces = match pairs.get(n) {
            Some((old, _)) => old.clone(),
            None => vec![Piece::Changed((*line).to_owned())],
        };
        out.push(Line { kind: LineKind::Removed, pieces });
    }
    for (n, line) in added.iter().enumerate() {
        let pieces = match pairs.get(n) {
            Some((_, new)) => new.clone(),
            None => vec![Piece::Changed((*line).to_owned())],
        };
        out.push(Line { kind: LineKind::Added, pieces });
    }
    removed.clear();
    added.clear();
}

/// The two lines' pieces, each marking the words the other lacks.
fn word_pieces(old: &str, new: &str) -> (Vec<Piece>, Vec<Piece>) {
    let a = words(old);
    let b = words(new);
    let (mut left, mut right) = (Vec::new(), Vec::new());
    for (kind, word) in edit_script(&a, &b) {
        match kind {
            LineKind::Same => {
                push(&mut left, Piece::Same(word.to_owned()));
                push(&mut right, Piece::Same(word.to_owned()));
            }
            LineKind::Removed => push(&mut left, Piece::Changed(word.to_owned())),
            LineKind::Added => push(&mut right, Piece::Changed(word.to_owned())),
        }
    }
    (tidy(left), tidy(right))
}

/// A lone space shared between two changed words reads as part of the change.
fn tidy(pieces: Vec<Piece>) -> Vec<Piece> {
    let mut out: Vec<Piece> = Vec::new();
    let mut rest = pieces.into_iter().peekable();
    while let Some(piece) = rest.next() {
        let between = matches!(out.last(), Some(Piece::Changed(_)))
            && matches!(rest.peek(), Some(Piece::Changed(_)));
        match piece {
            Piece::Same(text) if between && text.trim().is_empty() => {
                push(&mut out, Piece::Changed(text))
            }
            piece => push(&mut out, piece),
        }
    }
    out
}

/// Appends `piece`, merged into the last one when both are the same kind.
fn push(pieces: &mut Vec<Piece>, piece: Piece) {
    match (pieces.last_mut(), piece) {
        (Some(Piece::Same(t)), Piece::Same(s)) | (Some(Piece::Changed(t)), Piece::Changed(s)) => {
            t.push_str(&s)
        }
        (_, piece) => pieces.push(piece),
    }
}

/// Lines added and removed.
pub fn counts(lines: &[Line]) -> (usize, usize) {
    let count = |kind| lines.iter().filter(|l| l.kind == kind).count();
    (count(LineKind::Added), count(LineKind::Removed))
}

/// The diff as shown: each change with `context` unchanged lines around it, longer runs of
/// unchanged lines folded into a count.
pub fn fold(lines: Vec<Line>, context: usize) -> Vec<Row> {
    let near_change = |at: usize| {
        let from = at.saturating_sub(context);
        let to = (at + context + 1).min(lines.len());
        lines[from..to].iter().any(|l| l.kind != LineKind::Same)
    };
    let keep: Vec<bool> = (0..lines.len()).map(near_change).collect();
    let mut rows = Vec::new();
    for (line, keep) in lines.into_iter().zip(keep) {
        if keep {
            rows.push(Row::Line(line));
        } else if let Some(Row::Unchanged(n)) = rows.last_mut() {
            *n += 1;
        } else {
            rows.push(Row::Unchanged(1));
        }
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(lines: &[Line]) -> Vec<(&'static str, String)> {
        lines.iter().map(|l| (l.kind.name(), l.text())).collect()
    }

    #[test]
    fn changed_lines_are_removed_and_added_with_their_changed_words_marked() {
        let old = "# Navigator\nKeep thoughts short.\nTask: {{task}}\nEnd.";
        let new =
            "# Navigator\nKeep each thought to one sentence.\nTask: {{task}}\nNew rule.\nEnd.";
        let lines = diff(old, new);
        assert_eq!(
            kinds(&lines),
            [
                ("same", "# Navigator".to_owned()),
                ("removed", "Keep thoughts short.".to_owned()),
                ("added", "Keep each thought to one sentence.".to_owned()),
                ("same", "Task: {{task}}".to_owned()),
                ("added", "New rule.".to_owned()),
                ("same", "End.".to_owned()),
            ]
        );
        assert_eq!(
            lines[1].pieces,
            [
                Piece::Same("Keep ".into()),
                Piece::Changed("thoughts short".into()),
                Piece::Same(".".into())
            ]
        );
        assert!(lines[2].pieces.contains(&Piece::Changed("each thought to one sentence".into())));
        assert_eq!(lines[4].pieces, [Piece::Changed("New rule.".into())]);
        assert_eq!(counts(&lines), (2, 1));
    }

    #[test]
    fn the_same_text_has_no_change_and_long_unchanged_runs_fold() {
        let text: String = (1..=20).map(|n| format!("line {n}\n")).collect();
        assert_eq!(counts(&diff(&text, &text)), (0, 0));
        let changed = text.replace("line 10\n", "line ten\n");
        let rows = fold(diff(&text, &changed), 2);
        assert_eq!(rows.first(), Some(&Row::Unchanged(7)));
        assert_eq!(rows.last(), Some(&Row::Unchanged(8)));
        let shown: Vec<String> = rows
            .iter()
            .filter_map(|r| match r {
                Row::Line(l) => Some(l.text()),
                Row::Unchanged(_) => None,
            })
            .collect();
        assert_eq!(shown, ["line 8", "line 9", "line 10", "line ten", "line 11", "line 12"]);
    }

    #[test]
    fn empty_sides_and_texts_too_different_to_pair_still_diff() {
        assert_eq!(kinds(&diff("", "a\nb")), [("added", "a".into()), ("added", "b".into())]);
        assert_eq!(kinds(&diff("a", "")), [("removed", "a".into())]);
        // Past the table's limit: one removal and one addition, nothing lost.
        let old: String = (0..2100).map(|n| format!("old {n}\n")).collect();
        let new: String = (0..2100).map(|n| format!("new {n}\n")).collect();
        let lines = diff(&old, &new);
        assert_eq!(counts(&lines), (2100, 2100));
        assert_eq!(lines[0].text(), "old 0");
    }
}
