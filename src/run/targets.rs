//! The targets of a run of several drives: `--target` repeated on the command line, or a
//! targets file (YAML: a list of targets, each with an optional label, region and its own
//! write confirmation), as [`TargetChoice`]s. Each write confirmation must name its own
//! target; two targets of one run must differ in label.
//!
//! ```yaml
//! - path: /dev/nvme1n1
//!   label: bay-1
//!   destroy_data: /dev/nvme1n1   # writes to it may destroy its data
//! - path: /dev/nvme2n1
//!   label: bay-2
//!   destroy_data: /dev/nvme2n1
//!   size: 100GiB                 # the region's size (a plain run: from its offset)
//!   offset: 1GiB                 # a plain run's start in the target
//! - path: /dev/sdb
//!   host: root@lab2:2222         # on another host, over ssh (its own guard decides)
//! ```

use std::path::{Path, PathBuf};

use serde::{de, Deserialize, Deserializer};
use thiserror::Error;

use super::choice::{TargetChoice, Where};
use crate::remote::Host;
use crate::units;

/// The largest targets file read: far more than a shelf of drives needs.
pub const MAX_TARGETS_FILE: u64 = 1 << 20;

/// The most targets one run may have.
pub const MAX_TARGETS: usize = 256;

/// A target as a run of several asks for it.
#[derive(Debug, Clone, Default)]
pub struct TargetSpec {
    pub choice: TargetChoice,
    /// Where a plain run's region starts in this target (`--offset` for all when absent).
    pub offset: Option<u64>,
}

/// Why the targets cannot be used.
#[derive(Debug, Error)]
pub enum TargetsError {
    #[error(transparent)]
    Input(#[from] crate::user_file::InputError),
    #[error("{}:{line}:{column}: {message}", .path.display())]
    At {
        path: PathBuf,
        line: usize,
        column: usize,
        message: String,
    },
    #[error("{}: {message}", .path.display())]
    File { path: PathBuf, message: String },
    #[error("--destroy-data {} names none of the targets", .0.display())]
    UnusedConfirmation(PathBuf),
    #[error("{} is given twice; a run writes each target once", .0.display())]
    Twice(PathBuf),
    #[error("at most {MAX_TARGETS} targets, not {0}")]
    TooMany(usize),
    #[error(
        "two targets are labelled '{0}': each drive's lines, charts and summary need their own"
    )]
    SameLabel(String),
    #[error("'all' is the label of every drive together: give this target another")]
    ReservedLabel,
    #[error("{hosts} --host for {targets} --target: give one --host for every target, or one per --target in the same order")]
    HostCount { hosts: usize, targets: usize },
}

/// A targets file's `host:` (absent or null: this host).
fn where_of<'de, D: Deserializer<'de>>(d: D) -> Result<Where, D::Error> {
    match Option::<String>::deserialize(d)? {
        None => Ok(Where::Here),
        Some(s) => s
            .parse::<Host>()
            .map(|h| Where::on(&h))
            .map_err(de::Error::custom),
    }
}

fn size_opt<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Raw {
        N(u64),
        S(String),
    }
    match Option::<Raw>::deserialize(d)? {
        None => Ok(None),
        Some(Raw::N(n)) => Ok(Some(n)),
        Some(Raw::S(s)) => units::parse_size(&s).map(Some).map_err(de::Error::custom),
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Entry {
    path: PathBuf,
    label: Option<String>,
    destroy_data: Option<PathBuf>,
    #[serde(default, deserialize_with = "size_opt")]
    size: Option<u64>,
    #[serde(default, deserialize_with = "size_opt")]
    offset: Option<u64>,
    #[serde(default, deserialize_with = "where_of")]
    host: Where,
}

/// The same file or device: equal paths, or paths that resolve to the same one.
pub fn same_target(a: &Path, b: &Path) -> bool {
    a == b
        || matches!(
            (std::fs::canonicalize(a), std::fs::canonicalize(b)),
            (Ok(x), Ok(y)) if x == y
        )
}

/// Reads a targets file.
pub fn read_file(path: &Path) -> Result<Vec<TargetSpec>, TargetsError> {
    let text = crate::user_file::read_text(path, MAX_TARGETS_FILE, "targets file")?;
    let entries: Vec<Entry> = serde_yaml::from_str(&text).map_err(|e| {
        let (line, column) = crate::yaml_pos::of_error(&e);
        let message = e.to_string();
        // serde_yaml ends its message with the place, which the error puts first.
        let message = match message.rfind(" at line ") {
            Some(i) => message[..i].to_string(),
            None => message,
        };
        TargetsError::At {
            path: path.to_path_buf(),
            line,
            column,
            message,
        }
    })?;
    let file_err = |message: String| TargetsError::File {
        path: path.to_path_buf(),
        message,
    };
    if entries.is_empty() {
        return Err(file_err("it lists no target".into()));
    }
    let mut out = Vec::with_capacity(entries.len());
    for (i, e) in entries.into_iter().enumerate() {
        // A remote target's confirmation is checked by the guard on its own host.
        if let (Some(c), Where::Here) = (&e.destroy_data, &e.host) {
            if !same_target(c, &e.path) {
                return Err(file_err(format!(
                    "target {} ({}): destroy_data names {}, not this target",
                    i + 1,
                    e.path.display(),
                    c.display()
                )));
            }
        }
        if e.label.as_deref().is_some_and(|l| l.trim().is_empty()) {
            return Err(file_err(format!(
                "target {} ({}): the label is empty",
                i + 1,
                e.path.display()
            )));
        }
        out.push(TargetSpec {
            choice: TargetChoice {
                path: Some(e.path),
                size: e.size,
                destroy_data: e.destroy_data,
                create_missing: false,
                label: e.label,
                at: e.host,
            },
            offset: e.offset,
        });
    }
    check(&out)?;
    Ok(out)
}

/// The targets of `--target` repeated, each with the `--destroy-data` that names it
/// (one target: its one `--destroy-data`, whatever it names, so the guard says which
/// device it names instead), on the `--host` given for all or for each in order (none:
/// this host). Hosts without targets: the built-in test file of each.
pub fn from_args(
    targets: &[PathBuf],
    confirmations: &[PathBuf],
    hosts: &[Host],
    size: Option<u64>,
) -> Result<Vec<TargetSpec>, TargetsError> {
    let at = |i: usize| match hosts {
        [] => Where::Here,
        [h] => Where::on(h),
        hs => hs.get(i).map_or(Where::Here, Where::on),
    };
    if targets.is_empty() {
        let out: Vec<TargetSpec> = hosts
            .iter()
            .map(|h| TargetSpec {
                choice: TargetChoice {
                    size,
                    at: Where::on(h),
                    ..TargetChoice::default()
                },
                offset: None,
            })
            .collect();
        check(&out)?;
        return Ok(out);
    }
    if hosts.len() > 1 && hosts.len() != targets.len() {
        return Err(TargetsError::HostCount {
            hosts: hosts.len(),
            targets: targets.len(),
        });
    }
    // One target: its one confirmation, whatever it names (the guard says which device it
    // names instead).
    let one = matches!((targets, confirmations), ([_], [_]));
    for c in confirmations.iter().filter(|_| !one) {
        if !targets.iter().any(|t| same_target(t, c)) {
            return Err(TargetsError::UnusedConfirmation(c.clone()));
        }
    }
    let out: Vec<TargetSpec> = targets
        .iter()
        .enumerate()
        .map(|(i, t)| TargetSpec {
            choice: TargetChoice {
                path: Some(t.clone()),
                size,
                destroy_data: if one {
                    confirmations.first().cloned()
                } else {
                    confirmations.iter().find(|c| same_target(t, c)).cloned()
                },
                at: at(i),
                ..TargetChoice::default()
            },
            offset: None,
        })
        .collect();
    if !one {
        check(&out)?;
    }
    Ok(out)
}

/// Rules for every list of targets: not too many, none twice.
fn check(targets: &[TargetSpec]) -> Result<(), TargetsError> {
    if targets.len() > MAX_TARGETS {
        return Err(TargetsError::TooMany(targets.len()));
    }
    let label = |t: &TargetSpec| {
        t.choice.label.clone().or_else(|| {
            let p = t
                .choice
                .path
                .as_ref()
                .map_or_else(|| "built-in".to_string(), |p| p.display().to_string());
            match &t.choice.at {
                Where::Remote(r) => Some(format!("{}:{p}", r.host)),
                Where::Here => t.choice.path.as_ref().map(|_| p),
            }
        })
    };
    for (i, a) in targets.iter().enumerate() {
        for b in &targets[..i] {
            // Paths on one host (a remote one's as written: it is not resolved here).
            let twice = match (&a.choice.path, &b.choice.path, &a.choice.at, &b.choice.at) {
                (Some(pa), Some(pb), Where::Here, Where::Here) => same_target(pa, pb),
                (Some(pa), Some(pb), Where::Remote(ha), Where::Remote(hb)) => {
                    ha.host == hb.host && pa == pb
                }
                _ => false,
            };
            if twice {
                return Err(TargetsError::Twice(
                    a.choice.path.clone().unwrap_or_default(),
                ));
            }
        }
        let la = label(a);
        if la.as_deref() == Some("all") {
            return Err(TargetsError::ReservedLabel);
        }
        if let Some(l) = la.filter(|l| targets[..i].iter().any(|b| label(b).as_deref() == Some(l)))
        {
            return Err(TargetsError::SameLabel(l));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(text: &str) -> (tempfile::TempDir, PathBuf) {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("shelf.yaml");
        std::fs::write(&p, text).unwrap();
        (d, p)
    }

    #[test]
    fn a_targets_file_gives_each_target_its_label_region_and_confirmation() {
        let (_d, p) = write(
            "- path: /dev/loop0\n  label: bay-1\n  destroy_data: /dev/loop0\n  size: 1GiB\n  offset: 4k\n- path: /tmp/b.bin\n",
        );
        let t = read_file(&p).unwrap();
        assert_eq!(t.len(), 2);
        assert_eq!(t[0].choice.label.as_deref(), Some("bay-1"));
        assert_eq!(t[0].choice.destroy_data, Some(PathBuf::from("/dev/loop0")));
        assert_eq!((t[0].choice.size, t[0].offset), (Some(1 << 30), Some(4096)));
        assert_eq!(t[1].choice.label, None);
        assert_eq!(t[1].choice.destroy_data, None);
    }

    #[test]
    fn a_bad_targets_file_says_where_and_why() {
        let cases: [(&str, &[&str]); 5] = [
            (
                "- path: /dev/loop0\n  lable: x\n",
                &["shelf.yaml:2:3:", "unknown field `lable`"],
            ),
            (
                "- path: /dev/loop0\n  size: lots\n",
                &["shelf.yaml:1:3:", "'lots' is not a size"],
            ),
            (
                "- path: /dev/loop0\n  destroy_data: /dev/loop1\n",
                &["destroy_data names /dev/loop1, not this target"],
            ),
            ("[]\n", &["lists no target"]),
            ("- path: /tmp/a\n- path: /tmp/a\n", &["given twice"]),
        ];
        for (text, said) in cases {
            let (_d, p) = write(text);
            let e = read_file(&p).unwrap_err().to_string();
            assert!(said.iter().all(|s| e.contains(s)), "{e}");
            // The place is said once, first: not again at the end as serde_yaml puts it.
            assert!(!e.contains(" at line"), "{e}");
        }
    }

    #[test]
    fn each_confirmation_goes_to_the_target_it_names() {
        let t = from_args(
            &["/dev/loop0".into(), "/dev/loop1".into()],
            &["/dev/loop1".into()],
            &[],
            None,
        )
        .unwrap();
        assert_eq!(t[0].choice.destroy_data, None);
        assert_eq!(t[1].choice.destroy_data, Some(PathBuf::from("/dev/loop1")));
        let e = from_args(
            &["/dev/loop0".into(), "/dev/loop1".into()],
            &["/dev/loop2".into()],
            &[],
            None,
        )
        .unwrap_err();
        assert!(e.to_string().contains("names none of the targets"), "{e}");
    }
}
