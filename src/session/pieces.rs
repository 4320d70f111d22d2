//! The session file cut into pieces that keep their line numbers: YAML documents (at
//! `---`), top-level keys, list items. What does not parse is then named by file:line:column.

/// A slice of the file and the line (1-based) it starts on.
#[derive(Clone, Copy)]
pub(super) struct Piece<'a> {
    pub text: &'a str,
    pub line: usize,
}

/// Line and column (1-based) just after `prefix`.
pub(super) fn line_col(prefix: &[u8]) -> (usize, usize) {
    let line = prefix.iter().filter(|&&b| b == b'\n').count() + 1;
    let start = prefix
        .iter()
        .rposition(|&b| b == b'\n')
        .map(|i| i + 1)
        .unwrap_or(0);
    let col = String::from_utf8_lossy(&prefix[start..]).chars().count() + 1;
    (line, col)
}

pub(super) fn is_blank(text: &str) -> bool {
    text.lines().all(|l| {
        let t = l.trim();
        t.is_empty() || t.starts_with('#')
    })
}

fn is_separator(line: &str) -> bool {
    let l = line.trim_end_matches(['\n', '\r']);
    l == "---" || l.starts_with("--- ") || l.starts_with("---\t") || l == "..."
}

/// Splits a YAML stream at its `---` lines.
pub(super) fn split_documents(text: &str) -> Vec<Piece<'_>> {
    let mut docs = Vec::new();
    let mut start = 0usize;
    let mut start_line = 1usize;
    let mut offset = 0usize;
    for (line_no, line) in (1usize..).zip(text.split_inclusive('\n')) {
        if line.starts_with("--") && is_separator(line) {
            docs.push(Piece {
                text: &text[start..offset],
                line: start_line,
            });
            start = offset + line.len();
            start_line = line_no + 1;
        }
        offset += line.len();
    }
    docs.push(Piece {
        text: &text[start..],
        line: start_line,
    });
    docs
}

/// Cuts `piece` where `starts(line)` holds; text before the first cut is its own part.
pub(super) fn split_where<'a>(piece: Piece<'a>, starts: impl Fn(&str) -> bool) -> Vec<Piece<'a>> {
    let mut parts = Vec::new();
    let mut start = 0usize;
    let mut start_line = piece.line;
    let mut offset = 0usize;
    for (line_no, line) in (piece.line..).zip(piece.text.split_inclusive('\n')) {
        if starts(line) && offset > start {
            parts.push(Piece {
                text: &piece.text[start..offset],
                line: start_line,
            });
            start = offset;
            start_line = line_no;
        }
        offset += line.len();
    }
    if offset > start {
        parts.push(Piece {
            text: &piece.text[start..],
            line: start_line,
        });
    }
    parts
}

pub(super) fn top_level_key(line: &str) -> Option<&str> {
    let first = line.chars().next()?;
    if first.is_whitespace() || first == '-' || first == '#' {
        return None;
    }
    line.split_once(':').map(|(k, _)| k.trim())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn documents_split_at_separators_with_their_lines() {
        let docs = split_documents("a: 1\n---\nb: 2\nc: 3\n--- # x\nd: 4");
        let lines: Vec<usize> = docs.iter().map(|d| d.line).collect();
        assert_eq!(lines, vec![1, 3, 6]);
        assert_eq!(docs[1].text, "b: 2\nc: 3\n");
    }
}
