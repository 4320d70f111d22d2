//! Finds where a field path (`phases[2].workload.bs`) sits in a preset's YAML text, for
//! errors found after parsing (cross-field rules). It reads block-style YAML by indentation,
//! and keys inside a one-line flow mapping; where it cannot go deeper it answers with the
//! deepest place it found.

/// One step of a field path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Seg {
    Key(String),
    Index(usize),
}

/// Prints a path as `phases[2].workload.bs`.
pub fn format_path(path: &[Seg]) -> String {
    let mut out = String::new();
    for seg in path {
        match seg {
            Seg::Key(k) => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(k);
            }
            Seg::Index(i) => out.push_str(&format!("[{i}]")),
        }
    }
    out
}

/// A line of the scope being searched: its 0-based line number, the column its content
/// starts at, and the content.
#[derive(Clone)]
struct Line<'a> {
    no: usize,
    col: usize,
    text: &'a str,
}

fn significant(text: &str) -> bool {
    let t = text.trim_start();
    !t.is_empty() && !t.starts_with('#')
}

/// 1-based (line, column) of `path`'s value in `text` (of its key when the value is on
/// lines of its own).
pub fn locate(text: &str, path: &[Seg]) -> (usize, usize) {
    find(text, path, false)
}

/// 1-based (line, column) of `path`'s last key in `text`.
pub fn locate_key(text: &str, path: &[Seg]) -> (usize, usize) {
    find(text, path, true)
}

fn find(text: &str, path: &[Seg], key_only: bool) -> (usize, usize) {
    let mut scope: Vec<Line> = text
        .lines()
        .enumerate()
        .filter(|(_, l)| significant(l))
        .map(|(no, l)| {
            let col = l.len() - l.trim_start().len();
            Line {
                no,
                col,
                text: l.trim_start(),
            }
        })
        .collect();
    let mut best = scope.first().map(|l| (l.no, l.col)).unwrap_or((0, 0));
    for (depth, seg) in path.iter().enumerate() {
        let Some(base) = scope.first().map(|l| l.col) else {
            break;
        };
        match seg {
            Seg::Key(key) => {
                let prefix = format!("{key}:");
                let Some(pos) = scope
                    .iter()
                    .position(|l| l.col == base && l.text.starts_with(&prefix))
                else {
                    break;
                };
                let line = scope[pos].clone();
                best = (line.no, line.col);
                let rest = &line.text[prefix.len()..];
                let value = rest.trim_start();
                let last = depth + 1 == path.len();
                if last && key_only {
                    break;
                }
                if significant(value) {
                    let value_col = line.col + prefix.len() + (rest.len() - value.len());
                    best = (line.no, value_col);
                    // A key inside a flow mapping on the same line.
                    if let Some(Seg::Key(next)) = path.get(depth + 1) {
                        if let Some(i) = value.find(&format!("{next}:")) {
                            best = (line.no, value_col + i);
                        }
                    }
                    break;
                }
                scope = scope[pos + 1..]
                    .iter()
                    .take_while(|l| l.col > base || (l.col == base && l.text.starts_with('-')))
                    .cloned()
                    .collect();
            }
            Seg::Index(index) => {
                let items: Vec<usize> = scope
                    .iter()
                    .enumerate()
                    .filter(|(_, l)| l.col == base && (l.text == "-" || l.text.starts_with("- ")))
                    .map(|(i, _)| i)
                    .collect();
                let Some(&start) = items.get(*index) else {
                    break;
                };
                let end = items.get(index + 1).copied().unwrap_or(scope.len());
                let dash = scope[start].clone();
                best = (dash.no, dash.col);
                let after = dash.text[1..].trim_start();
                let mut item = Vec::new();
                if significant(after) {
                    let col = dash.col + (dash.text.len() - after.len());
                    best = (dash.no, col);
                    item.push(Line {
                        no: dash.no,
                        col,
                        text: after,
                    });
                }
                item.extend(scope[start + 1..end].iter().cloned());
                scope = item;
            }
        }
    }
    (best.0 + 1, best.1 + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn k(s: &str) -> Seg {
        Seg::Key(s.to_string())
    }

    fn i(n: usize) -> Seg {
        Seg::Index(n)
    }

    const DOC: &str = "id: x\n# comment\nphases:\n  - name: a\n    workload:\n      rw: read\n      bs: 4k\n  - name: b\n    workload: {rw: write, bs: 8k}\n    rate: 50% of a\n";

    #[test]
    fn finds_block_and_flow_keys() {
        assert_eq!(locate(DOC, &[k("id")]), (1, 5));
        assert_eq!(locate_key(DOC, &[k("id")]), (1, 1));
        assert_eq!(locate_key(DOC, &[k("phases"), i(1), k("rate")]), (10, 5));
        assert_eq!(
            locate(DOC, &[k("phases"), i(0), k("workload"), k("bs")]),
            (7, 11)
        );
        assert_eq!(locate(DOC, &[k("phases"), i(1), k("name")]), (8, 11));
        assert_eq!(locate(DOC, &[k("phases"), i(1), k("rate")]), (10, 11));
        assert_eq!(
            locate(DOC, &[k("phases"), i(1), k("workload"), k("bs")]),
            (9, 27)
        );
        // Missing keys give the deepest place found.
        assert_eq!(locate(DOC, &[k("phases"), i(1), k("sweep")]), (8, 5));
        assert_eq!(locate(DOC, &[k("phases"), i(7)]), (3, 1));
        assert_eq!(
            format_path(&[k("phases"), i(2), k("workload"), k("bs")]),
            "phases[2].workload.bs"
        );
    }
}
