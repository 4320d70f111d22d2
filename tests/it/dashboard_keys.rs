//! Every key as shown (issue 29), in a real terminal at 80x24: the tab numbers switch
//! panels; Home, End, PgUp and PgDn move in the pickers; the help lists every key of the
//! key map (`o` and `X` too), scrolls, and names the keys.yaml really read (under
//! XDG_CONFIG_HOME); a bad keys.yaml is reported with file:line:column.

use crate::common;
use crate::dashboard_tmux::{wait_until, Tmux};

fn start(name: &str, home: &std::path::Path) -> Option<Tmux> {
    Tmux::start_with(name, &common::bin().display().to_string(), home, 80, 24)
}

/// Sends one key (a tmux key name) alone: an Esc followed at once by a key reads as Alt.
fn key(t: &Tmux, k: &str) {
    t.tmux(&["send-keys", k]);
}

/// The presets as the picker lists them (id, name), in its order: read from the real
/// binary's `presets list` in the same home, so a preset added later moves the ends with it.
fn presets_in_order(home: &std::path::Path) -> Vec<(String, String)> {
    let out = common::run(home, &["presets", "list"]);
    assert!(out.status.success(), "{}", common::stderr(&out));
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let mut lines = text.lines().skip_while(|l| !l.starts_with("ID "));
    let header = lines.next().expect("the presets table's header");
    let name_at = header.find("NAME").expect("a NAME column");
    let dur_at = header.find("DURATION").expect("a DURATION column");
    let rows: Vec<(String, String)> = lines
        .filter(|l| l.len() > name_at)
        .map(|l| {
            let cut =
                |a: usize, b: usize| l.get(a..b.min(l.len())).unwrap_or("").trim().to_string();
            (cut(0, name_at), cut(name_at, dur_at))
        })
        .collect();
    assert!(rows.len() > 11, "{text}");
    rows
}

/// A preset's name as a picker row shows it at 80 columns (24 columns of name): a long
/// name loses the words it shares with the others (`all`, from [`presets_in_order`]).
fn row_of(name: &str, all: &[(String, String)]) -> String {
    let names: Vec<&str> = all.iter().map(|p| p.1.as_str()).collect();
    drivescope::ui::format::fit_name(name, &names, 24)
}

/// The line of the picker's highlighted entry.
fn picked(s: &str) -> String {
    s.lines()
        .find(|l| l.contains('▶'))
        .unwrap_or_default()
        .to_string()
}

#[test]
fn tab_numbers_and_home_end_pgup_pgdn_in_the_preset_picker_work() {
    let home = common::disk_tempdir();
    let Some(t) = start("keys-picker", home.path()) else {
        return;
    };
    let presets = presets_in_order(home.path());
    let first = row_of(&presets[0].1, &presets);
    let last = &presets[presets.len() - 1];
    t.wait_for(&format!("▶ {first}"));
    key(&t, "End");
    wait_until(&t, &format!("End: the last preset, {}", last.0), |s| {
        picked(s).contains(&row_of(&last.1, &presets)) && s.contains(&format!("id {}", last.0))
    });
    key(&t, "Home");
    wait_until(&t, "Home: the first preset", |s| picked(s).contains(&first));
    key(&t, "PageDown");
    // A page (ten entries) down: the eleventh preset, its id in the detail pane.
    let eleventh = &presets[10];
    wait_until(
        &t,
        &format!("PgDn: ten presets down, {}", eleventh.0),
        |s| {
            picked(s).contains(&row_of(&eleventh.1, &presets))
                && s.contains(&format!("id {}", eleventh.0))
        },
    );
    key(&t, "PageUp");
    wait_until(&t, "PgUp: back to the first", |s| {
        picked(s).contains(&first)
    });
    key(&t, "Escape");
    wait_until(&t, "the picker closed", |s| !s.contains("▶"));
    key(&t, "3");
    t.wait_for("Curve: latency vs IOPS");
    key(&t, "6");
    wait_until(&t, "the events panel", |s| {
        s.contains("╭ Events") && !s.contains("Curve: latency vs IOPS")
    });
    key(&t, "1");
    t.wait_for("Throughput (IOPS)");
}

#[test]
fn typing_filters_the_preset_picker_and_backspace_and_esc_clear_it() {
    let home = common::disk_tempdir();
    let Some(t) = start("keys-filter", home.path()) else {
        return;
    };
    t.wait_for("Presets (type to filter)");
    for k in ["s", "n", "i", "a"] {
        key(&t, k);
    }
    let s = wait_until(&t, "the SNIA presets alone", |s| {
        s.contains("Presets: filter 'snia'") && picked(s).contains("SNIA")
    });
    assert!(
        !s.contains("Quick look"),
        "a preset the filter drops
{s}"
    );
    assert!(!s.contains("StorageReview"), "{s}");
    // End: the last preset the filter keeps (by name or id), in the picker's order.
    let presets = presets_in_order(home.path());
    let kept = |(id, name): &(String, String)| {
        id.to_lowercase().contains("snia") || name.to_lowercase().contains("snia")
    };
    let at = presets.iter().rposition(kept).expect("an SNIA preset");
    let (id, name) = &presets[at];
    key(&t, "End");
    wait_until(&t, &format!("End: the last SNIA preset, {id}"), |s| {
        picked(s).contains(&row_of(name, &presets)) && s.contains(&format!("id {id}"))
    });
    for _ in 0..4 {
        key(&t, "BSpace");
    }
    // The pick stays where End put it, the list whole around it: presets the filter
    // dropped are back on screen.
    wait_until(&t, "the whole list back", |s| {
        s.contains("Presets (type to filter)")
            && picked(s).contains(&row_of(name, &presets))
            && presets
                .iter()
                .any(|p| !kept(p) && s.contains(&row_of(&p.1, &presets)))
    });
    for k in ["z", "z"] {
        key(&t, k);
    }
    wait_until(&t, "nothing kept", |s| s.contains("no preset matches 'zz'"));
    key(&t, "Escape");
    wait_until(&t, "esc cleared the filter", |s| {
        s.contains("Presets (type to filter)")
    });
    key(&t, "Escape");
    wait_until(&t, "a second esc closed it", |s| !s.contains("Presets ("));
}

/// The screen's lines inside the help's borders, joined: a path the footer wrapped reads
/// whole.
fn unwrapped(s: &str) -> String {
    s.lines()
        .map(|l| l.trim_matches(|c| c == '│' || c == ' '))
        .collect::<Vec<_>>()
        .join("")
}

#[test]
fn the_help_lists_every_key_scrolls_at_80x24_and_names_the_real_keys_file() {
    let home = common::disk_tempdir();
    let Some(t) = start("keys-help", home.path()) else {
        return;
    };
    t.wait_for("▶ Quick look");
    // F1: in the open picker `?` is filter text.
    key(&t, "F1");
    let file = home.path().join("config/drivescope/keys.yaml");
    let file = file.display().to_string();
    let s = wait_until(&t, "the help naming the keys file", |s| {
        s.contains("Keys 1-") && unwrapped(s).contains(&file)
    });
    assert!(!s.contains("~/.config"), "{s}");
    assert!(
        !s.contains("stop_drive"),
        "all of the help fits on one screen?\n{s}"
    );
    key(&t, "PageDown");
    key(&t, "PageDown");
    let every = format!("of {}", drivescope::app::Action::ALL.len());
    let s = wait_until(&t, "the end of the help", |s| {
        s.contains("stop_drive") && s.contains(&every)
    });
    for (keys, name) in [
        ("o", "all_drives"),
        ("X", "stop_drive"),
        ("1-7", "tab"),
        ("z", "zoom"),
        ("m", "note"),
        ("backspace", "erase"),
    ] {
        assert!(
            s.lines().any(|l| l.contains(keys) && l.contains(name)),
            "no {keys} {name}:\n{s}"
        );
    }
    key(&t, "Up");
    key(&t, "Home");
    wait_until(&t, "back at the top", |s| {
        s.contains("Keys 1-") && s.contains("pause or resume")
    });
    key(&t, "Escape");
    wait_until(&t, "the help closed", |s| !s.contains("Keys 1-"));
}

#[test]
fn a_bad_keys_file_is_reported_with_its_line_and_column() {
    let home = common::disk_tempdir();
    let dir = home.path().join("config/drivescope");
    std::fs::create_dir_all(&dir).unwrap();
    // `?` unquoted is YAML's mapping-key indicator, not the character.
    std::fs::write(dir.join("keys.yaml"), "quit: q\nhelp: ?\n").unwrap();
    // 120 columns: the notice holds the whole path (cutting long notices is another item).
    let bin = common::bin().display().to_string();
    let Some(t) = Tmux::start_with("keys-bad", &bin, home.path(), 120, 40) else {
        return;
    };
    let s = t.wait_for("keys.yaml:2:7:");
    assert!(s.contains("default keys in use"), "{s}");
}

#[test]
fn pickers_cut_names_with_an_ellipsis_show_the_preset_id_and_each_targets_path() {
    let home = common::disk_tempdir();
    let (a, b) = (home.path().join("a"), home.path().join("b"));
    for d in [&a, &b] {
        std::fs::create_dir_all(d).unwrap();
        std::fs::write(d.join("disk.bin"), vec![0u8; 1 << 20]).unwrap();
    }
    let cmd = format!(
        "{} --target {} --target {}",
        common::bin().display(),
        a.join("disk.bin").display(),
        b.join("disk.bin").display()
    );
    let Some(t) = Tmux::start_with("pickers", &cmd, home.path(), 80, 24) else {
        return;
    };
    // (A capture may catch a frame half drawn: each check waits for its whole screen.)
    // Names longer than the list lose the words they share with their neighbours, marked
    // `…`, never cut silently, and keep the words that tell them apart (issue 43); the id
    // the command line takes is shown.
    let s = wait_until(&t, "the picker with shortened names and the id", |s| {
        s.contains("▶ Quick look")
            && s.contains("…16K sequential read")
            && s.contains("…16K sequential write")
            && s.contains("id quick-look (drivescope run --preset quick-look)")
    });
    assert!(!s.contains("StorageReview 16K sequen "), "{s}");
    // Ctrl-T: a `t` would be filter text in the picker.
    key(&t, "C-t");
    // Two files of the same name in two folders: their path column tells them apart.
    wait_until(&t, "a path column", |s| {
        s.contains("safety check")
            && s.contains("/a/disk.bin file")
            && s.contains("/b/disk.bin file")
    });
}

#[test]
fn several_devices_start_once_the_last_name_is_typed() {
    let home = common::disk_tempdir();
    let devs: Vec<common::LoopDev> = (0..2)
        .filter_map(|_| common::LoopDev::new(64 << 20))
        .collect();
    if devs.len() < 2 {
        return;
    }
    let cmd = format!(
        "{} --target {} --target {} --preset quick-look --time-scale 0.1",
        common::bin().display(),
        devs[0].dev.display(),
        devs[1].dev.display()
    );
    let Some(t) = Tmux::start_with("drives-start", &cmd, home.path(), 120, 40) else {
        return;
    };
    wait_until(&t, "the picker over two drives", |s| {
        s.contains(" Presets ") && s.contains("Drives (2)")
    });
    key(&t, "Enter");
    for d in &devs {
        let name = d.dev.file_name().unwrap().to_string_lossy().into_owned();
        wait_until(&t, "the prompt for the device's name", |s| {
            s.contains(&format!("Type {name} and Enter"))
        });
        t.tmux(&["send-keys", "-l", &name]);
        key(&t, "Enter");
    }
    // No second start key: the run is going on both (or already done).
    wait_until(&t, "the run on both drives", |s| {
        !s.contains(" Presets ")
            && s.lines()
                .filter(|l| {
                    l.contains("/dev/loop") && (l.contains("running") || l.contains("done"))
                })
                .count()
                >= 2
    });
    wait_until(&t, "the run's end", |s| s.contains("session saved to"));
    key(&t, "q");
    t.wait_for("EXIT=0");
}

/// The header's drive line (`drive … · 67 MB · loop`).
fn drive_line(s: &str) -> String {
    s.lines()
        .find(|l| l.starts_with("│drive "))
        .unwrap_or_default()
        .to_string()
}

#[test]
fn the_header_follows_the_target_picked_between_runs() {
    let home = common::disk_tempdir();
    let Some(dev) = common::LoopDev::new(64 << 20) else {
        return;
    };
    let cmd = format!("{} --target {}", common::bin().display(), dev.dev.display());
    let Some(t) = Tmux::start_with("header-follows", &cmd, home.path(), 120, 40) else {
        return;
    };
    // Opened on the loop device: the header names its drive (a loop device).
    wait_until(&t, "the loop device's drive in the header", |s| {
        s.contains(" Presets ") && drive_line(s).contains("· loop")
    });
    key(&t, "C-t");
    t.wait_for("safety check");
    // The first row is the built-in test file, on another drive.
    key(&t, "Home");
    key(&t, "Enter");
    wait_until(&t, "the test file's drive in the header", |s| {
        s.contains(" Presets ")
            // Not made yet in this fresh home: Enter would make it.
            && s.contains("scratch.bin (new test file of 1 GiB, created on Enter)")
            && s.contains("│drive ")
            && !drive_line(s).contains("· loop")
    });
}
