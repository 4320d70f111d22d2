use super::*;

fn write(text: &'static str) -> impl FnOnce(&mut dyn Write) -> std::io::Result<()> {
    move |w| w.write_all(text.as_bytes())
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap()
}

fn not_ours<T>(r: Result<T, OwnedError>) -> bool {
    matches!(r, Err(OwnedError::NotOurs { .. }))
}

fn exists<T>(r: Result<T, OwnedError>) -> bool {
    matches!(r, Err(OwnedError::Exists { .. }))
}

#[test]
fn made_replaced_and_removed_while_ours() {
    let dir = tempfile::tempdir().unwrap();
    let f = Folder::open(dir.path()).unwrap();
    let mut mine = f.create("a".as_ref(), write("one")).unwrap();
    assert_eq!(read(&dir.path().join("a")), "one");
    f.replace(&mut mine, write("two")).unwrap();
    assert_eq!(read(&dir.path().join("a")), "two");
    assert!(f.holds(&mine));
    assert!(f.remove(&mine).unwrap());
    assert!(!dir.path().join("a").exists());
    // Nothing left behind: no temp or aside names.
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

/// What a user may have put at the name of a file of ours.
#[derive(Debug, Clone, Copy)]
enum Planted {
    File,
    HardLink,
    SymLink,
    Fifo,
}

fn plant(dir: &Path, name: &str, how: Planted) -> PathBuf {
    let theirs = dir.join("users-file");
    std::fs::write(&theirs, "the user's bytes").unwrap();
    let at = dir.join(name);
    match how {
        Planted::File => std::fs::write(&at, "the user's bytes").unwrap(),
        Planted::HardLink => std::fs::hard_link(&theirs, &at).unwrap(),
        Planted::SymLink => std::os::unix::fs::symlink(&theirs, &at).unwrap(),
        Planted::Fifo => {
            let c = std::ffi::CString::new(at.as_os_str().as_bytes()).unwrap();
            // SAFETY: a NUL-terminated path that lives past the call.
            assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
        }
    }
    theirs
}

fn unchanged(dir: &Path, name: &str, how: Planted, theirs: &Path) {
    assert_eq!(read(theirs), "the user's bytes", "{how:?}");
    let at = dir.join(name);
    let m = at.symlink_metadata().unwrap();
    match how {
        Planted::File | Planted::HardLink => assert_eq!(read(&at), "the user's bytes"),
        Planted::SymLink => assert!(m.file_type().is_symlink()),
        Planted::Fifo => {
            use std::os::unix::fs::FileTypeExt;
            assert!(m.file_type().is_fifo())
        }
    }
}

const PLANTS: [Planted; 4] = [
    Planted::File,
    Planted::HardLink,
    Planted::SymLink,
    Planted::Fifo,
];

#[test]
fn a_file_planted_before_a_new_file_is_never_written() {
    for how in PLANTS {
        let dir = tempfile::tempdir().unwrap();
        let theirs = plant(dir.path(), "a", how);
        let f = Folder::open(dir.path()).unwrap();
        assert!(exists(f.create("a".as_ref(), write("ours"))));
        assert!(exists(f.create_open("a".as_ref(), 0o644)));
        unchanged(dir.path(), "a", how, &theirs);
    }
}

#[test]
fn a_file_planted_after_ours_is_never_replaced_nor_removed() {
    for how in PLANTS {
        let dir = tempfile::tempdir().unwrap();
        let f = Folder::open(dir.path()).unwrap();
        let mut mine = f.create("a".as_ref(), write("ours")).unwrap();
        // The user moves ours away and puts their own there.
        std::fs::rename(dir.path().join("a"), dir.path().join("moved")).unwrap();
        let theirs = plant(dir.path(), "a", how);
        assert!(not_ours(f.replace(&mut mine, write("again"))));
        unchanged(dir.path(), "a", how, &theirs);
        assert!(!f.remove(&mine).unwrap());
        unchanged(dir.path(), "a", how, &theirs);
        assert!(not_ours(f.open_append(&mine)));
        assert_eq!(read(&dir.path().join("moved")), "ours");
        // Nothing of ours left under other names.
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .filter(|n| n.starts_with('.'))
            .collect();
        assert!(names.is_empty(), "{how:?}: {names:?}");
    }
}

#[test]
fn a_folder_swapped_for_a_link_is_not_followed() {
    let base = tempfile::tempdir().unwrap();
    let out = base.path().join("out");
    let users = base.path().join("users");
    std::fs::create_dir(&out).unwrap();
    std::fs::create_dir(&users).unwrap();
    let f = Folder::open(&out).unwrap();
    let mut mine = f.create("a".as_ref(), write("one")).unwrap();
    // Mid-operation, the folder is moved away and a link to the user's folder put there.
    std::fs::rename(&out, base.path().join("out-moved")).unwrap();
    std::os::unix::fs::symlink(&users, &out).unwrap();
    f.replace(&mut mine, write("two")).unwrap();
    f.create("b".as_ref(), write("three")).unwrap();
    assert_eq!(std::fs::read_dir(&users).unwrap().count(), 0);
    assert_eq!(read(&base.path().join("out-moved/a")), "two");
    // A link where a subfolder is expected is refused.
    assert!(not_ours(
        Folder::open(base.path()).unwrap().sub("out".as_ref())
    ));
}

#[test]
fn only_a_file_ours_by_its_content_is_adopted() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("ours"), "drivescope\n").unwrap();
    std::fs::write(dir.path().join("theirs"), "mine\n").unwrap();
    let f = Folder::open(dir.path()).unwrap();
    let is_ours = |file: &mut File| {
        let mut s = String::new();
        std::io::Read::read_to_string(file, &mut s).unwrap();
        s.starts_with("drivescope")
    };
    let (_, mut mine) = f.adopt("ours".as_ref(), is_ours).unwrap().unwrap();
    f.replace(&mut mine, write("drivescope again\n")).unwrap();
    assert!(not_ours(f.adopt("theirs".as_ref(), is_ours)));
    assert!(f.adopt("none".as_ref(), is_ours).unwrap().is_none());
    assert!(f.create("a/b".as_ref(), write("x")).is_err());
    assert!(f.create("..".as_ref(), write("x")).is_err());
}
