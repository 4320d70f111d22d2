//! The nearest valid word to a misspelt one (edit distance), for "did you mean" hints.

/// Levenshtein distance between two strings, by characters.
pub fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur = vec![0; b.len() + 1];
    for (i, ca) in a.chars().enumerate() {
        cur[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cost = usize::from(ca != *cb);
            cur[j + 1] = (prev[j] + cost).min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()]
}

/// The candidate closest to `word`, if it is close enough to be a likely misspelling (at
/// most a third of the word's length in edits, and at least one).
pub fn nearest<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<String> {
    let limit = (word.chars().count() / 3).max(1);
    let lower = word.to_ascii_lowercase();
    candidates
        .into_iter()
        .map(|c| (distance(&lower, &c.to_ascii_lowercase()), c))
        .filter(|(d, _)| *d <= limit)
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_nearest_key() {
        assert_eq!(distance("iodepht", "iodepth"), 2);
        assert_eq!(distance("", "abc"), 3);
        let keys = [
            "rw",
            "rwmixread",
            "bs",
            "bssplit",
            "iodepth",
            "jobs",
            "region",
        ];
        assert_eq!(nearest("iodepht", keys).as_deref(), Some("iodepth"));
        assert_eq!(nearest("bz", keys).as_deref(), Some("bs"));
        assert_eq!(nearest("job", keys).as_deref(), Some("jobs"));
        assert_eq!(nearest("Region", keys).as_deref(), Some("region"));
        assert_eq!(nearest("numjobs", keys), None);
    }
}
