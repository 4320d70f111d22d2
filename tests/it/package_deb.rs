//! The Debian package (`assets/deb/build`, metadata in Cargo.toml): it lists the binary, the
//! man pages, the three completions and the licence texts in Debian's places, and the binary extracted from it
//! runs (`--version`, `man run`).
//!
//! The package takes a release build, so this test does not make it: `.ci/run` runs
//! `assets/deb/build` before `cargo test` and the test finds
//! `$CARGO_TARGET_DIR/debian/drivescope_<version>-1_<arch>.deb`. Outside CI, without that
//! package, it skips (run `assets/deb/build` first); under CI a missing package fails it.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The target dir the test binary was built in (`…/debug/drivescope` is two levels down).
fn target_dir() -> Option<PathBuf> {
    Some(crate::common::bin().parent()?.parent()?.to_path_buf())
}

/// This version's package in `target/debian/`, if one was built.
fn deb_of_this_version() -> Option<PathBuf> {
    let dir = target_dir()?.join("debian");
    let prefix = format!("drivescope_{}-", env!("CARGO_PKG_VERSION"));
    std::fs::read_dir(dir)
        .ok()?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .find(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with(&prefix) && n.ends_with(".deb"))
        })
}

fn dpkg_deb(args: &[&str], deb: &Path) -> std::process::Output {
    Command::new("dpkg-deb")
        .args(args)
        .arg(deb)
        .output()
        .expect("dpkg-deb runs")
}

#[test]
fn deb_holds_binary_man_pages_and_completions_and_its_binary_runs() {
    if Command::new("dpkg-deb").arg("--version").output().is_err() {
        skip!(Tool, "dpkg-deb is not installed");
    }
    let Some(deb) = deb_of_this_version() else {
        skip!(
            Tool,
            "no drivescope {} package in target/debian: run assets/deb/build first",
            env!("CARGO_PKG_VERSION")
        );
    };

    let listing = dpkg_deb(&["-c"], &deb);
    assert!(listing.status.success(), "dpkg-deb -c {}", deb.display());
    let listing = String::from_utf8_lossy(&listing.stdout);
    let has = |path: &str| {
        listing
            .lines()
            .any(|l| l.split_whitespace().nth(5) == Some(path))
    };
    let man_has = |page: &str| {
        has(&format!("./usr/share/man/man1/{page}.gz"))
            || has(&format!("./usr/share/man/man1/{page}"))
    };
    for path in [
        "./usr/bin/drivescope",
        "./usr/share/bash-completion/completions/drivescope",
        "./usr/share/zsh/vendor-completions/_drivescope",
        "./usr/share/fish/vendor_completions.d/drivescope.fish",
        "./usr/share/drivescope/presets/quick-look.yaml",
        "./usr/share/drivescope/themes/dark.yaml",
        "./usr/share/doc/drivescope/copyright",
        "./usr/share/doc/drivescope/LICENSE-MIT",
        "./usr/share/doc/drivescope/LICENSE-APACHE",
    ] {
        assert!(has(path), "{path} not in the package:\n{listing}");
    }
    for page in ["drivescope.1", "drivescope-run.1"] {
        assert!(man_has(page), "{page} not in the package:\n{listing}");
    }

    let root = tempfile::tempdir().expect("temp dir");
    let out = Command::new("dpkg-deb")
        .arg("-x")
        .arg(&deb)
        .arg(root.path())
        .output()
        .expect("dpkg-deb -x runs");
    assert!(
        out.status.success(),
        "dpkg-deb -x: {}",
        crate::common::stderr(&out)
    );
    // The licence texts, as Cargo.toml's `license = "MIT OR Apache-2.0"` names them, are the
    // checkout's own files.
    let doc = root.path().join("usr/share/doc/drivescope");
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    for (file, words) in [
        (
            "LICENSE-MIT",
            "Permission is hereby granted, free of charge",
        ),
        (
            "LICENSE-APACHE",
            "Apache License\n                           Version 2.0",
        ),
    ] {
        let shipped = std::fs::read_to_string(doc.join(file)).expect("the licence is shipped");
        assert!(shipped.contains(words), "{file}: {shipped:.200}");
        assert_eq!(
            shipped,
            std::fs::read_to_string(repo.join(file)).unwrap(),
            "{file} is the checkout's"
        );
    }
    let installed = root.path().join("usr/bin/drivescope");

    let out = Command::new(&installed)
        .arg("--version")
        .env("HOME", root.path())
        .output()
        .expect("the packaged drivescope runs");
    assert!(
        out.status.success(),
        "--version: {}",
        crate::common::stderr(&out)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains(env!("CARGO_PKG_VERSION")),
        "the package holds another version: {stdout}"
    );

    let out = Command::new(&installed)
        .args(["man", "run"])
        .env("HOME", root.path())
        .output()
        .expect("the packaged drivescope runs");
    assert!(
        out.status.success(),
        "man run: {}",
        crate::common::stderr(&out)
    );
    let roff = String::from_utf8_lossy(&out.stdout);
    assert!(roff.contains(".TH"), "man run prints no roff: {roff}");
}
