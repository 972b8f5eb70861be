//! Text into index terms: words split on case and separators, lowercased, stop words
//! dropped, and a light English suffix stripper so `forecasting` meets `forecast`.

/// Words too common to say anything about which tool is meant.
pub(crate) const STOP_WORDS: &[&str] = &[
    "a", "an", "and", "are", "as", "at", "be", "by", "can", "do", "for", "from", "get", "i", "in",
    "is", "it", "me", "my", "of", "on", "or", "some", "that", "the", "this", "to", "tool", "what",
    "which", "with", "you",
];

/// Whether `word` is one of [`STOP_WORDS`]. This runs for every word of every indexed
/// tool, so each word is packed into a number (every stop word has at most 7 bytes) and
/// looked up among the stop words' numbers, sorted, by halves: no string compared.
pub(crate) fn is_stop_word(word: &str) -> bool {
    static PACKED: std::sync::LazyLock<Vec<u64>> = std::sync::LazyLock::new(|| {
        let mut packed: Vec<u64> = STOP_WORDS.iter().filter_map(|word| packed(word)).collect();
        packed.sort_unstable();
        packed
    });
    packed(word).is_some_and(|word| PACKED.binary_search(&word).is_ok())
}

/// `word`'s bytes and length as one number, for a word of at most 7 bytes.
fn packed(word: &str) -> Option<u64> {
    let bytes = word.as_bytes();
    let length = u8::try_from(bytes.len())
        .ok()
        .filter(|&length| length <= 7)?;
    let mut packed = [0; 8];
    packed[..bytes.len()].copy_from_slice(bytes);
    packed[7] = length;
    Some(u64::from_le_bytes(packed))
}

/// The terms of `text`: words (split on anything not alphanumeric, and on camel case and
/// letter/digit boundaries), lowercased and stemmed, stop words left out.
pub(crate) fn terms(text: &str) -> Vec<String> {
    let mut terms = Vec::new();
    for_each_term(text, |term| terms.push(term.to_owned()));
    terms
}

/// Calls `visit` with each term of `text` (see [`terms`]), without allocating per word.
pub(crate) fn for_each_term(text: &str, visit: impl FnMut(&str)) {
    each_term(text, false, visit);
}

/// [`for_each_term`], then each of `text`'s mixed-case words whole (see
/// [`for_each_compound`]): the terms a tool's text is indexed under, so the query `bibtex`
/// finds `BibTeX`.
pub(crate) fn for_each_indexed_term(text: &str, visit: impl FnMut(&str)) {
    each_term(text, true, visit);
}

fn each_term(text: &str, compounds: bool, mut visit: impl FnMut(&str)) {
    let mut stemmed = String::new();
    let mut each = |word: &str| {
        if !is_stop_word(word) {
            stem_into(word, &mut stemmed);
            visit(&stemmed);
        }
    };
    for_each_word(text, &mut each);
    if compounds {
        for_each_compound(text, &mut each);
    }
}

/// Calls `visit` with each word of `text` that [`for_each_word`] splits at a change of
/// case, whole and lowercased: `BibTeX` → `bibtex`, `OAuth2` → `oauth`. Brand names are
/// written both ways (`GitHub`, `github`), so a term has to exist for each.
pub(crate) fn for_each_compound(text: &str, mut visit: impl FnMut(&str)) {
    let mut word = String::new();
    for chunk in text.split(|c: char| !c.is_alphanumeric()) {
        for run in chunk.split(|c: char| !c.is_alphabetic()) {
            let mut chars = run.chars().peekable();
            let mut previous: Option<char> = None;
            let mut split = false;
            while let Some(current) = chars.next() {
                if let Some(previous) = previous {
                    let next_is_lower = chars.peek().is_some_and(|c| c.is_lowercase());
                    split |= case_change(previous, current, next_is_lower);
                }
                previous = Some(current);
            }
            if split {
                word.clear();
                word.extend(run.chars().flat_map(char::to_lowercase));
                visit(&word);
            }
        }
    }
}

/// Whether a word changes case between `previous` and `current`: `getHttp` at `H`, and
/// `HTTPResponse` at `R` (an upper-case letter followed by a lower-case one).
fn case_change(previous: char, current: char, next_is_lower: bool) -> bool {
    (previous.is_lowercase() && current.is_uppercase())
        || (previous.is_uppercase() && current.is_uppercase() && next_is_lower)
}

/// Lowercased words of `text`: `getHTTPResponse_v2` → `get`, `http`, `response`, `v`, `2`.
pub(crate) fn words(text: &str) -> Vec<String> {
    let mut words = Vec::new();
    for_each_word(text, |word| words.push(word.to_owned()));
    words
}

/// Calls `visit` with each lowercased word of `text` (see [`words`]).
pub(crate) fn for_each_word(text: &str, mut visit: impl FnMut(&str)) {
    let mut word = String::new();
    for chunk in text.split(|c: char| !c.is_alphanumeric()) {
        let mut chars = chunk.chars().peekable();
        let mut previous: Option<char> = None;
        while let Some(current) = chars.next() {
            if let Some(previous) = previous {
                let next_is_lower = chars.peek().is_some_and(|c| c.is_lowercase());
                let boundary = case_change(previous, current, next_is_lower)
                    || (previous.is_alphabetic() && current.is_numeric())
                    || (previous.is_numeric() && current.is_alphabetic());
                if boundary && !word.is_empty() {
                    visit(&word);
                    word.clear();
                }
            }
            if current.is_ascii() {
                word.push(current.to_ascii_lowercase());
            } else {
                word.extend(current.to_lowercase());
            }
            previous = Some(current);
        }
        if !word.is_empty() {
            visit(&word);
            word.clear();
        }
    }
}

/// A light English suffix stripper: plurals, `-ing`, `-ed`, `-ly`, `-ies`.
///
/// Deliberately conservative (short words are left alone): it only has to make a query and
/// a description agree, and an over-eager stemmer merges words that mean different things.
pub(crate) fn stem(word: &str) -> String {
    let mut stemmed = String::new();
    stem_into(word, &mut stemmed);
    stemmed
}

/// [`stem`] into `out` (cleared first), reusing its memory.
fn stem_into(word: &str, out: &mut String) {
    let (base, ending) = stem_parts(word);
    out.clear();
    out.push_str(base);
    out.push_str(ending);
}

/// The stem of `word` as a prefix of it and an ending to add (`queries` → `quer` + `y`).
fn stem_parts(word: &str) -> (&str, &'static str) {
    let length = word.chars().count();
    if length <= 3 || !word.is_ascii() {
        return (word, "");
    }
    if let Some(base) = word.strip_suffix("ies")
        && base.len() >= 2
    {
        return (base, "y");
    }
    for suffix in ["ing", "ed"] {
        if let Some(base) = word.strip_suffix(suffix)
            && base.len() >= 3
            && base.chars().any(is_vowel)
        {
            return (undouble(base), "");
        }
    }
    if let Some(base) = word.strip_suffix("ly")
        && base.len() >= 4
    {
        return (base, "");
    }
    if let Some(base) = word.strip_suffix("es")
        && ["s", "x", "z", "ch", "sh"]
            .iter()
            .any(|end| base.ends_with(end))
    {
        return (base, "");
    }
    if let Some(base) = word.strip_suffix('s')
        && !base.ends_with('s')
        && !base.ends_with('u')
        && !base.ends_with('i')
    {
        return (base, "");
    }
    (word, "")
}

fn is_vowel(c: char) -> bool {
    matches!(c, 'a' | 'e' | 'i' | 'o' | 'u' | 'y')
}

/// `runn` → `run`, `stopp` → `stop`; `ll`, `ss` and `zz` stay (`call`, `pass`), and so do
/// three-letter bases (`add`).
fn undouble(base: &str) -> &str {
    let bytes = base.as_bytes();
    if let [_, _, .., a, b] = bytes
        && a == b
        && !is_vowel(char::from(*a))
        && !matches!(a, b'l' | b's' | b'z')
    {
        return &base[..base.len() - 1];
    }
    base
}

/// The edit distance between `a` and `b` when it is at most `limit`, else `None`: the
/// fewest insertions, deletions, substitutions and swaps of two adjacent letters (optimal
/// string alignment), so the common typo `chnages` is one edit from `changes`.
/// `scratch` is working memory, reused across calls.
pub(crate) fn bounded_distance(
    a: &[u8],
    b: &[u8],
    limit: usize,
    scratch: &mut Vec<usize>,
) -> Option<usize> {
    if a.len().abs_diff(b.len()) > limit {
        return None;
    }
    let width = b.len() + 1;
    scratch.clear();
    scratch.resize(3 * width, 0);
    let (mut before, rest) = scratch.split_at_mut(width);
    let (mut previous, mut current) = rest.split_at_mut(width);
    for (j, cell) in previous.iter_mut().enumerate() {
        *cell = j;
    }
    for (i, ca) in a.iter().enumerate() {
        current[0] = i + 1;
        let mut row_min = current[0];
        for (j, cb) in b.iter().enumerate() {
            let substitution = previous[j] + usize::from(ca != cb);
            let mut best = substitution.min(previous[j + 1] + 1).min(current[j] + 1);
            if i > 0 && j > 0 && *ca == b[j - 1] && a[i - 1] == *cb {
                best = best.min(before[j - 1] + 1);
            }
            current[j + 1] = best;
            row_min = row_min.min(best);
        }
        if row_min > limit {
            return None;
        }
        std::mem::swap(&mut before, &mut previous);
        std::mem::swap(&mut previous, &mut current);
    }
    (previous[b.len()] <= limit).then_some(previous[b.len()])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stop_words_are_known_by_their_packed_bytes() {
        assert!(
            STOP_WORDS.iter().all(|word| word.len() <= 7),
            "packed() holds 7 bytes"
        );
        assert!(STOP_WORDS.iter().all(|word| is_stop_word(word)));
        for word in [
            "issue", "them", "thes", "th", "", "tools", "withdraw", "a\0",
        ] {
            assert!(!is_stop_word(word), "{word}");
        }
    }

    #[test]
    fn mixed_case_words_are_also_whole() {
        let mut whole = Vec::new();
        for_each_compound("BibTeX, OAuth2 and listOpenIssues; github v2", |w| {
            whole.push(w.to_owned());
        });
        assert_eq!(whole, ["bibtex", "oauth", "listopenissues"]);
    }

    #[test]
    fn words_split_on_case_and_separators() {
        assert_eq!(
            words("getHTTPResponse_v2"),
            ["get", "http", "response", "v", "2"]
        );
        assert_eq!(words("list-open_issues"), ["list", "open", "issues"]);
        assert_eq!(words("CalendarMonth"), ["calendar", "month"]);
    }

    #[test]
    fn stemming_meets_the_base_word() {
        for (word, expected) in [
            ("forecasting", "forecast"),
            ("forecasts", "forecast"),
            ("numbers", "number"),
            ("running", "run"),
            ("queries", "query"),
            ("processes", "process"),
            ("status", "status"),
            ("calls", "call"),
            ("sum", "sum"),
            ("adding", "add"),
        ] {
            assert_eq!(stem(word), expected, "{word}");
        }
    }

    #[test]
    fn distance_is_bounded() {
        let mut scratch = Vec::new();
        assert_eq!(
            bounded_distance(b"wether", b"weather", 1, &mut scratch),
            Some(1)
        );
        assert_eq!(
            bounded_distance(b"wheatre", b"weather", 1, &mut scratch),
            None
        );
        assert_eq!(bounded_distance(b"add", b"add", 0, &mut scratch), Some(0));
        assert_eq!(
            bounded_distance(b"kitten", b"sitting", 3, &mut scratch),
            Some(3)
        );
    }

    #[test]
    fn two_swapped_letters_are_one_typo() {
        let distance = |a: &str, b: &str, limit| {
            bounded_distance(a.as_bytes(), b.as_bytes(), limit, &mut Vec::new())
        };
        assert_eq!(distance("chnages", "changes", 1), Some(1));
        assert_eq!(distance("recieve", "receive", 1), Some(1));
        assert_eq!(distance("teh", "the", 1), Some(1));
        // A swap and a substitution are two.
        assert_eq!(distance("chnagez", "changes", 1), None);
        assert_eq!(distance("chnagez", "changes", 2), Some(2));
    }
}
