//! A job file's `include` lines resolved as fio 3.33 resolves them (init.c
//! `__parse_jobs_ini`) and their text put in their place, so the text fio gets on its
//! standard input (where fio could not follow an include: it reads the name as the text)
//! is the whole job, and drivescope's reading, the write guard and the cage see every
//! option of it. fio takes the name after `include` and one more character; a name that is
//! not there from the current folder is looked for beside the file that includes it. An
//! included file holds options only (fio: "No new sections in included files").

use std::path::{Path, PathBuf};

use super::error::FioError;
use super::parse::{content, refuse_file};
use super::refusal::Refusal;

/// How deep includes nest before the file is refused (fio would recurse until it fails).
const DEPTH_MAX: usize = 16;

/// A job file's text with its includes in place, and for each of its lines the line of
/// the job file it comes from (an included line: its `include` line's).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Inlined {
    pub text: String,
    /// 1-based: `origin[n - 1]` is the job file's line of the text's line `n`.
    pub origin: Vec<usize>,
}

impl Inlined {
    /// A refusal's line in the text read as the job file's own line.
    pub fn map_error(&self, e: FioError) -> FioError {
        match e {
            FioError::Unsafe {
                job,
                line: Some(n),
                why,
            } => FioError::Unsafe {
                job,
                line: Some(self.origin.get(n.wrapping_sub(1)).copied().unwrap_or(n)),
                why,
            },
            e => e,
        }
    }
}

/// `text`, the job file at `path` as the user named it, with every include inside a
/// section replaced by the included file's lines (nested ones too). A line outside any
/// section is left for fio's and drivescope's own refusal of it.
pub fn inline(text: &str, path: &Path) -> Result<Inlined, FioError> {
    let mut out = Inlined {
        text: String::with_capacity(text.len()),
        origin: Vec::new(),
    };
    let mut in_section = false;
    for (n, raw) in text.lines().enumerate() {
        let line = content(raw);
        in_section |= line.starts_with('[');
        match include_name(line) {
            Some(name) if in_section => {
                let name = name.map_err(|why| refuse_file(Some(n + 1), why))?;
                let mut lines = Vec::new();
                included(path, name, 1, &mut lines).map_err(|e| match e {
                    Nested::Refused(why) => refuse_file(Some(n + 1), why),
                    Nested::Input(e) => FioError::JobFile(e),
                })?;
                for l in lines {
                    out.text.push_str(&l);
                    out.text.push('\n');
                    out.origin.push(n + 1);
                }
            }
            _ => {
                out.text.push_str(raw);
                out.text.push('\n');
                out.origin.push(n + 1);
            }
        }
    }
    Ok(out)
}

/// Why an included file could not be put in place.
enum Nested {
    Refused(Refusal),
    Input(crate::user_file::InputError),
}

/// The name an `include` line gives (fio: every line that starts with `include`, the name
/// from its ninth character on), or `None` for another line.
fn include_name(line: &str) -> Option<Result<&str, Refusal>> {
    if !line.starts_with("include") {
        return None;
    }
    Some(
        line.get(8..)
            .filter(|n| !n.is_empty())
            .ok_or(Refusal::IncludeNoName),
    )
}

/// Where fio opens `name`, included by the file at `from`: the name itself when something
/// is there (from the current folder), else beside `from` (all of `from` up to its last
/// `/`, then the name), else the name (which then fails to open). The places looked at.
fn resolve(from: &Path, name: &str) -> (PathBuf, Vec<PathBuf>) {
    let plain = PathBuf::from(name);
    if std::fs::symlink_metadata(&plain).is_ok() {
        return (plain, vec![]);
    }
    let from = from.to_string_lossy();
    match from.rfind('/') {
        Some(i) => {
            let beside = PathBuf::from(format!("{}{name}", &from[..=i]));
            (beside.clone(), vec![plain, beside])
        }
        None => (plain.clone(), vec![plain]),
    }
}

/// The lines of the file `name` included by `from`, its own includes in place.
fn included(from: &Path, name: &str, depth: usize, out: &mut Vec<String>) -> Result<(), Nested> {
    if depth > DEPTH_MAX {
        return Err(Nested::Refused(Refusal::IncludeDepth { max: DEPTH_MAX }));
    }
    let (path, tried) = resolve(from, name);
    if !tried.is_empty() && !tried.iter().any(|p| p.exists()) {
        return Err(Nested::Refused(Refusal::IncludeMissing {
            name: name.to_string(),
            tried,
        }));
    }
    let text = crate::user_file::read_text(&path, crate::user_file::MIB, "fio include file")
        .map_err(Nested::Input)?;
    for raw in text.lines() {
        let line = content(raw);
        if line.starts_with('[') {
            return Err(Nested::Refused(Refusal::IncludeSection {
                path: path.clone(),
            }));
        }
        match include_name(line) {
            Some(inner) => {
                let inner = inner.map_err(Nested::Refused)?;
                included(&path, inner, depth + 1, out)?;
            }
            None => out.push(raw.to_string()),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn includes_are_put_in_place_from_beside_the_including_file() {
        let dir = tempfile::tempdir().unwrap();
        let sub = dir.path().join("sub");
        std::fs::create_dir(&sub).unwrap();
        std::fs::write(sub.join("common.inc"), "bs=8k ; c\ninclude more.inc\n").unwrap();
        std::fs::write(sub.join("more.inc"), "iodepth=4\n").unwrap();
        let job = dir.path().join("job.fio");
        let text = "[global]\ninclude sub/common.inc\n[a]\nrw=read\n";
        let got = inline(text, &job).unwrap();
        assert_eq!(got.text, "[global]\nbs=8k ; c\niodepth=4\n[a]\nrw=read\n");
        assert_eq!(got.origin, [1, 2, 2, 3, 4]);
        // A refusal at a line of the text is at the job file's line.
        let e = got.map_error(refuse_file(Some(4), Refusal::NoJob));
        assert!(matches!(e, FioError::Unsafe { line: Some(3), .. }), "{e}");
    }

    #[test]
    fn a_missing_include_a_section_in_one_and_a_loop_are_drivescopes_refusals() {
        let dir = tempfile::tempdir().unwrap();
        let job = dir.path().join("job.fio");
        let refusal = |text: &str| match inline(text, &job) {
            Err(FioError::Unsafe { line, why, .. }) => (line, why),
            other => panic!("{other:?}"),
        };
        let (line, why) = refusal("[a]\nrw=read\ninclude nothere.inc\n");
        assert_eq!(line, Some(3));
        assert!(
            matches!(&why, Refusal::IncludeMissing { name, tried }
                if name == "nothere.inc" && tried.len() == 2 && tried[1] == dir.path().join("nothere.inc")),
            "{why:?}"
        );
        assert!(why.to_string().contains("nothere.inc"), "{why}");
        std::fs::write(dir.path().join("sec.inc"), "[b]\n").unwrap();
        let (_, why) = refusal("[a]\ninclude sec.inc\n");
        assert!(matches!(why, Refusal::IncludeSection { .. }), "{why:?}");
        std::fs::write(dir.path().join("self.inc"), "include self.inc\n").unwrap();
        let (_, why) = refusal("[a]\ninclude self.inc\n");
        assert_eq!(why, Refusal::IncludeDepth { max: DEPTH_MAX });
        assert_eq!(refusal("[a]\ninclude\n").1, Refusal::IncludeNoName);
        // Outside a section: left as it is, for the refusal of any such line.
        assert_eq!(
            inline("include x\n[a]\n", &job).unwrap().text,
            "include x\n[a]\n"
        );
    }
}
