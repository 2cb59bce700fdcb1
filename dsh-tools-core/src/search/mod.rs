//! Tool search (`docs/CONTRACTS.md`, "Tool search"): which tools of a large set match a request
//! in plain words, best first.
//!
//! The ranking is BM25F over four fields of each tool, weighted: its name (×3, split into words:
//! `get_pull_request`, `getPullRequest`), its parameters' names (×1.5), its description (×1) and
//! its parameters' descriptions (×0.5). Words are lowercased, stemmed and mapped through a
//! small synonym table first (see `terms`), so "find open tickets" reaches `search_issues`.
//! It runs locally and deterministically: no network, no model, the same scores for the same
//! tools and query, ties broken by name.
//!
//! ```
//! use dsh_tools_runtime::search::ToolIndex;
//! use serde_json::json;
//!
//! let read = json!({"type": "object", "properties": {"path": {"type": "string", "description": "The file to read."}}});
//! let issues = json!({"type": "object", "properties": {"repo": {"type": "string"}, "state": {"type": "string"}}});
//! let index = ToolIndex::new([
//!     ("read_file", "Read a text file from disk.", &read),
//!     ("search_issues", "Search a repository's issues.", &issues),
//! ]);
//! let hits = index.search("find open tickets in a repo", 5);
//! assert_eq!(hits[0].name, "search_issues");
//! assert!(index.search("", 5).is_empty());
//! ```

mod terms;

use std::collections::HashMap;

use dsh_tools::ToolDefinition;
use serde::Serialize;
use serde_json::Value;

/// Field weights (BM25F): a word in the name counts three times one in the description.
const NAME_WEIGHT: f64 = 3.0;
const PARAMETER_NAME_WEIGHT: f64 = 1.5;
const DESCRIPTION_WEIGHT: f64 = 1.0;
const PARAMETER_DESCRIPTION_WEIGHT: f64 = 0.5;
/// BM25's term-frequency saturation and length normalisation.
const K1: f64 = 1.2;
const B: f64 = 0.75;
/// How deep the parameter schema is walked for names and descriptions.
const MAX_SCHEMA_DEPTH: usize = 4;
/// The distinct terms of a query that are ranked (a longer query's later words are ignored).
pub const MAX_QUERY_TERMS: usize = 64;

/// One match: the tool's name and its score (higher is better; rounded to four decimals).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SearchHit {
    /// The tool's name.
    pub name: String,
    /// Its BM25F score for the query.
    pub score: f64,
}

/// An index of tools to search (see [the module docs](self)). Built once per tool set; searching
/// does not change it.
#[derive(Debug, Clone, Default)]
pub struct ToolIndex {
    names: Vec<String>,
    /// Per tool: its weighted length.
    lengths: Vec<f64>,
    average_length: f64,
    /// Per term: (tool, weighted term frequency), tools in index order.
    postings: HashMap<String, Vec<(u32, f64)>>,
}

impl ToolIndex {
    /// An index of `(name, description, parameter schema)` triples, in the order given.
    pub fn new<'t>(tools: impl IntoIterator<Item = (&'t str, &'t str, &'t Value)>) -> Self {
        let mut index = Self::default();
        let mut words = Vec::new();
        for (name, description, parameters) in tools {
            let doc = u32::try_from(index.names.len()).expect("fewer than 2^32 tools");
            let mut frequencies: HashMap<String, f64> = HashMap::new();
            let mut length = 0.0;
            let mut add = |text: &str, weight: f64, words: &mut Vec<String>| {
                words.clear();
                terms::terms(text, words);
                for word in words.drain(..) {
                    *frequencies.entry(word).or_default() += weight;
                    length += weight;
                }
            };
            add(name, NAME_WEIGHT, &mut words);
            add(description, DESCRIPTION_WEIGHT, &mut words);
            walk_parameters(parameters, 0, &mut |field, text| {
                let weight = match field {
                    Field::Name => PARAMETER_NAME_WEIGHT,
                    Field::Description => PARAMETER_DESCRIPTION_WEIGHT,
                };
                add(text, weight, &mut words);
            });
            let mut frequencies: Vec<(String, f64)> = frequencies.into_iter().collect();
            frequencies.sort_by(|a, b| a.0.cmp(&b.0));
            for (term, frequency) in frequencies {
                index
                    .postings
                    .entry(term)
                    .or_default()
                    .push((doc, frequency));
            }
            index.names.push(name.to_owned());
            index.lengths.push(length);
        }
        let total: f64 = index.lengths.iter().sum();
        index.average_length = if index.names.is_empty() {
            0.0
        } else {
            total / index.names.len() as f64
        };
        index
    }

    /// An index of tool definitions (their model-facing names, descriptions and parameters).
    pub fn from_definitions(definitions: &[ToolDefinition]) -> Self {
        Self::new(
            definitions
                .iter()
                .map(|def| (def.name(), def.description(), def.parameters())),
        )
    }

    /// How many tools the index holds.
    pub fn len(&self) -> usize {
        self.names.len()
    }

    /// Whether the index holds no tool.
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    /// The at most `limit` tools that best match `query`, best first; tools sharing no word
    /// with the query are left out (an empty query, or one of stop words only, matches nothing).
    /// Only the first [`MAX_QUERY_TERMS`] distinct words of the query are ranked.
    pub fn search(&self, query: &str, limit: usize) -> Vec<SearchHit> {
        let mut words = Vec::new();
        terms::terms(query, &mut words);
        let mut distinct: Vec<String> = Vec::new();
        for word in words {
            if distinct.len() == MAX_QUERY_TERMS {
                break;
            }
            if !distinct.contains(&word) {
                distinct.push(word);
            }
        }
        let count = self.names.len() as f64;
        // Dense accumulators (one per tool) and the tools touched, in first-touch order.
        let mut scores = vec![0.0_f64; self.names.len()];
        let mut touched: Vec<u32> = Vec::new();
        for word in &distinct {
            let Some(postings) = self.postings.get(word) else {
                continue;
            };
            let matching = postings.len() as f64;
            let idf = (1.0 + (count - matching + 0.5) / (matching + 0.5)).ln();
            for &(doc, frequency) in postings {
                let length = self.lengths[doc as usize] / self.average_length.max(f64::EPSILON);
                let saturated = frequency * (K1 + 1.0) / (frequency + K1 * (1.0 - B + B * length));
                let score = &mut scores[doc as usize];
                if *score == 0.0 {
                    touched.push(doc);
                }
                *score += idf * saturated;
            }
        }
        let mut ranked: Vec<(u32, f64)> = touched
            .into_iter()
            .map(|doc| (doc, scores[doc as usize]))
            .collect();
        let best_first = |a: &(u32, f64), b: &(u32, f64)| {
            b.1.total_cmp(&a.1)
                .then_with(|| self.names[a.0 as usize].cmp(&self.names[b.0 as usize]))
                .then_with(|| a.0.cmp(&b.0))
        };
        // Only the best `limit` are ordered: a common word can touch most of a large set.
        if limit == 0 {
            return Vec::new();
        }
        if ranked.len() > limit {
            ranked.select_nth_unstable_by(limit - 1, best_first);
            ranked.truncate(limit);
        }
        ranked.sort_by(best_first);
        ranked
            .into_iter()
            .map(|(doc, score)| SearchHit {
                name: self.names[doc as usize].clone(),
                score: (score * 10_000.0).round() / 10_000.0,
            })
            .collect()
    }
}

/// Which field of a parameter a text is.
enum Field {
    Name,
    Description,
}

/// Calls `visit` with every property name and description in `schema`: its properties, their
/// items and union branches, to [`MAX_SCHEMA_DEPTH`] levels.
fn walk_parameters(schema: &Value, depth: usize, visit: &mut impl FnMut(Field, &str)) {
    if depth > MAX_SCHEMA_DEPTH {
        return;
    }
    let Value::Object(schema) = schema else {
        return;
    };
    if let Some(Value::Object(properties)) = schema.get("properties") {
        for (name, property) in properties {
            visit(Field::Name, name);
            if let Some(Value::String(description)) = property.get("description") {
                visit(Field::Description, description);
            }
            walk_parameters(property, depth + 1, visit);
        }
    }
    if let Some(items) = schema.get("items") {
        walk_parameters(items, depth + 1, visit);
    }
    for union in ["anyOf", "oneOf", "allOf"] {
        if let Some(Value::Array(branches)) = schema.get(union) {
            for branch in branches {
                walk_parameters(branch, depth + 1, visit);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn index(tools: &[(&str, &str, Value)]) -> ToolIndex {
        ToolIndex::new(tools.iter().map(|(n, d, p)| (*n, *d, p)))
    }

    #[test]
    fn the_name_outweighs_a_mention_in_a_description() {
        let none = json!({});
        let index = index(&[
            (
                "list_files",
                "Lists the entries of a directory.",
                none.clone(),
            ),
            ("delete_file", "Deletes one file.", none.clone()),
            (
                "move",
                "Moves a file or a directory; the old file is gone.",
                none,
            ),
        ]);
        let hits = index.search("delete a file", 3);
        assert_eq!(hits[0].name, "delete_file");
        assert!(hits.iter().all(|hit| hit.score > 0.0));
    }

    #[test]
    fn parameter_names_and_descriptions_count() {
        let with_owner = json!({"type": "object", "properties": {
            "owner": {"type": "string", "description": "The account that owns the repository."}
        }});
        let index = index(&[
            ("get_thing", "Gets a thing.", with_owner),
            ("get_other", "Gets another thing.", json!({})),
        ]);
        assert_eq!(index.search("owner", 5)[0].name, "get_thing");
        assert_eq!(index.search("account", 5).len(), 1);
    }

    #[test]
    fn results_are_deterministic_with_ties_broken_by_name() {
        let none = json!({});
        let index = index(&[
            ("b_tool", "Same words.", none.clone()),
            ("a_tool", "Same words.", none),
        ]);
        let first = index.search("same words", 5);
        assert_eq!(first, index.search("same words", 5));
        assert_eq!(
            first.iter().map(|h| h.name.as_str()).collect::<Vec<_>>(),
            ["a_tool", "b_tool"]
        );
    }

    #[test]
    fn empty_queries_and_empty_indexes_match_nothing() {
        let none = json!({});
        let index = index(&[("read_file", "Reads a file.", none)]);
        assert!(index.search("", 5).is_empty());
        assert!(index.search("the of and", 5).is_empty());
        assert!(index.search("read", 0).is_empty());
        assert!(ToolIndex::default().search("read", 5).is_empty());
        assert!(ToolIndex::default().is_empty());
    }

    #[test]
    fn a_huge_query_ranks_its_first_words_only() {
        let none = json!({});
        let index = index(&[
            ("read_file", "Reads a file.", none.clone()),
            ("zebra", "Zebra.", none),
        ]);
        let mut query = "read file ".to_owned();
        for i in 0..100_000 {
            query.push_str(&format!("word{i} "));
        }
        query.push_str("zebra");
        let hits = index.search(&query, 5);
        assert_eq!(hits.len(), 1, "{hits:?}");
        assert_eq!(hits[0].name, "read_file");
    }
}
