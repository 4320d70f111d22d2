//! Positions for errors in the small flat YAML files (keys.yaml, themes): serde_yaml knows
//! where a syntax or type error is, but not where a value it accepted turned out invalid
//! (a key name, a colour), so those are found in the text by their top-level key.

/// Line and column (1-based) of a serde_yaml error, or the file's start when it has none.
pub fn of_error(e: &serde_yaml::Error) -> (usize, usize) {
    e.location()
        .map(|l| (l.line(), l.column()))
        .unwrap_or((1, 1))
}

/// The line (1-based) of the top-level `key:` in `text`, if it is there.
pub fn key_line(text: &str, key: &str) -> Option<usize> {
    text.lines()
        .position(|l| {
            l.strip_prefix(key)
                .is_some_and(|rest| rest.trim_start().starts_with(':'))
        })
        .map(|i| i + 1)
}

/// Line and column (1-based) of `value` under the top-level `key:` in `text`: the first
/// occurrence at or after the key's line; the key itself when the value is not found.
pub fn of_value(text: &str, key: &str, value: &str) -> (usize, usize) {
    let lines: Vec<&str> = text.lines().collect();
    let key_line = lines.iter().position(|l| {
        l.strip_prefix(key)
            .is_some_and(|rest| rest.trim_start().starts_with(':'))
    });
    let Some(k) = key_line else {
        return (1, 1);
    };
    if !value.is_empty() {
        for (i, l) in lines.iter().enumerate().skip(k) {
            if i > k && !l.starts_with([' ', '\t', '-']) {
                break;
            }
            let from = if i == k { key.len() } else { 0 };
            if let Some(c) = l.get(from..).and_then(|s| s.find(value)) {
                return (i + 1, from + c + 1);
            }
        }
    }
    (k + 1, 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_values_under_their_key() {
        let text = "quit: q\nhelp: [f1, hyper-h]\nstart:\n  - enter\n  - bogus\n";
        assert_eq!(of_value(text, "help", "hyper-h"), (2, 12));
        assert_eq!(of_value(text, "start", "bogus"), (5, 5));
        assert_eq!(of_value(text, "quit", "q"), (1, 7));
        assert_eq!(of_value(text, "nope", "q"), (1, 1));
        assert_eq!(of_value(text, "quit", "zzz"), (1, 1));
        assert_eq!(key_line(text, "start"), Some(3));
        assert_eq!(key_line(text, "quit"), Some(1));
        assert_eq!(key_line(text, "qui"), None);
    }
}
