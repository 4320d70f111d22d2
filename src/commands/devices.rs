//! `drivescope devices`: every block device with model, size, transport, whether it or a
//! partition is mounted or in use, and which telemetry sources answer for it.

use crate::cli::DevicesArgs;
use serde::Serialize;

use super::error::CommandError;
use crate::drive::mounts::{mounts, swaps, Mount};
use crate::drive::{disks_under, list_disks, Disk, SysRoot, Transport};
use crate::telemetry::collect::no_smart_note;
use crate::telemetry::{blockstat, hwmon, nvme, smartctl};
use crate::units::format_size;

/// One row of the listing.
#[derive(Debug, Serialize)]
pub struct DeviceRow {
    #[serde(flatten)]
    pub disk: Disk,
    /// How it or a partition is in use ("vda mounted on /"); empty when free.
    pub in_use: Vec<String>,
    /// Telemetry sources that answered.
    pub sources: Vec<String>,
    /// Why others did not.
    pub notes: Vec<String>,
}

fn dev_names(root: &SysRoot, disk: &str) -> Vec<(String, String)> {
    // (name, "major:minor") of the disk and its partitions.
    let b = root.block(disk);
    let mut out = Vec::new();
    if let Some(d) = SysRoot::attr(&b.join("dev")) {
        out.push((disk.to_string(), d));
    }
    if let Ok(rd) = std::fs::read_dir(&b) {
        for e in rd.filter_map(|e| e.ok()) {
            let p = e.path();
            if p.join("partition").exists() {
                if let Some(d) = SysRoot::attr(&p.join("dev")) {
                    out.push((e.file_name().to_string_lossy().into_owned(), d));
                }
            }
        }
    }
    out.sort();
    out
}

fn in_use(root: &SysRoot, disk: &str, all: &[Mount], swap: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    for (name, dev) in dev_names(root, disk) {
        for m in all
            .iter()
            .filter(|m| format!("{}:{}", m.major, m.minor) == dev)
        {
            out.push(format!("{name} mounted on {}", m.mount_point.display()));
        }
        let holders_dir = if name == disk {
            root.block(disk).join("holders")
        } else {
            root.block(disk).join(&name).join("holders")
        };
        if let Ok(rd) = std::fs::read_dir(holders_dir) {
            for h in rd.filter_map(|e| e.ok()) {
                out.push(format!(
                    "{name} held by {}",
                    h.file_name().to_string_lossy()
                ));
            }
        }
        if swap.iter().any(|s| s == &format!("/dev/{name}")) {
            out.push(format!("{name} is swap"));
        }
    }
    out.dedup();
    out
}

fn probe_sources(root: &SysRoot, disk: &Disk) -> (Vec<String>, Vec<String>) {
    let mut ok = Vec::new();
    let mut notes = Vec::new();
    match (disk.transport, disk.nvme_controller.as_deref()) {
        (Transport::Nvme, Some(ctrl)) => {
            match nvme::NvmeDevice::open(&root.dev.join(ctrl)).and_then(|d| d.smart_log()) {
                Ok(_) => ok.push("nvme_admin".to_string()),
                Err(e) => notes.push(format!("nvme_admin: {e}")),
            }
            match hwmon::find_nvme(root, ctrl) {
                Some(_) => ok.push("hwmon".to_string()),
                None => notes.push("hwmon: no nvme sensor".to_string()),
            }
        }
        (Transport::Sata | Transport::Scsi | Transport::Usb, _) => {
            match smartctl::run(&root.dev.join(&disk.name), smartctl::SMARTCTL_TIMEOUT) {
                Ok(_) => ok.push("smartctl".to_string()),
                Err(e) => notes.push(format!("smartctl: {e}")),
            }
            match hwmon::find_drivetemp(root, &disk.name) {
                Some(_) => ok.push("hwmon".to_string()),
                None => notes.push("hwmon: no drivetemp sensor".to_string()),
            }
        }
        (t, _) => {
            let under = disks_under(root, &disk.name);
            if under.iter().any(|d| d != &disk.name) {
                notes.push(format!(
                    "no SMART: {} is a virtual device over {}; the telemetry is theirs",
                    disk.name,
                    under.join(", ")
                ));
            } else {
                notes.push(no_smart_note(disk, t));
            }
        }
    }
    match blockstat::read_at(root, &disk.name) {
        Ok(_) => ok.push("blockstat".to_string()),
        Err(e) => notes.push(format!("blockstat: {e}")),
    }
    (ok, notes)
}

/// Lists the block devices of `root`.
pub fn collect(root: &SysRoot) -> Vec<DeviceRow> {
    let all = mounts(root);
    let swap = swaps(root);
    list_disks(root)
        .into_iter()
        // Unattached loop devices (no backing file, size 0) are slots, not devices.
        .filter(|d| !(d.transport == Transport::Loop && d.backing_file.is_none()))
        .map(|disk| {
            let in_use = in_use(root, &disk.name, &all, &swap);
            let (sources, notes) = probe_sources(root, &disk);
            DeviceRow {
                disk,
                in_use,
                sources,
                notes,
            }
        })
        .collect()
}

/// Runs `drivescope devices`.
pub fn run(args: DevicesArgs) -> Result<(), CommandError> {
    let rows = collect(&SysRoot::real());
    if args.json {
        println!("{}", serde_json::to_string_pretty(&rows)?);
        return Ok(());
    }
    println!(
        "{:<10} {:>10} {:<9} {:<28} {:<24} SOURCES",
        "NAME", "SIZE", "TRANSPORT", "MODEL", "IN USE"
    );
    for r in &rows {
        let d = &r.disk;
        let used = if r.in_use.is_empty() {
            "no".to_string()
        } else {
            r.in_use.join("; ")
        };
        println!(
            "{:<10} {:>10} {:<9} {:<28} {:<24} {}",
            d.name,
            format_size(d.capacity_bytes),
            d.transport.as_str(),
            d.model
                .clone()
                .or_else(|| d.backing_file.as_ref().map(|b| b.display().to_string()))
                .unwrap_or_else(|| "-".to_string()),
            used,
            r.sources.join(", ")
        );
        for n in &r.notes {
            println!("{:<10} note: {n}", "");
        }
    }
    Ok(())
}
