//! Hostile input, bounded: the theme and key-binding parsers get thousands of mutated inputs
//! (truncations, byte flips, spliced junk, duplicated lines) built from real files, and none
//! may panic. Deterministic (seeded), a few seconds in all. The session reader's hostile
//! input is in parsers_proptest.rs.

use std::panic::{catch_unwind, AssertUnwindSafe};

use drivescope::app::Keymap;
use drivescope::ui::theme::Theme;

/// xorshift64*: a seeded generator for mutations.
struct Gen(u64);

impl Gen {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

const JUNK: &[&str] = &[
    "",
    "\0",
    "~",
    "[",
    "]",
    "{",
    "}",
    ": :",
    "- -",
    "&a",
    "*a",
    "!!binary",
    "1e400",
    "-1",
    "18446744073709551616",
    "é",
    "\u{202e}",
    "\t",
    "'",
    "\"",
    "#",
    "? ",
    "---",
    "...",
    "%YAML 9",
    "<<: *a",
    "[[[[[[[[",
    "{a: {b: {c: {d:",
];

fn mutations(text: &str, g: &mut Gen, n: usize) -> Vec<String> {
    let bytes = text.as_bytes();
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        let m = match i % 5 {
            // Truncated anywhere (on a char boundary).
            0 => {
                let mut cut = g.below(bytes.len() + 1);
                while !text.is_char_boundary(cut) {
                    cut -= 1;
                }
                text[..cut].to_string()
            }
            // A byte flipped (lossily back to text).
            1 => {
                let mut b = bytes.to_vec();
                if !b.is_empty() {
                    let at = g.below(b.len());
                    b[at] ^= 1 << g.below(8);
                }
                String::from_utf8_lossy(&b).into_owned()
            }
            // Junk spliced into a line.
            2 => {
                let mut l: Vec<String> = lines.iter().map(|s| s.to_string()).collect();
                if !l.is_empty() {
                    let at = g.below(l.len());
                    let j = JUNK[g.below(JUNK.len())];
                    let pos = g.below(l[at].len() + 1);
                    let pos = (0..=pos)
                        .rev()
                        .find(|p| l[at].is_char_boundary(*p))
                        .unwrap_or(0);
                    l[at].insert_str(pos, j);
                }
                l.join("\n")
            }
            // A value replaced by junk.
            3 => {
                let mut l: Vec<String> = lines.iter().map(|s| s.to_string()).collect();
                if !l.is_empty() {
                    let at = g.below(l.len());
                    let j = JUNK[g.below(JUNK.len())];
                    if let Some((k, _)) = l[at].split_once(':') {
                        l[at] = format!("{k}: {j}");
                    }
                }
                l.join("\n")
            }
            // Lines duplicated or dropped.
            _ => {
                let mut l: Vec<&str> = lines.clone();
                if !l.is_empty() {
                    let at = g.below(l.len());
                    if g.next().is_multiple_of(2) {
                        l.insert(at, lines[g.below(lines.len())]);
                    } else {
                        l.remove(at);
                    }
                }
                l.join("\n")
            }
        };
        out.push(m);
    }
    out
}

fn never_panics(name: &str, inputs: Vec<String>, parse: impl Fn(&str)) {
    for (i, input) in inputs.iter().enumerate() {
        let r = catch_unwind(AssertUnwindSafe(|| parse(input)));
        assert!(r.is_ok(), "{name}: input {i} panicked:\n{input}");
    }
}

#[test]
fn theme_parser_survives_mutated_themes() {
    let mut g = Gen(0x7E4E);
    for entry in std::fs::read_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/themes")).unwrap() {
        let path = entry.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(
            Theme::from_yaml(&text, "t.yaml").is_ok(),
            "{} parses",
            path.display()
        );
        never_panics("theme", mutations(&text, &mut g, 1500), |t| {
            let _ = Theme::from_yaml(t, "t.yaml");
        });
    }
}

#[test]
fn keymap_parser_survives_mutated_key_files() {
    let text = "quit: [q, ctrl-q]\nsnapshot: w\nhelp: [\"?\", f1]\nstart: enter\npause: space\n\
                next_tab: [tab, right]\nseek_back: \"[\"\n";
    assert!(Keymap::from_yaml(text, "keys.yaml").is_ok());
    let mut g = Gen(0x4E75);
    never_panics("keys", mutations(text, &mut g, 4000), |t| {
        let _ = Keymap::from_yaml(t, "keys.yaml");
    });
}
