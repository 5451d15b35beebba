//! Helpers that keep the wasm bundles small. Rust compiles a generic function anew for every
//! type it is used with; in the bundles two families of such copies weighed most after serde's
//! own: the standard sort (3–5 KB of wasm for each element type and comparator) and serde's
//! readers (one per type for each kind of input read). These helpers route both through one
//! compiled copy.
//!
//! - [`sort_by`], [`sort_by_key`], [`sort`]: a stable sort whose only per-type part is a swap.
//! - [`map_of`], [`set_of`]: a `BTreeMap` or `BTreeSet` built by inserting; `collect()` sorts
//!   first, compiling a sort for every key type.
//! - [`SortedMap`] (and [`StrMap`], its string-keyed form for the wire) and [`SortedSet`]:
//!   a map and a set kept as sorted lists, for the small maps of the wire and of bookkeeping:
//!   each `BTreeMap` or `BTreeSet` type is a whole copy of the B-tree's code.
//! - [`read_json`], [`write_json`]: JSON text read and written through [`serde_json::Value`],
//!   so a type that is read or written both as text and as a value is compiled once.
//!
//! Plain Rust; it knows no browser and no type of the product.

mod sorted;

pub use sorted::{SortedMap, SortedSet, StrMap};

use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet};

/// Sorts `items` stably by `compare`, as `slice::sort_by` does. The comparison goes through
/// `dyn` and the standard sort runs on indices only, so every call shares one sort.
pub fn sort_by<T>(items: &mut [T], mut compare: impl FnMut(&T, &T) -> Ordering) {
    let order = sorted_indices(items.len(), &mut |a, b| compare(&items[a], &items[b]));
    permute(items, order);
}

/// Sorts `items` stably by the key `key` gives, as `slice::sort_by_key` does.
pub fn sort_by_key<T, K: Ord>(items: &mut [T], mut key: impl FnMut(&T) -> K) {
    sort_by(items, |a, b| key(a).cmp(&key(b)));
}

/// Sorts `items` stably in their natural order, as `slice::sort` does.
pub fn sort<T: Ord>(items: &mut [T]) {
    sort_by(items, T::cmp);
}

/// The positions of `len` items in sorted order: the one place the standard sort is compiled.
fn sorted_indices(len: usize, compare: &mut dyn FnMut(usize, usize) -> Ordering) -> Vec<usize> {
    let mut order: Vec<usize> = (0..len).collect();
    order.sort_by(|&a, &b| compare(a, b));
    order
}

/// Rearranges `items` so that position `i` holds what was at `order[i]`, by following each
/// cycle of the permutation with swaps.
fn permute<T>(items: &mut [T], mut order: Vec<usize>) {
    const DONE: usize = usize::MAX;
    for start in 0..items.len() {
        let mut at = start;
        while order[at] != DONE {
            let from = order[at];
            order[at] = DONE;
            if from == start {
                break;
            }
            items.swap(at, from);
            at = from;
        }
    }
}

/// The map of `pairs`, the last value of a repeated key winning, as `collect()` makes it.
pub fn map_of<K: Ord, V>(pairs: impl IntoIterator<Item = (K, V)>) -> BTreeMap<K, V> {
    let mut map = BTreeMap::new();
    map.extend(pairs);
    map
}

/// The set of `items`, as `collect()` makes it.
pub fn set_of<T: Ord>(items: impl IntoIterator<Item = T>) -> BTreeSet<T> {
    let mut set = BTreeSet::new();
    set.extend(items);
    set
}

/// For the readers `tagged-de` derives: the field under the first of `keys` present, taken
/// out of `map` and read as `T`; `None` when no key is there. Not inlined, so each field type
/// has one copy shared by every struct that has such a field, instead of one per field.
#[doc(hidden)]
#[inline(never)]
pub fn take_field<T: serde::de::DeserializeOwned>(
    map: &mut serde_json::Map<String, serde_json::Value>,
    keys: &[&str],
) -> serde_json::Result<Option<T>> {
    match keys.iter().find_map(|key| map.remove(*key)) {
        Some(value) => serde_json::from_value(value).map(Some),
        None => Ok(None),
    }
}

/// The `Value` a derived reader reads from `deserializer`. When the deserializer is itself a
/// `serde_json::Value` (`serde_json::from_value`, and every field a derived reader hands on),
/// it is that value, moved: read through `Value`'s own `Deserialize`, each nesting level would
/// rebuild everything below it once more. Any other deserializer is read as usual.
#[doc(hidden)]
pub fn value_of<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> Result<serde_json::Value, D::Error> {
    if typeid::of::<D>() == typeid::of::<serde_json::Value>() {
        let deserializer = std::mem::ManuallyDrop::new(deserializer);
        // SAFETY: `D` is `serde_json::Value` (the same type id, and `Value` has no lifetime
        // parameter to differ in), so this moves the value out of the wrapper, which is
        // never dropped.
        return Ok(unsafe {
            std::ptr::read(&*deserializer as *const D as *const serde_json::Value)
        });
    }
    <serde_json::Value as serde::Deserialize>::deserialize(deserializer)
}

/// Reads JSON text into `T` through [`serde_json::Value`]. In a bundle that also reads values
/// (`serde_json::from_value`), this compiles `T`'s reader once instead of once per input.
pub fn read_json<T: serde::de::DeserializeOwned>(text: &str) -> serde_json::Result<T> {
    serde_json::from_value(serde_json::from_str(text)?)
}

/// Writes `value` as compact JSON text through [`serde_json::Value`], the counterpart of
/// [`read_json`]: the text is what `serde_json::to_string` writes.
pub fn write_json<T: serde::Serialize + ?Sized>(value: &T) -> serde_json::Result<String> {
    serde_json::to_value(value).map(|value| value.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A `Value` is taken as it is, any other input is read into one: the same either way.
    #[test]
    fn value_of_takes_a_value_and_reads_any_other_input() {
        let value = serde_json::json!({"a": [1, {"b": null}], "c": "d"});
        assert_eq!(value_of(value.clone()).unwrap(), value);
        let mut text = serde_json::Deserializer::from_str(r#"{"a": [1, {"b": null}], "c": "d"}"#);
        assert_eq!(value_of(&mut text).unwrap(), value);
    }

    #[test]
    fn sorts_as_the_standard_sort_does_and_keeps_equal_items_in_order() {
        // A fixed pseudo-random list with many equal keys, so stability is tested too.
        let mut seed = 7u64;
        let items: Vec<(u8, usize)> = (0..500)
            .map(|i| {
                seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                ((seed >> 59) as u8, i)
            })
            .collect();
        let mut ours = items.clone();
        let mut std_sorted = items;
        sort_by_key(&mut ours, |item| item.0);
        std_sorted.sort_by_key(|item| item.0);
        assert_eq!(ours, std_sorted);

        let mut words = vec!["pear", "apple", "fig", "apple"];
        sort(&mut words);
        assert_eq!(words, ["apple", "apple", "fig", "pear"]);
        let mut empty: Vec<u8> = Vec::new();
        sort(&mut empty);
        assert!(empty.is_empty());
        let mut reversed = vec![3, 1, 2];
        sort_by(&mut reversed, |a, b| b.cmp(a));
        assert_eq!(reversed, [3, 2, 1]);
    }

    #[test]
    fn builds_maps_and_sets_as_collect_does() {
        let pairs = [(2, "b"), (1, "a"), (2, "c")];
        assert_eq!(map_of(pairs), pairs.into_iter().collect::<BTreeMap<_, _>>());
        assert_eq!(set_of([3, 1, 3]), BTreeSet::from([1, 3]));
    }

    #[test]
    fn reads_json_as_serde_json_does() {
        let read: Vec<Option<u32>> = read_json("[1, null, 3]").unwrap();
        assert_eq!(read, [Some(1), None, Some(3)]);
        let error = read_json::<u32>("\"seven\"").unwrap_err().to_string();
        assert!(error.contains("invalid type"), "{error}");
        assert!(read_json::<u32>("{").is_err());
    }

    #[test]
    fn writes_json_as_serde_json_does() {
        let value = (1, "two", [Some(3.5), None]);
        assert_eq!(write_json(&value).unwrap(), serde_json::to_string(&value).unwrap());
    }
}
