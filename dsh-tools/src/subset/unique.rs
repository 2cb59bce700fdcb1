//! `uniqueItems`: the first pair of equal items under JSON equality (`json::json_equal`:
//! numbers compare as doubles, objects ignore key order).

use std::hash::{Hash, Hasher};

use serde_json::Value;

use super::compiled::Fnv;
use crate::json::{json_equal, number_to_f64};

/// Arrays up to this length are compared pairwise; longer ones are hashed first.
const PAIRWISE_MAX: usize = 16;

/// How deep the hash looks into an item; deeper parts only make hashes collide more.
const HASH_DEPTH: usize = 32;

/// The first `(i, j)`, `i < j`, with `items[i]` equal to `items[j]` (smallest `j`, then `i`).
pub(crate) fn first_duplicate(items: &[Value]) -> Option<(usize, usize)> {
    if items.len() <= PAIRWISE_MAX {
        for (j, b) in items.iter().enumerate() {
            for (i, a) in items.iter().enumerate().take(j) {
                if json_equal(a, b) {
                    return Some((i, j));
                }
            }
        }
        return None;
    }
    let mut keyed: Vec<(u64, usize)> = items
        .iter()
        .enumerate()
        .map(|(i, v)| (hash_of(v), i))
        .collect();
    keyed.sort_unstable();
    let mut best: Option<(usize, usize)> = None;
    for group in keyed.chunk_by(|a, b| a.0 == b.0) {
        for (k, &(_, j)) in group.iter().enumerate() {
            for &(_, i) in group.iter().take(k) {
                let (i, j) = (i.min(j), i.max(j));
                let better = best.is_none_or(|(bi, bj)| (j, i) < (bj, bi));
                if better && json_equal(&items[i], &items[j]) {
                    best = Some((i, j));
                }
            }
        }
    }
    best
}

/// A hash consistent with [`json_equal`]: equal values hash equally.
fn hash_of(value: &Value) -> u64 {
    let mut hasher = Fnv::default();
    write(value, &mut hasher, 0);
    hasher.finish()
}

fn write(value: &Value, hasher: &mut Fnv, depth: usize) {
    if depth > HASH_DEPTH {
        return;
    }
    match value {
        Value::Null => 0u8.hash(hasher),
        Value::Bool(b) => (1u8, *b).hash(hasher),
        Value::Number(n) => {
            let x = number_to_f64(n);
            (2u8, if x == 0.0 { 0 } else { x.to_bits() }).hash(hasher);
        }
        Value::String(s) => (3u8, s).hash(hasher),
        Value::Array(items) => {
            (4u8, items.len()).hash(hasher);
            for item in items {
                write(item, hasher, depth + 1);
            }
        }
        Value::Object(map) => {
            // Key order does not matter: combine the entries' hashes commutatively.
            let mut sum = 0u64;
            for (key, item) in map {
                let mut entry = Fnv::default();
                key.hash(&mut entry);
                write(item, &mut entry, depth + 1);
                sum = sum.wrapping_add(entry.finish());
            }
            (5u8, map.len(), sum).hash(hasher);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn equal_items_are_found_short_and_long() {
        assert_eq!(
            first_duplicate(&[json!(1), json!(2), json!(1.0)]),
            Some((0, 2))
        );
        assert_eq!(
            first_duplicate(&[json!({"a": 1, "b": [2]}), json!({"b": [2.0], "a": 1})]),
            Some((0, 1))
        );
        assert_eq!(first_duplicate(&[json!(false), json!(0)]), None);
        let mut long: Vec<Value> = (0..100).map(|i| json!({"n": i})).collect();
        assert_eq!(first_duplicate(&long), None);
        long.push(json!({"n": 40.0}));
        long.push(json!({"n": 7}));
        assert_eq!(first_duplicate(&long), Some((40, 100)));
    }
}
