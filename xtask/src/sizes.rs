//! `cargo xtask dist --sizes`: `twiggy top`'s CSV read and summed by crate, so the report
//! says which crate to look at before which function.

/// One row of `twiggy top --format csv`: an item and its own size in bytes.
pub struct Item {
    pub name: String,
    pub bytes: usize,
}

/// Reads `Name,ShallowSize,ShallowSizePercent` rows; names are quoted when they hold commas.
/// Custom sections (the function names wasm-opt strips anyway) are left out.
pub fn parse_top(csv: &str) -> Vec<Item> {
    csv.lines()
        .skip(1)
        .filter_map(|line| {
            let fields = split_csv(line);
            let name = fields.first()?.clone();
            let bytes = fields.get(1)?.parse().ok()?;
            (!name.starts_with('"')).then_some(Item { name, bytes })
        })
        .collect()
}

fn split_csv(line: &str) -> Vec<String> {
    let (mut fields, mut field, mut quoted) = (Vec::new(), String::new(), false);
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, quoted) {
            ('"', true) if chars.peek() == Some(&'"') => {
                field.push('"');
                chars.next();
            }
            ('"', _) => quoted = !quoted,
            (',', false) => fields.push(std::mem::take(&mut field)),
            _ => field.push(c),
        }
    }
    fields.push(field);
    fields
}

/// The crate an item's code comes from: the path's first segment, or the impl's self type
/// for `<T as Trait>::f`. Generic code counts where it is defined (serde's `Content`
/// buffering shows as serde even when a derive of ours made it).
pub fn crate_of(name: &str) -> &str {
    if name.starts_with("data segment") {
        return name;
    }
    let mut rest = name.trim_start_matches('<').trim_start_matches('&');
    for prefix in ["mut ", "dyn "] {
        rest = rest.strip_prefix(prefix).unwrap_or(rest);
    }
    let end = rest.find(|c: char| !(c.is_alphanumeric() || c == '_')).unwrap_or(rest.len());
    match &rest[..end] {
        "" => "other",
        krate => krate,
    }
}

/// (crate, bytes, % of all items), biggest first.
pub fn by_crate(items: &[Item]) -> Vec<(String, usize, f64)> {
    let mut sums = std::collections::BTreeMap::<&str, usize>::new();
    for item in items {
        *sums.entry(crate_of(&item.name)).or_default() += item.bytes;
    }
    let total = items.iter().map(|i| i.bytes).sum::<usize>().max(1) as f64;
    let mut rows: Vec<_> = sums
        .into_iter()
        .map(|(name, bytes)| (name.to_owned(), bytes, 100.0 * bytes as f64 / total))
        .collect();
    rows.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    rows
}

/// The `n` biggest items, with their hash suffixes cut.
pub fn top_items(items: &[Item], n: usize) -> Vec<(String, usize, f64)> {
    let total = items.iter().map(|i| i.bytes).sum::<usize>().max(1) as f64;
    let mut sorted: Vec<&Item> = items.iter().collect();
    sorted.sort_by_key(|item| std::cmp::Reverse(item.bytes));
    sorted
        .into_iter()
        .take(n)
        .map(|item| {
            let name = match item.name.rsplit_once("::h") {
                Some((head, hash)) if hash.len() == 16 => head,
                _ => &item.name,
            };
            (name.to_owned(), item.bytes, 100.0 * item.bytes as f64 / total)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const CSV: &str = "Name,ShallowSize,ShallowSizePercent\n\
\"\"\"function names\"\" subsection\",1000,50.0\n\
\"data segment \"\".rodata\"\"\",300,15.0\n\
\"<serde::private::de::content::ContentDeserializer<E> as serde_core::de::Deserializer>::deserialize_any::h0123456789abcdef\",200,10.0\n\
side_panel::state::PanelState::reduce::h0123456789abcdef,150,7.5\n\
\"<&mut yew::html::Html as core::fmt::Debug>::fmt::h0123456789abcdef\",50,2.5\n\
core[c5930c85a12de822]::num::flt2dec::format_shortest,100,5.0\n";

    #[test]
    fn crates_are_summed_and_custom_sections_left_out() {
        let items = parse_top(CSV);
        assert_eq!(items.len(), 5, "the names section is not code the user downloads");
        let crates = by_crate(&items);
        let names: Vec<&str> = crates.iter().map(|(n, _, _)| n.as_str()).collect();
        assert_eq!(names, ["data segment \".rodata\"", "serde", "side_panel", "core", "yew"]);
        assert!((crates[0].2 - 37.5).abs() < 1e-9);
    }

    #[test]
    fn the_biggest_items_lose_their_hashes() {
        let top = top_items(&parse_top(CSV), 2);
        assert_eq!(
            top[1].0,
            "<serde::private::de::content::ContentDeserializer<E> as serde_core::de::Deserializer>::deserialize_any"
        );
    }
}
