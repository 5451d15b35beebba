//! The product's one text diff, for the Prompt Studio's version diffs (lines, then the words
//! of paired lines) and the annotation page's word diffs (history, drafts, suggestions).
//!
//! [`edit_script`] keeps a longest common subsequence, found with a table over the changed
//! middle only (the common ends cost nothing). Past [`MAX_CELLS`] cells the middle is given
//! as one removal and one addition, so two long texts with little in common cannot keep a
//! page busy. Plain Rust with no dependencies: it is linked into the page bundles.

#[cfg(test)]
mod tests;

/// Where an item of a diff is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Edit {
    /// On both sides.
    Same,
    /// Only in the old list.
    Removed,
    /// Only in the new list.
    Added,
}

impl Edit {
    pub fn name(self) -> &'static str {
        match self {
            Edit::Same => "same",
            Edit::Removed => "removed",
            Edit::Added => "added",
        }
    }
}

/// Table cells (old × new items of the changed middle) a diff may fill before it settles
/// for one removal and one addition.
pub const MAX_CELLS: usize = 4_000_000;

/// Words (letters, digits and `_`), runs of white space, and single other characters: the
/// units a word diff marks. Joined again they give `text`.
pub fn tokens(text: &str) -> Vec<&str> {
    let class = |c: char| {
        if c.is_alphanumeric() || c == '_' {
            0
        } else if c.is_whitespace() {
            1
        } else {
            2
        }
    };
    let mut out = Vec::new();
    let mut start = 0;
    let mut last: Option<u8> = None;
    for (at, c) in text.char_indices() {
        let now = class(c);
        if last.is_some_and(|l| l != now || now == 2) {
            out.push(&text[start..at]);
            start = at;
        }
        last = Some(now);
    }
    if start < text.len() {
        out.push(&text[start..]);
    }
    out
}

/// The shortest way from `a` to `b` that keeps a longest common subsequence: every item
/// once, as kept, removed or added, in order; at a change the removed items come first.
pub fn edit_script<'a>(a: &[&'a str], b: &[&'a str]) -> Vec<(Edit, &'a str)> {
    let prefix = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    let suffix =
        a[prefix..].iter().rev().zip(b[prefix..].iter().rev()).take_while(|(x, y)| x == y).count();
    let (mid_a, mid_b) = (&a[prefix..a.len() - suffix], &b[prefix..b.len() - suffix]);
    let mut out: Vec<(Edit, &str)> = a[..prefix].iter().map(|t| (Edit::Same, *t)).collect();
    let (n, m) = (mid_a.len(), mid_b.len());
    let (mut i, mut j) = (0, 0);
    if n.saturating_mul(m) <= MAX_CELLS {
        // lcs[i][j]: the longest common subsequence of mid_a[i..] and mid_b[j..].
        let width = m + 1;
        let mut lcs = vec![0u32; (n + 1) * width];
        for i in (0..n).rev() {
            for j in (0..m).rev() {
                lcs[i * width + j] = if mid_a[i] == mid_b[j] {
                    lcs[(i + 1) * width + j + 1] + 1
                } else {
                    lcs[(i + 1) * width + j].max(lcs[i * width + j + 1])
                };
            }
        }
        while i < n && j < m {
            if mid_a[i] == mid_b[j] {
                out.push((Edit::Same, mid_a[i]));
                i += 1;
                j += 1;
            } else if lcs[(i + 1) * width + j] >= lcs[i * width + j + 1] {
                out.push((Edit::Removed, mid_a[i]));
                i += 1;
            } else {
                out.push((Edit::Added, mid_b[j]));
                j += 1;
            }
        }
    }
    out.extend(mid_a[i..].iter().map(|t| (Edit::Removed, *t)));
    out.extend(mid_b[j..].iter().map(|t| (Edit::Added, *t)));
    out.extend(a[a.len() - suffix..].iter().map(|t| (Edit::Same, *t)));
    out
}
