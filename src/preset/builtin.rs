//! The presets: built-ins embedded from `presets/` with `include_str!`, and the user's own in
//! `$XDG_CONFIG_HOME/drivescope/presets/` (else `~/.config/drivescope/presets/`), which
//! replace a built-in of the same id.

use std::path::{Path, PathBuf};

use super::error::PresetError;
use super::model::Preset;
use super::parse::{parse_file, parse_str};
use super::suggest;

/// The built-in presets' files, in the order `presets list` shows them: the quick look a
/// new user meets first, then preconditioning, then the published methods.
pub const BUILTIN_FILES: [(&str, &str); 32] = [
    ("quick-look", include_str!("../../presets/quick-look.yaml")),
    ("snia-wipc", include_str!("../../presets/snia-wipc.yaml")),
    (
        "precondition-randwrite",
        include_str!("../../presets/precondition-randwrite.yaml"),
    ),
    (
        "storagereview-fill",
        include_str!("../../presets/storagereview-fill.yaml"),
    ),
    (
        "storagereview-4k-randread",
        include_str!("../../presets/storagereview-4k-randread.yaml"),
    ),
    (
        "storagereview-4k-randwrite",
        include_str!("../../presets/storagereview-4k-randwrite.yaml"),
    ),
    (
        "storagereview-16k-seqread",
        include_str!("../../presets/storagereview-16k-seqread.yaml"),
    ),
    (
        "storagereview-16k-seqwrite",
        include_str!("../../presets/storagereview-16k-seqwrite.yaml"),
    ),
    (
        "storagereview-64k-seqread",
        include_str!("../../presets/storagereview-64k-seqread.yaml"),
    ),
    (
        "storagereview-64k-seqwrite",
        include_str!("../../presets/storagereview-64k-seqwrite.yaml"),
    ),
    (
        "storagereview-4k-mix",
        include_str!("../../presets/storagereview-4k-mix.yaml"),
    ),
    (
        "storagereview-8k-mix",
        include_str!("../../presets/storagereview-8k-mix.yaml"),
    ),
    (
        "storagereview-16k-mix",
        include_str!("../../presets/storagereview-16k-mix.yaml"),
    ),
    ("snia-iops", include_str!("../../presets/snia-iops.yaml")),
    (
        "snia-throughput",
        include_str!("../../presets/snia-throughput.yaml"),
    ),
    (
        "snia-latency",
        include_str!("../../presets/snia-latency.yaml"),
    ),
    (
        "snia-write-saturation",
        include_str!("../../presets/snia-write-saturation.yaml"),
    ),
    ("snia-hir", include_str!("../../presets/snia-hir.yaml")),
    ("snia-xsr", include_str!("../../presets/snia-xsr.yaml")),
    ("snia-dirth", include_str!("../../presets/snia-dirth.yaml")),
    ("snia-ecw", include_str!("../../presets/snia-ecw.yaml")),
    (
        "snia-fio-throughput",
        include_str!("../../presets/snia-fio-throughput.yaml"),
    ),
    (
        "snia-fio-latency-map",
        include_str!("../../presets/snia-fio-latency-map.yaml"),
    ),
    ("seq-128k", include_str!("../../presets/seq-128k.yaml")),
    ("approx-sql", include_str!("../../presets/approx-sql.yaml")),
    (
        "approx-oracle",
        include_str!("../../presets/approx-oracle.yaml"),
    ),
    ("approx-vdi", include_str!("../../presets/approx-vdi.yaml")),
    (
        "thermal-soak",
        include_str!("../../presets/thermal-soak.yaml"),
    ),
    (
        "thermal-soak-4k-randwrite",
        include_str!("../../presets/thermal-soak-4k-randwrite.yaml"),
    ),
    (
        "zoned-seq-write",
        include_str!("../../presets/zoned-seq-write.yaml"),
    ),
    ("diskmark", include_str!("../../presets/diskmark.yaml")),
    (
        "diskmark-nvme",
        include_str!("../../presets/diskmark-nvme.yaml"),
    ),
];

/// A built-in preset by id.
pub fn load_builtin(id: &str) -> Result<Preset, PresetError> {
    match BUILTIN_FILES.iter().find(|(i, _)| *i == id) {
        Some((id, text)) => parse_str(text, &format!("builtin:{id}")),
        None => Err(not_found(
            id,
            BUILTIN_FILES.iter().map(|(i, _)| i.to_string()).collect(),
        )),
    }
}

/// `id` names a preset of the catalog or an fio job file of the user's preset folder by
/// its file name (`two.fio`): what the dashboard's picker offers and `--preset` picks from;
/// a misspelt id is refused with the nearest one.
pub fn check_id(id: &str) -> Result<(), PresetError> {
    let mut known: Vec<String> = catalog().presets.into_iter().map(|p| p.id).collect();
    if let Some(dir) = user_dir() {
        known.extend(
            fio_job_files(&dir)
                .iter()
                .filter_map(|p| p.file_name().map(|n| n.to_string_lossy().into_owned())),
        );
    }
    if known.iter().any(|k| k == id) {
        return Ok(());
    }
    Err(not_found(id, known))
}

fn not_found(id: &str, known: Vec<String>) -> PresetError {
    PresetError::NotFound {
        id: id.to_string(),
        suggestion: suggest::nearest(id, known.iter().map(String::as_str)),
        known: known.join(", "),
    }
}

/// The user's preset folder, if a home or config folder is known.
pub fn user_dir() -> Option<PathBuf> {
    let base = std::env::var_os("XDG_CONFIG_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config")))?;
    Some(base.join("drivescope").join("presets"))
}

/// The files in `dir` whose extension is one of `exts`, in file-name order; a missing
/// folder has none.
fn files_in(dir: &Path, exts: &[&str]) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut paths: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| exts.iter().any(|x| e == *x)))
        .collect();
    paths.sort();
    paths
}

/// Every preset file in `dir` (`*.yaml`, `*.yml`), parsed, in file-name order. A missing
/// folder has none.
pub fn load_dir(dir: &Path) -> Vec<Result<Preset, PresetError>> {
    files_in(dir, &["yaml", "yml"])
        .iter()
        .map(|p| parse_file(p))
        .collect()
}

/// The fio job files (`*.fio`) in `dir`, in file-name order; a missing folder has none.
/// They are offered beside the presets and run as they are (`run --fio-job`).
pub fn fio_job_files(dir: &Path) -> Vec<PathBuf> {
    files_in(dir, &["fio"])
}

/// All presets and the problems met loading them.
#[derive(Debug, Default)]
pub struct Catalog {
    pub presets: Vec<Preset>,
    /// User files that do not parse or validate (built-ins always do: the tests check).
    pub problems: Vec<PresetError>,
}

/// Built-ins, then the user's presets; a user preset with a built-in's id replaces it.
pub fn catalog() -> Catalog {
    let mut cat = Catalog::default();
    for (id, _) in BUILTIN_FILES {
        match load_builtin(id) {
            Ok(p) => cat.presets.push(p),
            Err(e) => cat.problems.push(e),
        }
    }
    if let Some(dir) = user_dir() {
        for loaded in load_dir(&dir) {
            match loaded {
                Ok(p) => match cat.presets.iter_mut().find(|q| q.id == p.id) {
                    Some(q) => *q = p,
                    None => cat.presets.push(p),
                },
                Err(e) => cat.problems.push(e),
            }
        }
    }
    cat
}

/// Built-in presets plus the user's valid ones.
pub fn builtins() -> Vec<Preset> {
    catalog().presets
}

/// A preset by path (when `id_or_path` contains `/` or ends in `.yaml`/`.yml`), else by id
/// (a user preset replacing a built-in of the same id), else an existing file of that name.
pub fn find(id_or_path: &str) -> Result<Preset, PresetError> {
    let path = Path::new(id_or_path);
    let looks_like_file =
        id_or_path.ends_with(".yaml") || id_or_path.ends_with(".yml") || id_or_path.contains('/');
    if looks_like_file {
        return parse_file(path);
    }
    let cat = catalog();
    if let Some(p) = cat.presets.iter().find(|p| p.id == id_or_path) {
        return Ok(p.clone());
    }
    if path.is_file() {
        return parse_file(path);
    }
    // A user file with this id that failed to load says more than "not found".
    if let Some(dir) = user_dir() {
        for ext in ["yaml", "yml"] {
            let candidate = dir.join(format!("{id_or_path}.{ext}"));
            if candidate.is_file() {
                return parse_file(&candidate);
            }
        }
    }
    Err(not_found(
        id_or_path,
        cat.presets.iter().map(|p| p.id.clone()).collect(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_user_folder_lists_presets_and_fio_job_files_apart_in_name_order() {
        let dir = tempfile::tempdir().unwrap();
        for name in ["b.yml", "a.yaml", "z.fio", "c.fio", "notes.txt", "fio"] {
            std::fs::write(dir.path().join(name), "x").unwrap();
        }
        let names = |paths: Vec<PathBuf>| -> Vec<String> {
            paths
                .iter()
                .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
                .collect()
        };
        assert_eq!(names(fio_job_files(dir.path())), ["c.fio", "z.fio"]);
        assert_eq!(
            names(files_in(dir.path(), &["yaml", "yml"])),
            ["a.yaml", "b.yml"]
        );
        assert_eq!(
            load_dir(dir.path()).len(),
            2,
            "each preset file, parsed or not"
        );
        assert!(fio_job_files(&dir.path().join("none")).is_empty());
    }
}
