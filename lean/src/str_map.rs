//! [`StrMap`]: a map from strings, kept as a sorted list. Each `BTreeMap<K, V>` type a bundle
//! uses is a whole copy of the B-tree's code in it (about 10 KB of wasm); the small maps of the
//! wire (prices, prompt variants, spend per role) need none of it. On the wire it is the JSON
//! object a `BTreeMap<String, V>` is, its keys in the same order.

use serde::de::{DeserializeOwned, Error as _};
use serde::ser::SerializeMap;

/// A map from `String` keys, sorted, each key once.
#[derive(Debug, Clone, PartialEq)]
pub struct StrMap<V>(Vec<(String, V)>);

impl<V> Default for StrMap<V> {
    fn default() -> Self {
        StrMap(Vec::new())
    }
}

impl<V> StrMap<V> {
    pub fn new() -> Self {
        StrMap::default()
    }

    fn find(&self, key: &str) -> Result<usize, usize> {
        self.0.binary_search_by(|(k, _)| k.as_str().cmp(key))
    }

    pub fn get(&self, key: &str) -> Option<&V> {
        self.find(key).ok().map(|at| &self.0[at].1)
    }

    pub fn contains_key(&self, key: &str) -> bool {
        self.find(key).is_ok()
    }

    /// Sets `key` to `value`; the value it had, if any.
    pub fn insert(&mut self, key: String, value: V) -> Option<V> {
        match self.find(&key) {
            Ok(at) => Some(std::mem::replace(&mut self.0[at].1, value)),
            Err(at) => {
                self.0.insert(at, (key, value));
                None
            }
        }
    }

    /// The value at `key`, put there as `V::default()` first when missing (`BTreeMap`'s
    /// `entry(key).or_default()`).
    pub fn entry_or_default(&mut self, key: String) -> &mut V
    where
        V: Default,
    {
        let at = match self.find(&key) {
            Ok(at) => at,
            Err(at) => {
                self.0.insert(at, (key, V::default()));
                at
            }
        };
        &mut self.0[at].1
    }

    pub fn remove(&mut self, key: &str) -> Option<V> {
        self.find(key).ok().map(|at| self.0.remove(at).1)
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The entries in key order.
    pub fn iter(&self) -> impl Iterator<Item = (&String, &V)> {
        self.0.iter().map(|(k, v)| (k, v))
    }

    pub fn keys(&self) -> impl Iterator<Item = &String> {
        self.0.iter().map(|(k, _)| k)
    }

    pub fn values(&self) -> impl Iterator<Item = &V> {
        self.0.iter().map(|(_, v)| v)
    }
}

impl<V, K: Into<String>> FromIterator<(K, V)> for StrMap<V> {
    fn from_iter<I: IntoIterator<Item = (K, V)>>(pairs: I) -> Self {
        let mut map = StrMap::new();
        map.extend(pairs);
        map
    }
}

impl<V, K: Into<String>> Extend<(K, V)> for StrMap<V> {
    fn extend<I: IntoIterator<Item = (K, V)>>(&mut self, pairs: I) {
        for (key, value) in pairs {
            self.insert(key.into(), value);
        }
    }
}

impl<V, K: Into<String>, const N: usize> From<[(K, V); N]> for StrMap<V> {
    fn from(pairs: [(K, V); N]) -> Self {
        pairs.into_iter().collect()
    }
}

impl<V> std::ops::Index<&str> for StrMap<V> {
    type Output = V;
    /// The value at `key`; panics when there is none, as `BTreeMap`'s index does.
    fn index(&self, key: &str) -> &V {
        self.get(key).unwrap_or_else(|| panic!("no entry {key:?} in the map"))
    }
}

impl<V> IntoIterator for StrMap<V> {
    type Item = (String, V);
    type IntoIter = std::vec::IntoIter<(String, V)>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.into_iter()
    }
}

impl<V: serde::Serialize> serde::Serialize for StrMap<V> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for (key, value) in &self.0 {
            map.serialize_entry(key, value)?;
        }
        map.end()
    }
}

impl<'de, V: DeserializeOwned> serde::Deserialize<'de> for StrMap<V> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        // Through JSON's own object: its keys come sorted, as this map keeps them.
        let object = serde_json::Map::<String, serde_json::Value>::deserialize(deserializer)?;
        let mut entries = Vec::with_capacity(object.len());
        for (key, value) in object {
            entries.push((key, serde_json::from_value(value).map_err(D::Error::custom)?));
        }
        Ok(StrMap(entries))
    }
}

#[cfg(test)]
mod tests {
    use super::StrMap;
    use std::collections::BTreeMap;

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
        let mut map = StrMap::from([("pear", 1), ("apple", 2)]);
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
        assert_eq!(map.get("kiwi"), Some(&6));
    }
}
