//! Terms: how names, descriptions and queries become the words the ranking compares.
//!
//! Identifiers split at `_`, `-`, `.`, `/`, `:`, spaces and lower-to-upper camelCase boundaries
//! (`getPullRequest` → `get`, `pull`, `request`; `HTMLParser` → `html`, `parser`); everything
//! is lowercased (Unicode), stop words are dropped, and each word is reduced by a small suffix
//! stemmer and mapped through a short synonym table, so that "searching files" meets
//! `search_file` and "remove a ticket" meets `delete_issue`. No network, no model: the same
//! text always gives the same terms.

/// Words too common in tool descriptions and requests to tell tools apart.
const STOP_WORDS: &[&str] = &[
    "a", "an", "and", "are", "as", "at", "be", "by", "can", "do", "does", "for", "from", "has",
    "have", "how", "i", "if", "in", "into", "is", "it", "its", "me", "my", "of", "on", "or", "our",
    "please", "should", "so", "some", "that", "the", "their", "then", "this", "to", "use", "used",
    "using", "want", "was", "we", "what", "when", "which", "will", "with", "you", "your",
];

/// Words with the same meaning in tool vocabularies, mapped to one; both sides are stems
/// (the table applies after [`stem`]).
const SYNONYMS: &[(&str, &str)] = &[
    ("add", "creat"),
    ("new", "creat"),
    ("mak", "creat"),
    ("insert", "creat"),
    ("remov", "delet"),
    ("eras", "delet"),
    ("drop", "delet"),
    ("find", "search"),
    ("lookup", "search"),
    ("query", "search"),
    ("fetch", "get"),
    ("retriev", "get"),
    ("read", "get"),
    ("show", "get"),
    ("view", "get"),
    ("obtain", "get"),
    ("enumerat", "list"),
    ("modify", "updat"),
    ("edit", "updat"),
    ("chang", "updat"),
    ("ticket", "issu"),
    ("repository", "repo"),
    ("pr", "pull"),
    ("msg", "messag"),
    ("doc", "document"),
    ("dir", "directory"),
    ("folder", "directory"),
    ("execut", "run"),
    ("launch", "run"),
    ("start", "run"),
    ("send", "post"),
    ("writ", "write"),
    ("sav", "write"),
    ("stor", "write"),
    ("url", "link"),
    ("webpag", "pag"),
    ("websit", "sit"),
    ("email", "mail"),
    ("calendar", "event"),
];

/// The terms of `text`, in order (repeats kept: they are term frequencies).
pub(crate) fn terms(text: &str, out: &mut Vec<String>) {
    for word in words(text) {
        if let Some(term) = normalise(&word) {
            out.push(term);
        }
    }
}

/// The words of `text`: runs of alphanumeric characters, split again at camelCase boundaries,
/// lowercased.
fn words(text: &str) -> Vec<String> {
    let mut words = Vec::new();
    for run in text.split(|c: char| !c.is_alphanumeric()) {
        if run.is_empty() {
            continue;
        }
        let chars: Vec<char> = run.chars().collect();
        let mut start = 0;
        for i in 1..chars.len() {
            let (before, here) = (chars[i - 1], chars[i]);
            let next_lower = chars.get(i + 1).is_some_and(|c| c.is_lowercase());
            // `aB` starts a word at B; in `HTMLParser` the P before a lowercase letter does;
            // a switch between letters and digits does too (`v2`, `utf8`) only after letters.
            let boundary = (before.is_lowercase() && here.is_uppercase())
                || (before.is_uppercase() && here.is_uppercase() && next_lower)
                || (before.is_alphabetic() && here.is_ascii_digit());
            if boundary {
                words.push(chars[start..i].iter().collect::<String>().to_lowercase());
                start = i;
            }
        }
        words.push(chars[start..].iter().collect::<String>().to_lowercase());
    }
    words
}

/// A word's term: `None` for a stop word; otherwise stemmed and mapped through the synonyms.
fn normalise(word: &str) -> Option<String> {
    if STOP_WORDS.contains(&word) {
        return None;
    }
    let stem = stem(word);
    let term = SYNONYMS
        .iter()
        .find(|(from, _)| *from == stem)
        .map_or(stem, |(_, to)| (*to).to_owned());
    Some(term)
}

/// A light suffix stemmer for English: plurals, `-ing`, `-ed`, `-ies`, and a final `e`, enough
/// that "files", "file", "filing" and "filed" meet. Words of four letters or fewer and numbers
/// are kept as they are.
fn stem(word: &str) -> String {
    if word.chars().count() <= 3 || word.chars().all(|c| c.is_ascii_digit()) {
        return word.to_owned();
    }
    let strip = |suffix: &str, min: usize| {
        word.strip_suffix(suffix)
            .filter(|rest| rest.chars().count() >= min)
    };
    let base = if let Some(rest) = strip("ies", 2) {
        format!("{rest}y")
    } else if let Some(rest) = strip("ing", 3).or_else(|| strip("ed", 3)) {
        rest.to_owned()
    } else if let Some(rest) = strip("es", 3).filter(|rest| {
        rest.ends_with("ss") || rest.ends_with("sh") || rest.ends_with("ch") || rest.ends_with('x')
    }) {
        rest.to_owned()
    } else if let Some(rest) = strip("s", 3).filter(|rest| !rest.ends_with('s')) {
        rest.to_owned()
    } else {
        word.to_owned()
    };
    // A final `e` goes (`create`/`creating` → `creat`), and a doubled final consonant left by
    // `-ing`/`-ed` is undone (`running` → `run`).
    let base = match base.strip_suffix('e') {
        Some(rest) if rest.chars().count() >= 3 => rest.to_owned(),
        _ => base,
    };
    let chars: Vec<char> = base.chars().collect();
    match chars.as_slice() {
        [.., a, b] if a == b && !"aeiouls".contains(*a) && chars.len() > 3 => {
            chars[..chars.len() - 1].iter().collect()
        }
        _ => base,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(text: &str) -> Vec<String> {
        let mut out = Vec::new();
        terms(text, &mut out);
        out
    }

    #[test]
    fn identifiers_split_at_separators_and_camel_case() {
        assert_eq!(
            all("get_pull-request.v2"),
            ["get", "pull", "request", "v", "2"]
        );
        assert_eq!(all("getPullRequest"), ["get", "pull", "request"]);
        assert_eq!(all("HTMLParser"), ["html", "parser"]);
        assert_eq!(all("browser_navigate"), ["browser", "navigat"]);
    }

    #[test]
    fn inflections_and_synonyms_meet() {
        assert_eq!(all("files"), all("file"));
        assert_eq!(all("searching"), all("search"));
        assert_eq!(all("created"), all("create"));
        assert_eq!(all("running"), all("run"));
        assert_eq!(all("entries"), all("entry"));
        assert_eq!(all("remove"), all("delete"));
        assert_eq!(all("find"), all("search"));
        assert_eq!(all("tickets"), all("issues"));
        assert_eq!(all("repository"), all("repo"));
        assert_eq!(all("class"), ["class"]);
    }

    #[test]
    fn stop_words_and_punctuation_are_dropped() {
        assert_eq!(
            all("Please find the file, then read it!"),
            ["search", "fil", "get"]
        );
        assert!(all("").is_empty());
        assert!(all("  ,;  ").is_empty());
    }

    #[test]
    fn other_scripts_are_words_too() {
        assert_eq!(all("Überprüfen Datei"), ["überprüfen", "datei"]);
        assert_eq!(all("検索"), ["検索"]);
    }
}
