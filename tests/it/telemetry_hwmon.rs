//! hwmon discovery and reading on fake sysfs trees: both NVMe layouts (hwmon under the
//! controller, newer kernels; under the PCI device, older), both Kelvin offsets
//! (273.15 → 49850, 273 → 50000 for the same 323 K), and drivetemp for SATA.

use crate::fake_sysfs;

use drivescope::drive::SysRoot;
use drivescope::drive::{Disk, Transport};
use drivescope::telemetry::hwmon::{self, HwmonKind};
use drivescope::telemetry::{read_smart, HealthReason, SensorTemp, Source};
use fake_sysfs::Tree;

const PCI: &str = "sys/devices/pci0000:00/0000:00:04.0";

fn nvme_controller(t: &Tree, ctrl: &str) {
    t.mkdir(&format!("{PCI}/nvme/{ctrl}"));
    t.link(
        &format!("sys/class/nvme/{ctrl}"),
        &format!("{PCI}/nvme/{ctrl}"),
    );
    t.link(&format!("{PCI}/nvme/{ctrl}/device"), PCI);
}

fn sensors(t: &Tree, dir: &str, composite: &str, max: &str, crit: &str) {
    t.file(&format!("{dir}/name"), "nvme\n");
    t.file(&format!("{dir}/temp1_input"), composite);
    t.file(&format!("{dir}/temp1_label"), "Composite\n");
    t.file(&format!("{dir}/temp1_max"), max);
    t.file(&format!("{dir}/temp1_crit"), crit);
}

/// Newer kernels: /sys/class/nvme/nvme0/hwmon2, device → the controller; 273.15 offset.
fn new_layout() -> Tree {
    let t = Tree::new();
    nvme_controller(&t, "nvme0");
    let hw = format!("{PCI}/nvme/nvme0/hwmon2");
    sensors(&t, &hw, "49850\n", "69850\n", "99850\n");
    t.file(&format!("{hw}/temp2_input"), "37850\n");
    t.file(&format!("{hw}/temp2_label"), "Sensor 1\n");
    t.file(&format!("{hw}/temp4_input"), "31850\n");
    t.file(&format!("{hw}/temp4_label"), "Sensor 3\n");
    t.link(&format!("{hw}/device"), &format!("{PCI}/nvme/nvme0"));
    t.link("sys/class/hwmon/hwmon2", &hw);
    t
}

/// Older kernels: hwmon under the PCI device, device → the PCI device; 273 offset.
fn old_layout() -> Tree {
    let t = Tree::new();
    nvme_controller(&t, "nvme0");
    let hw = format!("{PCI}/hwmon/hwmon1");
    sensors(&t, &hw, "50000\n", "70000\n", "100000\n");
    t.link(&format!("{hw}/device"), PCI);
    t.link("sys/class/hwmon/hwmon1", &hw);
    // Another drive's sensor and an unrelated one, which must not match.
    t.file(
        "sys/devices/platform/coretemp.0/hwmon/hwmon0/name",
        "coretemp\n",
    );
    t.link(
        "sys/class/hwmon/hwmon0",
        "sys/devices/platform/coretemp.0/hwmon/hwmon0",
    );
    t
}

#[test]
fn new_layout_with_273_15_offset() {
    let t = new_layout();
    let root = SysRoot::under(t.root());
    let dir = hwmon::find_nvme(&root, "nvme0").expect("found");
    assert_eq!(dir.kind, HwmonKind::Nvme);
    assert!(dir.path.ends_with("hwmon2"));
    let r = hwmon::read(&dir);
    assert_eq!(r.source, Some(Source::Hwmon));
    assert_eq!(
        r.temperature_c,
        Some(50),
        "323 K as nvme-cli and smartctl show it"
    );
    assert_eq!(r.warning_temp_c, Some(70));
    assert_eq!(r.critical_temp_c, Some(100));
    assert_eq!(
        r.sensors_c,
        vec![
            SensorTemp { sensor: 1, c: 38 },
            SensorTemp { sensor: 3, c: 32 }
        ]
    );
    assert!(
        hwmon::find_nvme(&root, "nvme1").is_none(),
        "no such controller"
    );
}

#[test]
fn old_layout_with_273_offset() {
    let t = old_layout();
    let root = SysRoot::under(t.root());
    let dir = hwmon::find_nvme(&root, "nvme0").expect("found");
    assert!(dir.path.ends_with("hwmon1"));
    let r = hwmon::read(&dir);
    assert_eq!(r.temperature_c, Some(50));
    assert_eq!(r.warning_temp_c, Some(70));
    assert_eq!(r.critical_temp_c, Some(100));
    assert!(r.sensors_c.is_empty());
}

#[test]
fn the_temperature_alarm_is_a_health_reason() {
    let t = new_layout();
    let root = SysRoot::under(t.root());
    let dir = hwmon::find_nvme(&root, "nvme0").expect("found");
    assert!(
        hwmon::read(&dir).health.is_unknown(),
        "no alarm file: no verdict"
    );
    t.file(&format!("{PCI}/nvme/nvme0/hwmon2/temp1_alarm"), "0\n");
    assert!(
        hwmon::read(&dir).health.is_unknown(),
        "no alarm says nothing of the other warning bits"
    );
    t.file(&format!("{PCI}/nvme/nvme0/hwmon2/temp1_alarm"), "1\n");
    let h = hwmon::read(&dir).health;
    assert_eq!(h.passed, Some(false));
    assert_eq!(h.reasons, vec![HealthReason::TemperatureThreshold]);
}

#[test]
fn both_offsets_agree_on_every_kelvin() {
    for k in 250i64..400 {
        let newer = k * 1000 - 273_150;
        let older = (k - 273) * 1000;
        let want = (k - 273) as i32;
        assert_eq!(
            hwmon::millideg_to_c(HwmonKind::Nvme, newer),
            want,
            "{k} K newer"
        );
        assert_eq!(
            hwmon::millideg_to_c(HwmonKind::Nvme, older),
            want,
            "{k} K older"
        );
    }
    assert_eq!(hwmon::millideg_to_c(HwmonKind::Drivetemp, 36_000), 36);
}

fn drivetemp_tree() -> Tree {
    let t = Tree::new();
    let scsi = "sys/devices/pci0000:00/0000:00:1f.2/ata1/host0/target0:0:0/0:0:0:0";
    t.mkdir(&format!("{scsi}/block/sda"));
    t.link("sys/block/sda", &format!("{scsi}/block/sda"));
    t.link(&format!("{scsi}/block/sda/device"), scsi);
    let hw = format!("{scsi}/hwmon/hwmon3");
    t.file(&format!("{hw}/name"), "drivetemp\n");
    t.file(&format!("{hw}/temp1_input"), "36000\n");
    t.file(&format!("{hw}/temp1_max"), "70000\n");
    t.file(&format!("{hw}/temp1_crit"), "85000\n");
    t.link(&format!("{hw}/device"), scsi);
    t.link("sys/class/hwmon/hwmon3", &hw);
    t.mkdir("dev");
    t
}

#[test]
fn drivetemp_matches_the_scsi_disk() {
    let t = drivetemp_tree();
    let root = SysRoot::under(t.root());
    let dir = hwmon::find_drivetemp(&root, "sda").expect("found");
    assert_eq!(dir.kind, HwmonKind::Drivetemp);
    let r = hwmon::read(&dir);
    assert_eq!(r.temperature_c, Some(36));
    assert_eq!(r.warning_temp_c, Some(70));
    assert_eq!(r.critical_temp_c, Some(85));
    assert!(hwmon::find_drivetemp(&root, "sdb").is_none());
    assert!(hwmon::find_nvme(&root, "nvme0").is_none());
}

#[test]
fn sensor_without_input_is_no_reading() {
    let t = new_layout();
    std::fs::remove_file(t.path(&format!("{PCI}/nvme/nvme0/hwmon2/temp1_input"))).expect("rm");
    let root = SysRoot::under(t.root());
    let r = hwmon::read(&hwmon::find_nvme(&root, "nvme0").expect("found"));
    assert_eq!(r.source, None);
    assert_eq!(r.temperature_c, None);
    assert_eq!(r.notes.len(), 1);
}

fn disk(name: &str, transport: Transport, ctrl: Option<&str>) -> Disk {
    Disk {
        name: name.into(),
        model: Some("from sysfs".into()),
        serial: None,
        firmware: None,
        capacity_bytes: 0,
        logical_block_size: 512,
        physical_block_size: 512,
        rotational: false,
        transport,
        nvme_controller: ctrl.map(str::to_string),
        backing_file: None,
        zones: None,
    }
}

#[test]
fn nvme_without_admin_access_falls_back_to_hwmon() {
    // No /dev/nvme0 in the tree: the admin commands cannot run; hwmon answers.
    let t = new_layout();
    t.mkdir("dev");
    let root = SysRoot::under(t.root());
    let r = read_smart(&root, &disk("nvme0n1", Transport::Nvme, Some("nvme0")));
    assert_eq!(r.source, Some(Source::Hwmon));
    assert_eq!(r.temperature_c, Some(50));
    assert_eq!(r.sensors_c.len(), 2);
    assert_eq!(r.critical_temp_c, Some(100));
    assert_eq!(r.data_units_read, None, "hwmon has no SMART counters");
    assert_eq!(r.power_state_max_w, None);
    assert_eq!(r.model.as_deref(), Some("from sysfs"));
    assert_eq!(
        r.notes.len(),
        1,
        "one note for the admin commands: {:?}",
        r.notes
    );
    assert!(
        r.notes[0].contains("no NVMe admin commands"),
        "{:?}",
        r.notes
    );
    assert!(r.health.is_unknown());
    t.file(&format!("{PCI}/nvme/nvme0/hwmon2/temp1_alarm"), "1\n");
    let r = read_smart(&root, &disk("nvme0n1", Transport::Nvme, Some("nvme0")));
    assert_eq!(
        r.health.reasons,
        vec![HealthReason::TemperatureThreshold],
        "hwmon's alarm reaches the reading"
    );
}

#[test]
fn sata_without_smartctl_answer_falls_back_to_drivetemp() {
    // smartctl (installed or not) cannot read <tree>/dev/sda; drivetemp answers.
    let t = drivetemp_tree();
    let root = SysRoot::under(t.root());
    let r = read_smart(&root, &disk("sda", Transport::Sata, None));
    assert_eq!(r.source, Some(Source::Hwmon));
    assert_eq!(r.temperature_c, Some(36));
    assert!(
        r.notes.iter().any(|n| n.starts_with("no SMART: ")
            && (n.contains("smartctl did not read the device")
                || n.contains("smartctl is not installed"))),
        "{:?}",
        r.notes
    );
}
