//! [`SortedMap`] and [`SortedSet`]: a map and a set kept as sorted lists. Each `BTreeMap<K, V>`
//! or `BTreeSet<T>` type a bundle uses is a whole copy of the B-tree's code in it (about 7 KB of
//! wasm before optimization); the small maps of the wire and of the worker's bookkeeping (a
//! handful of jobs, tabs or prompt variants) need none of it, and a binary search over a list
//! that short is as fast. On the wire a map is the JSON object a `BTreeMap<String, V>` is, its
//! keys in the same order.

use std::borrow::Borrow;

use serde::de::{DeserializeOwned, Error as _};
use serde::ser::{SerializeMap, SerializeSeq};

/// A map, sorted by key, each key once.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct SortedMap<K, V>(Vec<(K, V)>);

/// A map from `String` keys: the wire's maps.
pub type StrMap<V> = SortedMap<String, V>;

impl<K, V> Default for SortedMap<K, V> {
    fn default() -> Self {
        SortedMap(Vec::new())
    }
}

impl<K: Ord, V> SortedMap<K, V> {
    pub fn new() -> Self {
        SortedMap::default()
    }

    fn find<Q: Ord + ?Sized>(&self, key: &Q) -> Result<usize, usize>
    where
        K: Borrow<Q>,
    {
        self.0.binary_search_by(|(k, _)| k.borrow().cmp(key))
    }

    pub fn get<Q: Ord + ?Sized>(&self, key: &Q) -> Option<&V>
    where
        K: Borrow<Q>,
    {
        self.find(key).ok().map(|at| &self.0[at].1)
    }

    pub fn get_mut<Q: Ord + ?Sized>(&mut self, key: &Q) -> Option<&mut V>
    where
        K: Borrow<Q>,
    {
        self.find(key).ok().map(|at| &mut self.0[at].1)
    }

    pub fn contains_key<Q: Ord + ?Sized>(&self, key: &Q) -> bool
    where
        K: Borrow<Q>,
    {
        self.find(key).is_ok()
    }

    /// Sets `key` to `value`; the value it had, if any.
    pub fn insert(&mut self, key: K, value: V) -> Option<V> {
        match self.find(&key) {
            Ok(at) => Some(std::mem::replace(&mut self.0[at].1, value)),
            Err(at) => {
                self.0.insert(at, (key, value));
                None
            }
        }
    }

    /// The value at `key`, made by `make` first when missing (`BTreeMap`'s
    /// `entry(key).or_insert_with(make)`).
    pub fn entry_or_insert_with(&mut self, key: K, make: impl FnOnce() -> V) -> &mut V {
        let at = match self.find(&key) {
            Ok(at) => at,
            Err(at) => {
                self.0.insert(at, (key, make()));
                at
            }
        };
        &mut self.0[at].1
    }

    /// The value at `key`, put there as `V::default()` first when missing.
    pub fn entry_or_default(&mut self, key: K) -> &mut V
    where
        V: Default,
    {
        self.entry_or_insert_with(key, V::default)
    }

    pub fn remove<Q: Ord + ?Sized>(&mut self, key: &Q) -> Option<V>
    where
        K: Borrow<Q>,
    {
        self.find(key).ok().map(|at| self.0.remove(at).1)
    }

    /// Keeps the entries `keep` accepts, in order.
    pub fn retain(&mut self, mut keep: impl FnMut(&K, &mut V) -> bool) {
        self.0.retain_mut(|(k, v)| keep(k, v));
    }
}

impl<K, V> SortedMap<K, V> {
    pub fn clear(&mut self) {
        self.0.clear();
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The entries in key order.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = (&K, &V)> {
        self.0.iter().map(|(k, v)| (k, v))
    }

    pub fn iter_mut(&mut self) -> impl DoubleEndedIterator<Item = (&K, &mut V)> {
        self.0.iter_mut().map(|(k, v)| (&*k, v))
    }

    pub fn keys(&self) -> impl DoubleEndedIterator<Item = &K> {
        self.0.iter().map(|(k, _)| k)
    }

    pub fn values(&self) -> impl DoubleEndedIterator<Item = &V> {
        self.0.iter().map(|(_, v)| v)
    }

    pub fn values_mut(&mut self) -> impl DoubleEndedIterator<Item = &mut V> {
        self.0.iter_mut().map(|(_, v)| v)
    }

    pub fn into_values(self) -> impl DoubleEndedIterator<Item = V> {
        self.0.into_iter().map(|(_, v)| v)
    }
}

impl<K: Ord, V> FromIterator<(K, V)> for SortedMap<K, V> {
    fn from_iter<I: IntoIterator<Item = (K, V)>>(pairs: I) -> Self {
        let mut map = SortedMap::new();
        map.extend(pairs);
        map
    }
}

impl<K: Ord, V> Extend<(K, V)> for SortedMap<K, V> {
    fn extend<I: IntoIterator<Item = (K, V)>>(&mut self, pairs: I) {
        for (key, value) in pairs {
            self.insert(key, value);
        }
    }
}

impl<K: Ord, V, const N: usize> From<[(K, V); N]> for SortedMap<K, V> {
    fn from(pairs: [(K, V); N]) -> Self {
        pairs.into_iter().collect()
    }
}

impl<K: Ord + Borrow<Q>, V, Q: Ord + ?Sized + std::fmt::Debug> std::ops::Index<&Q>
    for SortedMap<K, V>
{
    type Output = V;
    /// The value at `key`; panics when there is none, as `BTreeMap`'s index does.
    fn index(&self, key: &Q) -> &V {
        self.get(key).unwrap_or_else(|| panic!("no entry {key:?} in the map"))
    }
}

impl<K, V> IntoIterator for SortedMap<K, V> {
    type Item = (K, V);
    type IntoIter = std::vec::IntoIter<(K, V)>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.into_iter()
    }
}

impl<'a, K, V> IntoIterator for &'a SortedMap<K, V> {
    type Item = (&'a K, &'a V);
    type IntoIter = std::iter::Map<std::slice::Iter<'a, (K, V)>, fn(&'a (K, V)) -> (&'a K, &'a V)>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.iter().map(|(k, v)| (k, v))
    }
}

impl<K: serde::Serialize, V: serde::Serialize> serde::Serialize for SortedMap<K, V> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for (key, value) in &self.0 {
            map.serialize_entry(key, value)?;
        }
        map.end()
    }
}

impl<'de, V: DeserializeOwned> serde::Deserialize<'de> for SortedMap<String, V> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        // Through JSON's own object: its keys come sorted, as this map keeps them.
        let object = serde_json::Map::<String, serde_json::Value>::deserialize(deserializer)?;
        let mut entries = Vec::with_capacity(object.len());
        for (key, value) in object {
            entries.push((key, serde_json::from_value(value).map_err(D::Error::custom)?));
        }
        Ok(SortedMap(entries))
    }
}

/// A set, sorted, each item once.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct SortedSet<T>(Vec<T>);

impl<T> Default for SortedSet<T> {
    fn default() -> Self {
        SortedSet(Vec::new())
    }
}

impl<T: Ord> SortedSet<T> {
    pub fn new() -> Self {
        SortedSet::default()
    }

    fn find<Q: Ord + ?Sized>(&self, item: &Q) -> Result<usize, usize>
    where
        T: Borrow<Q>,
    {
        self.0.binary_search_by(|t| t.borrow().cmp(item))
    }

    pub fn contains<Q: Ord + ?Sized>(&self, item: &Q) -> bool
    where
        T: Borrow<Q>,
    {
        self.find(item).is_ok()
    }

    /// Adds `item`; false if it was there already.
    pub fn insert(&mut self, item: T) -> bool {
        match self.find(&item) {
            Ok(_) => false,
            Err(at) => {
                self.0.insert(at, item);
                true
            }
        }
    }

    /// Takes `item` out; false if it was not there.
    pub fn remove<Q: Ord + ?Sized>(&mut self, item: &Q) -> bool
    where
        T: Borrow<Q>,
    {
        self.find(item).map(|at| self.0.remove(at)).is_ok()
    }

    /// The smallest item, taken out.
    pub fn pop_first(&mut self) -> Option<T> {
        (!self.0.is_empty()).then(|| self.0.remove(0))
    }
}

impl<T> SortedSet<T> {
    pub fn clear(&mut self) {
        self.0.clear();
    }

    /// Keeps the items `keep` accepts, in order.
    pub fn retain(&mut self, keep: impl FnMut(&T) -> bool) {
        self.0.retain(keep);
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The items in order.
    pub fn iter(&self) -> std::slice::Iter<'_, T> {
        self.0.iter()
    }

    pub fn first(&self) -> Option<&T> {
        self.0.first()
    }
}

impl<T: Ord> FromIterator<T> for SortedSet<T> {
    fn from_iter<I: IntoIterator<Item = T>>(items: I) -> Self {
        let mut set = SortedSet::new();
        set.extend(items);
        set
    }
}

impl<T: Ord> Extend<T> for SortedSet<T> {
    fn extend<I: IntoIterator<Item = T>>(&mut self, items: I) {
        for item in items {
            self.insert(item);
        }
    }
}

impl<T: Ord, const N: usize> From<[T; N]> for SortedSet<T> {
    fn from(items: [T; N]) -> Self {
        items.into_iter().collect()
    }
}

impl<T> IntoIterator for SortedSet<T> {
    type Item = T;
    type IntoIter = std::vec::IntoIter<T>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.into_iter()
    }
}

impl<'a, T> IntoIterator for &'a SortedSet<T> {
    type Item = &'a T;
    type IntoIter = std::slice::Iter<'a, T>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.iter()
    }
}

impl<T: serde::Serialize> serde::Serialize for SortedSet<T> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut seq = serializer.serialize_seq(Some(self.0.len()))?;
        for item in &self.0 {
            seq.serialize_element(item)?;
        }
        seq.end()
    }
}

#[cfg(test)]
mod tests {
    use super::{SortedMap, SortedSet, StrMap};
    use std::collections::{BTreeMap, BTreeSet};

    #[test]
    fn reads_and_writes_the_json_a_btreemap_does() {
        let text = r#"{"b":[1.5,2.0],"a":[3.0,4.0],"c":[0.0,0.25]}"#;
        let ours: StrMap<(f64, f64)> = serde_json::from_str(text).unwrap();
        let theirs: BTreeMap<String, (f64, f64)> = serde_json::from_str(text).unwrap();
        assert_eq!(serde_json::to_string(&ours).unwrap(), serde_json::to_string(&theirs).unwrap());
        assert_eq!(ours.keys().collect::<Vec<_>>(), theirs.keys().collect::<Vec<_>>());
        assert!(serde_json::from_str::<StrMap<u32>>(r#"{"a":"x"}"#).is_err());
        assert!(serde_json::from_str::<StrMap<u32>>("[1]").is_err());
    }

    #[test]
    fn behaves_as_a_sorted_map() {
        let mut map = StrMap::from([("pear".to_owned(), 1), ("apple".to_owned(), 2)]);
        assert_eq!(map.insert("fig".into(), 3), None);
        assert_eq!(map.insert("pear".into(), 4), Some(1));
        assert_eq!(
            map.iter().map(|(k, v)| (k.as_str(), *v)).collect::<Vec<_>>(),
            [("apple", 2), ("fig", 3), ("pear", 4)]
        );
        assert_eq!(map.get("fig"), Some(&3));
        assert_eq!(map.remove("apple"), Some(2));
        assert!(!map.contains_key("apple"));
        assert_eq!(map.len(), 2);
        *map.entry_or_default("kiwi".into()) += 5;
        *map.entry_or_default("kiwi".into()) += 1;
        assert_eq!(map["kiwi"], 6);
        map.retain(|k, v| {
            *v += 1;
            k != "fig"
        });
        assert_eq!(map.into_iter().collect::<Vec<_>>(), [("kiwi".into(), 7), ("pear".into(), 5)]);
    }

    /// Any key type, in the order and with the answers of a `BTreeMap`.
    #[test]
    fn keeps_the_order_and_answers_of_a_btreemap() {
        let ops: [(u32, i32); 9] =
            [(5, 1), (2, 2), (9, 3), (2, 4), (7, 5), (1, 6), (9, 7), (3, 8), (5, 9)];
        let (mut ours, mut theirs) = (SortedMap::new(), BTreeMap::new());
        for (key, value) in ops {
            assert_eq!(ours.insert(key, value), theirs.insert(key, value));
            if value % 3 == 0 {
                assert_eq!(ours.remove(&(key + 1)), theirs.remove(&(key + 1)));
            }
        }
        assert!(ours.iter().eq(theirs.iter()));
        let (mut ours, mut theirs) = (SortedSet::new(), BTreeSet::new());
        for (key, _) in ops {
            assert_eq!(ours.insert(key), theirs.insert(key));
        }
        assert!(ours.iter().eq(theirs.iter()));
        assert_eq!(ours.remove(&7), theirs.remove(&7));
        assert_eq!(ours.pop_first(), theirs.pop_first());
        assert!(ours.iter().eq(theirs.iter()));
        assert_eq!(serde_json::to_string(&ours).unwrap(), serde_json::to_string(&theirs).unwrap());
    }
}
