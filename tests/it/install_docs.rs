//! The README's install steps for a `cargo install`, run as written with HOME in a temp
//! folder: `man drivescope-run` (man-db) finds the pages with only `~/.cargo/bin` on PATH and
//! no MANPATH, and bash-completion loads the bash completions from where the README puts
//! them.

use std::path::Path;
use std::process::Command;

/// The README's Install section.
fn install_section() -> String {
    let readme = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md"))
        .expect("README.md");
    let start = readme.find("### Install").expect("an Install section");
    let rest = &readme[start + 1..];
    let end = rest.find("\n#").map_or(rest.len(), |i| i + 1);
    rest[..end].to_string()
}

/// The README line that starts with `prefix`, its comment cut, `~` as `home`.
fn step(prefix: &str, home: &Path) -> String {
    let section = install_section();
    let line = section
        .lines()
        .find(|l| l.starts_with(prefix))
        .unwrap_or_else(|| panic!("no `{prefix}` in the README's Install section"));
    let command = line.split(" #").next().unwrap_or(line).trim();
    command.replace('~', &home.display().to_string())
}

/// Runs the README's line starting with `prefix` in sh, drivescope being this build.
fn run_step(prefix: &str, home: &Path) {
    let command = step(prefix, home);
    let bin = crate::common::bin();
    let command = command.replacen("drivescope ", &format!("{} ", bin.display()), 1);
    let out = Command::new("sh")
        .args(["-c", &command])
        .env("HOME", home)
        .output()
        .expect("sh runs");
    assert!(
        out.status.success(),
        "{command}: {}",
        crate::common::stderr(&out)
    );
}

#[test]
fn man_finds_the_pages_where_the_readme_puts_them_with_only_cargo_bin_on_path() {
    if Command::new("man").arg("-w").arg("man").output().is_err() {
        skip!(Tool, "man (man-db) is not installed");
    }
    let home = tempfile::tempdir().expect("temp dir");
    run_step("mkdir -p ", home.path());
    run_step("drivescope man --dir ", home.path());
    let cargo_bin = home.path().join(".cargo/bin");
    std::fs::create_dir_all(&cargo_bin).expect("~/.cargo/bin");
    let man = |path: &str| {
        Command::new("man")
            .args(["-w", "drivescope-run"])
            .env_clear()
            .env("HOME", home.path())
            .env("PATH", path)
            .output()
            .expect("man runs")
    };
    let out = man(&format!("{}:/usr/bin:/bin", cargo_bin.display()));
    let found = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && found.trim_end().ends_with("/man1/drivescope-run.1"),
        "man -w drivescope-run: {found} {}",
        crate::common::stderr(&out)
    );
    assert!(
        found.starts_with(&home.path().display().to_string()),
        "{found}"
    );
    // Without ~/.cargo/bin on PATH man finds nothing there: the README's reason holds.
    let out = man("/usr/bin:/bin");
    assert!(
        !String::from_utf8_lossy(&out.stdout).starts_with(&home.path().display().to_string()),
        "found without ~/.cargo/bin on PATH"
    );
}

#[test]
fn bash_completion_loads_the_completions_where_the_readme_puts_them() {
    let loader = Path::new("/usr/share/bash-completion/bash_completion");
    if !loader.exists() {
        skip!(Tool, "bash-completion is not installed");
    }
    let home = tempfile::tempdir().expect("temp dir");
    run_step("mkdir -p ", home.path());
    run_step("drivescope completions bash > ", home.path());
    let out = Command::new("bash")
        .arg("-c")
        .arg(format!(
            // _comp_load since bash-completion 2.12, __load_completion before.
            "source {}; if declare -F _comp_load >/dev/null; then _comp_load drivescope; \
             else __load_completion drivescope; fi; complete -p drivescope",
            loader.display()
        ))
        .env_clear()
        .env("HOME", home.path())
        .env("PATH", "/usr/bin:/bin")
        .output()
        .expect("bash runs");
    let spec = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && spec.contains("_drivescope drivescope"),
        "complete -p drivescope: {spec} {}",
        crate::common::stderr(&out)
    );
}
