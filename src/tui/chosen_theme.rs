//! The theme chosen in the dashboard, kept for the next start: `theme.yaml` in the config
//! folder (`$XDG_CONFIG_HOME/drivescope`, else `~/.config/drivescope`), written whole or
//! not at all (a temporary file renamed over it), and only over a file drivescope wrote
//! itself (its first line says so): a file the user wrote is never replaced.

use std::io::Write;
use std::path::{Path, PathBuf};

use serde::Deserialize;

/// The file's name in the config folder.
pub const FILE: &str = "theme.yaml";

/// The first line of every file drivescope writes here.
const MARK: &str = "# written by drivescope: the theme last chosen in the dashboard";

/// The largest file read.
const MAX_BYTES: u64 = 64 * 1024;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ThemeFile {
    theme: String,
}

/// What saving did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Saved {
    /// The choice is in the file.
    Written(PathBuf),
    /// A file drivescope did not write is there: left as it is, nothing saved.
    NotOurs(PathBuf),
}

/// The theme saved in `dir`'s theme.yaml: none when there is no file; the error says
/// file:line:column.
pub fn load(dir: &Path) -> Result<Option<String>, String> {
    let path = dir.join(FILE);
    let text = match crate::user_file::read_text(&path, MAX_BYTES, "theme choice") {
        Ok(t) => t,
        Err(crate::user_file::InputError::Io { source, .. })
            if source.kind() == std::io::ErrorKind::NotFound =>
        {
            return Ok(None)
        }
        Err(e) => return Err(e.to_string()),
    };
    match serde_yaml::from_str::<ThemeFile>(&text) {
        Ok(f) => Ok(Some(f.theme)),
        Err(e) => {
            let (line, column) = crate::yaml_pos::of_error(&e);
            Err(format!("{}:{line}:{column}: {e}", path.display()))
        }
    }
}

/// Saves `name` as the theme for the next start in `dir` (made if missing).
pub fn save(dir: &Path, name: &str) -> std::io::Result<Saved> {
    use crate::owned::{Folder, OwnedError};
    let path = dir.join(FILE);
    // A name is written as a YAML string whatever it holds (quotes, colons).
    let quoted = serde_yaml::to_string(name).map_err(std::io::Error::other)?;
    let text = format!("{MARK}\n# (delete this file to start with the default)\ntheme: {quoted}");
    let folder = Folder::open_or_make(dir).map_err(std::io::Error::other)?;
    let fill = |w: &mut dyn Write| w.write_all(text.as_bytes());
    // Only a file of ours (it starts with the mark) is replaced.
    let ours = |f: &mut std::fs::File| {
        let mut head = vec![0u8; MARK.len()];
        std::io::Read::read_exact(f, &mut head).is_ok() && head == MARK.as_bytes()
    };
    let written = match folder.adopt(FILE.as_ref(), ours) {
        Ok(Some((_, mut mine))) => folder.replace(&mut mine, fill),
        Ok(None) => folder.create(FILE.as_ref(), fill).map(drop),
        Err(e) => Err(e),
    };
    match written {
        Ok(()) => Ok(Saved::Written(path)),
        Err(OwnedError::NotOurs { .. } | OwnedError::Exists { .. }) => Ok(Saved::NotOurs(path)),
        Err(e) => Err(std::io::Error::other(e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn saved_then_loaded_and_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path().join("drivescope");
        assert_eq!(load(&d).unwrap(), None);
        assert_eq!(save(&d, "light").unwrap(), Saved::Written(d.join(FILE)));
        assert_eq!(load(&d).unwrap().as_deref(), Some("light"));
        assert_eq!(
            save(&d, "odd: 'name'").unwrap(),
            Saved::Written(d.join(FILE))
        );
        assert_eq!(load(&d).unwrap().as_deref(), Some("odd: 'name'"));
        let left: Vec<_> = std::fs::read_dir(&d).unwrap().collect();
        assert_eq!(left.len(), 1, "no temporary file left");
    }

    #[test]
    fn a_file_drivescope_did_not_write_is_kept() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join(FILE);
        std::fs::write(&p, "theme: dark # mine\n").unwrap();
        assert_eq!(
            save(dir.path(), "light").unwrap(),
            Saved::NotOurs(p.clone())
        );
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "theme: dark # mine\n");
        assert_eq!(load(dir.path()).unwrap().as_deref(), Some("dark"));
    }

    #[test]
    fn a_bad_file_names_its_line_and_column() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(FILE), "# x\ntheme: [\n").unwrap();
        let e = load(dir.path()).unwrap_err();
        assert!(
            e.contains(&format!("{}:", dir.path().join(FILE).display())),
            "{e}"
        );
        assert!(e.contains(":3:") || e.contains(":2:"), "{e}");
    }
}
