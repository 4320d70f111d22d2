//! The dashboard's arguments are checked before the terminal is set up (issue 29): a
//! misspelt `--preset` or `--theme` is refused with the nearest name, exit 2, with or
//! without a terminal; a `--target` under /dev that does not exist is "no such device",
//! never a test file, even with `--size`.

use crate::common;
use crate::dashboard_tmux::Tmux;

#[test]
fn a_misspelt_preset_or_theme_is_refused_with_the_nearest_name_without_a_terminal() {
    let home = common::disk_tempdir();
    let out = common::run(home.path(), &["--preset", "quik-look"]);
    common::refused(
        &out,
        &["no preset 'quik-look'", "did you mean `quick-look`?"],
    );
    assert!(
        !common::stderr(&out).contains("terminal"),
        "{}",
        common::stderr(&out)
    );
    let out = common::run(home.path(), &["--theme", "hig-contrast"]);
    common::refused(
        &out,
        &["no theme 'hig-contrast'", "did you mean `high-contrast`?"],
    );
    let out = common::run(home.path(), &["open", "missing.yaml", "--theme", "ligt"]);
    common::refused(&out, &["did you mean `light`?"]);
    // A user theme is a known name.
    let themes = home.path().join("config/drivescope/themes");
    std::fs::create_dir_all(&themes).unwrap();
    std::fs::write(themes.join("mine.yaml"), "name: mine\n").unwrap();
    let out = common::run(home.path(), &["--theme", "mined"]);
    common::refused(&out, &["did you mean `mine`?"]);
}

#[test]
fn a_missing_device_path_is_no_such_device_and_never_a_file() {
    let home = common::disk_tempdir();
    let dev = "/dev/drivescope-test-no-such-nvme0n1";
    for extra in [&[][..], &["--size", "1M"][..]] {
        let mut args = vec!["--target", dev];
        args.extend_from_slice(extra);
        let out = common::run(home.path(), &args);
        common::refused(&out, &["no such device"]);
        assert!(!std::path::Path::new(dev).exists(), "{dev} was made");
    }
}

#[test]
fn in_a_terminal_a_misspelt_preset_is_refused_before_the_screen_is_taken() {
    let home = common::disk_tempdir();
    let cmd = format!("{} --preset quik-look", common::bin().display());
    let Some(t) = Tmux::start_with("misspelt-preset", &cmd, home.path(), 80, 24) else {
        return;
    };
    let s = t.wait_for("EXIT=");
    assert!(s.contains("did you mean `quick-look`?"), "{s}");
    assert!(s.contains("EXIT=2"), "{s}");
}
