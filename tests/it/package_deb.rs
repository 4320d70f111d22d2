//! The Debian package (`assets/deb/build`, metadata in Cargo.toml): it lists the binary, the
//! man pages, the three completions and the licence texts in Debian's places, and the binary extracted from it
//! runs (`--version`, `man run`); the binary is stripped, the control file has a short
//! synopsis, a description of a few lines and recommends bash-completion, and lintian
//! (which CI installs) finds no error in it.
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

/// This version's package, or `None` after a skip: no dpkg-deb, or no package built.
fn built_deb() -> Option<PathBuf> {
    use crate::common::skip::{note, Skip};
    if Command::new("dpkg-deb").arg("--version").output().is_err() {
        note(Skip::Tool, "dpkg-deb is not installed");
        return None;
    }
    let deb = deb_of_this_version();
    if deb.is_none() {
        note(
            Skip::Tool,
            format!(
                "no drivescope {} package in target/debian: run assets/deb/build first",
                env!("CARGO_PKG_VERSION")
            ),
        );
    }
    deb
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
    let Some(deb) = built_deb() else {
        return;
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

    // Stripped: no debug info and no symbol table (it was 64 MB "with debug_info").
    let out = Command::new("file")
        .arg("-b")
        .arg(&installed)
        .output()
        .expect("file runs");
    let kind = String::from_utf8_lossy(&out.stdout);
    assert!(
        kind.contains("ELF") && kind.contains(", stripped") && !kind.contains("debug_info"),
        "the packaged binary is not stripped: {kind}"
    );

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

/// The package's control field `name`.
fn control_field(deb: &Path, name: &str) -> String {
    let out = Command::new("dpkg-deb")
        .arg("-f")
        .arg(deb)
        .arg(name)
        .output()
        .expect("dpkg-deb runs");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn deb_says_what_it_is_in_a_few_lines_and_lintian_finds_no_error() {
    let Some(deb) = built_deb() else {
        return;
    };
    let description = control_field(&deb, "Description");
    let mut lines = description.lines();
    let synopsis = lines.next().unwrap_or_default();
    // Debian policy 3.4.1: a synopsis under 80 characters; the README is no description.
    assert!(
        !synopsis.is_empty() && synopsis.chars().count() < 80,
        "synopsis: {synopsis:?}"
    );
    let extended = lines.count();
    assert!(
        (2..=10).contains(&extended),
        "the description has {extended} lines under its synopsis:\n{description}"
    );
    assert!(!description.contains("```"), "{description}");
    let recommends = control_field(&deb, "Recommends");
    assert!(
        recommends.contains("bash-completion"),
        "Recommends: {recommends}"
    );

    if Command::new("lintian").arg("--version").output().is_err() {
        skip!(Tool, "lintian is not installed");
    }
    // lintian refuses to run as root without this (it unpacks the package it checks).
    let out = Command::new("lintian")
        .args(["--allow-root", "--tag-display-limit", "0"])
        .arg(&deb)
        .output()
        .expect("lintian runs");
    let report = String::from_utf8_lossy(&out.stdout);
    let errors: Vec<&str> = report.lines().filter(|l| l.starts_with("E:")).collect();
    // It exits non-zero on an error tag (its default --fail-on) or when it could not check.
    assert!(
        errors.is_empty() && out.status.success(),
        "lintian: {:?}\n{}\n(stderr: {})",
        out.status.code(),
        errors.join("\n"),
        crate::common::stderr(&out)
    );
}

#[test]
fn the_debian_changelog_opens_with_this_version() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/deb/changelog");
    let changelog = std::fs::read_to_string(&path).expect("assets/deb/changelog");
    let first = changelog.lines().next().unwrap_or_default();
    let version = format!("drivescope ({}-1) ", env!("CARGO_PKG_VERSION"));
    assert!(
        first.starts_with(&version),
        "{}: the top entry is {first:?}, not {version:?}: add this version's entry",
        path.display()
    );
}
