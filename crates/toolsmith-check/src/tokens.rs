//! Token counts with a real tokenizer: the `o200k_base` encoding of tiktoken, whose vocabulary
//! is embedded in the `tiktoken-rs` crate, so counting works offline. Other models' tokenizers
//! differ by a few percent; the limits the rules use are rules of thumb, not exact budgets.

/// The name of the encoding the counts use, for messages and docs.
pub const ENCODING: &str = "o200k_base";

/// How many tokens `text` is.
#[must_use]
pub fn count(text: &str) -> usize {
    tiktoken_rs::o200k_base_singleton().count_ordinary(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_with_the_real_vocabulary() {
        assert_eq!(count(""), 0);
        assert_eq!(count("hello world"), 2);
        assert!(count("Get the weather forecast for a city.") < 12);
    }
}
