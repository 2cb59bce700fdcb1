//! Token counts of what a model is sent (`docs/CONTRACTS.md`, "Tokens").
//!
//! With the feature `tokens` (a default feature) [`count`] is exact for OpenAI's `o200k_base`
//! tokenizer (the BPE data ships inside the `tiktoken-rs` crate: nothing is downloaded). Without
//! it, [`count`] is the documented estimate of one token per four bytes of UTF-8, rounded up,
//! and [`TOKENIZER`] says so. Every count is deterministic.
//!
//! ```
//! use dsh_tools_runtime::tokens;
//!
//! assert_eq!(tokens::count(""), 0);
//! assert!(tokens::count("Read a file.") > 0);
//! assert_eq!(tokens::estimate("abcde"), 2);
//! ```
//!
//! [`budget`] cuts a result's model-facing content to a number of tokens, by structure.

mod blocks;
pub mod budget;

/// The tokenizer [`count`] uses: `"o200k_base"`, or `"bytes/4"` without the feature `tokens`.
#[cfg(feature = "tokens")]
pub const TOKENIZER: &str = "o200k_base";

/// The tokenizer [`count`] uses: `"o200k_base"`, or `"bytes/4"` without the feature `tokens`.
#[cfg(not(feature = "tokens"))]
pub const TOKENIZER: &str = "bytes/4";

/// The number of tokens of `text` for [`TOKENIZER`] (special-token text such as
/// `<|endoftext|>` counts as ordinary text).
#[cfg(feature = "tokens")]
pub fn count(text: &str) -> usize {
    if text.is_empty() {
        return 0;
    }
    tiktoken_rs::o200k_base_singleton()
        .encode_ordinary(text)
        .len()
}

/// The number of tokens of `text` for [`TOKENIZER`]: without the feature `tokens`, the
/// [`estimate`].
#[cfg(not(feature = "tokens"))]
pub fn count(text: &str) -> usize {
    estimate(text)
}

/// The estimate used without a tokenizer: one token per four bytes of UTF-8, rounded up.
pub fn estimate(text: &str) -> usize {
    text.len().div_ceil(4)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn estimate_rounds_up() {
        assert_eq!(estimate(""), 0);
        assert_eq!(estimate("abcd"), 1);
        assert_eq!(estimate("abcdefghi"), 3);
        assert_eq!(estimate("é"), 1);
    }

    #[cfg(feature = "tokens")]
    #[test]
    fn o200k_counts_known_texts() {
        // Reference counts of OpenAI's tiktoken for o200k_base.
        assert_eq!(count("hello world"), 2);
        assert!(count("<|endoftext|>") > 1, "special tokens count as text");
        assert_eq!(TOKENIZER, "o200k_base");
    }
}
