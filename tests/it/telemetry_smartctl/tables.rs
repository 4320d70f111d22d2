//! Every fixture as `drivescope smart` prints it: the fields its kind of device has and
//! none it never has, the ATA attribute table and the SCSI error counter log as smartctl
//! lays them out, NVMe data units in bytes. The exact values were read from the fixtures'
//! JSON by hand (jq).

use drivescope::telemetry::text::reading_text;

use super::{fixture, REAL};

/// Every real and derived fixture's text.
fn every_text() -> Vec<(String, String)> {
    let derived = std::fs::read_dir(super::path("derived"))
        .expect("derived fixtures")
        .filter_map(|e| e.ok())
        .map(|e| format!("derived/{}", e.file_name().to_string_lossy()))
        .filter(|n| n.ends_with(".json"));
    REAL.iter()
        .map(|n| n.to_string())
        .chain(derived)
        .map(|n| {
            let t = reading_text(&fixture(&n));
            (n, t)
        })
        .collect()
}

#[test]
fn every_fixture_prints_the_table_of_its_kind() {
    let all = every_text();
    assert!(all.len() >= 15, "{} fixtures", all.len());
    for (name, text) in &all {
        let kind = name.trim_start_matches("derived/");
        let nvme = kind.starts_with("nvme");
        let ata = kind.starts_with("sata");
        let scsi = kind.starts_with("sas") || kind.starts_with("raid");
        assert!(nvme || ata || scsi, "{name}");
        assert!(text.starts_with("health "), "{name}: health first:\n{text}");
        assert_eq!(
            text.contains("ID# ATTRIBUTE_NAME          FLAGS    VALUE WORST THRESH FAIL RAW_VALUE"),
            ata,
            "{name}: the attribute table on ATA alone:\n{text}"
        );
        assert_eq!(text.contains("data units written"), nvme, "{name}:\n{text}");
        assert_eq!(text.contains("critical warning"), nvme, "{name}:\n{text}");
        if !nvme {
            // What the drive has but the output lacks may be unknown (SCSI power-on time,
            // a RAID volume's verdict); nothing that only NVMe has.
            for field in [
                "available spare",
                "media errors",
                "unsafe shutdowns",
                "measured power",
            ] {
                assert!(!text.contains(field), "{name}: {field}:\n{text}");
            }
            if ata {
                assert!(!text.contains(" unknown\n"), "{name}:\n{text}");
            }
            assert!(!text.contains("power state"), "{name}:\n{text}");
        }
    }
}

fn text_of(name: &str) -> String {
    reading_text(&fixture(name))
}

fn has(text: &str, line: &str) {
    assert!(text.contains(&format!("{line}\n")), "{line:?} in:\n{text}");
}

#[test]
fn ata_attributes_as_smartctl_prints_them() {
    // jq '.ata_smart_attributes.table[] | select(.id==5)': value 100 worst 100 thresh 10,
    // flags "PO--CK", raw 0; 241: raw 385165652077 (x 512 bytes); 194 raw.string
    // "26 (0 23 0 0 0)"; 240 raw.string "12523h+17m+08.635s".
    let t = text_of("sata_seagate_exos_x16_ST16000NM001G.json");
    has(
        &t,
        "  5 Reallocated_Sector_Ct   PO--CK   100   100   010    -    0                       0 sectors",
    );
    has(
        &t,
        "241 Total_LBAs_Written      ------   100   253   000    -    385165652077            179.36TiB (512-byte LBAs)",
    );
    has(
        &t,
        "194 Temperature_Celsius     -O---K   026   040   000    -    26 (0 23 0 0 0)         26 °C",
    );
    has(
        &t,
        "240 Head_Flying_Hours       ------   100   253   000    -    12523h+17m+08.635s      12523 h (521.8 days)",
    );
    has(
        &t,
        "  1 Raw_Read_Error_Rate     POSR--   084   064   044    -    239307048",
    );
    has(&t, "power-on hours       13114");
    // The Micron's 194 packs min/max above byte 0: smartctl's "24 (Min/Max 13/35)".
    let t = text_of("sata_micron_5300_MTFDDAK1T9TDS.json");
    has(
        &t,
        "194 Temperature_Celsius     -O---K   076   065   000    -    24 (Min/Max 13/35)      24 °C",
    );
    has(
        &t,
        "199 UDMA_CRC_Error_Count    -O--CK   100   100   000    -    24",
    );
    // A failing attribute shows NOW, as smartctl's FAIL column does.
    let t = text_of("derived/sata_exos_x16_attr5_failing_now.json");
    has(
        &t,
        "  5 Reallocated_Sector_Ct   PO--CK   001   001   010    NOW  65528                   65528 sectors",
    );
}

#[test]
fn nvme_counters_in_bytes_with_the_count_beside() {
    // jq .nvme_smart_health_information_log: data_units_written 1969459 (x 512000 bytes),
    // num_err_log_entries 22, unsafe_shutdowns 12, media_errors 0.
    let t = text_of("nvme_samsung_970_evo_plus_250GB.json");
    has(
        &t,
        "data units written   1008363008000 bytes (939.11GiB), 1969459 data units",
    );
    has(
        &t,
        "data units read      1036817408000 bytes (965.61GiB), 2025034 data units",
    );
    has(&t, "error log entries    22");
    has(&t, "unsafe shutdowns     12");
    has(&t, "media errors         0");
    has(&t, "warning temp time    0 min");
    has(&t, "critical temp time   0 min");
}

#[test]
fn scsi_grown_defects_and_error_counters() {
    // jq .scsi_error_counter_log.read: eccfast 0, eccdelayed 374, rereads 374, total 374,
    // invocations 376, gigabytes "2657380.347", uncorrected 0; scsi_grown_defect_list 0.
    let t = text_of("sas_toshiba_mg08_behind_megaraid_1.json");
    has(&t, "grown defects        0");
    has(&t, "critical threshold   65 °C");
    has(
        &t,
        "read:          0      374       374       374        376    2657380.347           0",
    );
    has(
        &t,
        "verify:        0      160       160       160        160     607904.662           0",
    );
    assert!(!t.contains("ID# ATTRIBUTE_NAME"), "{t}");
}
