//! The NVMe SMART / Health log and Identify Controller decoders on byte buffers laid out
//! as the NVMe Base Specification gives them.

use drivescope::telemetry::nvme::reading::{apply_identify, apply_smart_log};
use drivescope::telemetry::nvme::{IdentifyController, PowerState, SmartLog};
use drivescope::telemetry::{Health, HealthReason, SensorTemp, SmartReading, ThermalThrottle};

fn put16(b: &mut [u8], off: usize, v: u16) {
    b[off..off + 2].copy_from_slice(&v.to_le_bytes());
}
fn put32(b: &mut [u8], off: usize, v: u32) {
    b[off..off + 4].copy_from_slice(&v.to_le_bytes());
}
fn put128(b: &mut [u8], off: usize, v: u128) {
    b[off..off + 16].copy_from_slice(&v.to_le_bytes());
}

fn smart_log_buffer() -> Vec<u8> {
    let mut b = vec![0u8; 512];
    b[0] = 0b0000_0010; // temperature warning
    put16(&mut b, 1, 323); // composite 323 K
    b[3] = 97;
    b[4] = 10;
    b[5] = 142; // percentage used beyond 100
    put128(&mut b, 32, 170_056);
    put128(&mut b, 48, 1_248_078);
    put128(&mut b, 64, 412_435);
    put128(&mut b, 80, 92_595_817);
    put128(&mut b, 112, 32);
    put128(&mut b, 128, 2884);
    put128(&mut b, 144, 30);
    put128(&mut b, 160, 2);
    put16(&mut b, 200, 311); // sensor 1: 38 °C
    put16(&mut b, 202, 0); // sensor 2 absent
    put16(&mut b, 204, 306); // sensor 3: 33 °C
    put32(&mut b, 216, 5);
    put32(&mut b, 220, 1);
    put32(&mut b, 224, 120);
    put32(&mut b, 228, 7);
    b
}

#[test]
fn smart_log_fields_at_spec_offsets() {
    let log = SmartLog::decode(&smart_log_buffer()).expect("decodes");
    assert_eq!(log.composite_temp_k, 323);
    assert_eq!(log.percentage_used, 142);
    assert_eq!(log.power_on_hours, 2884);
    assert_eq!(log.sensors_k, [311, 0, 306, 0, 0, 0, 0, 0]);
    let mut r = SmartReading::default();
    apply_smart_log(&mut r, &log);
    assert_eq!(r.temperature_c, Some(50));
    assert_eq!(r.critical_warning, Some(2));
    assert_eq!(r.health.passed, Some(false), "bit 1 fails the drive");
    assert_eq!(r.health.reasons, vec![HealthReason::TemperatureThreshold]);
    assert_eq!(r.available_spare, Some(97));
    assert_eq!(r.percentage_used, Some(142), "may exceed 100");
    // Sensors that read 0 are absent, and the others keep their numbers.
    assert_eq!(
        r.sensors_c,
        vec![
            SensorTemp { sensor: 1, c: 38 },
            SensorTemp { sensor: 3, c: 33 }
        ]
    );
    assert_eq!(r.data_units_read, Some(170_056));
    assert_eq!(r.data_units_written, Some(1_248_078));
    assert_eq!(r.host_read_commands, Some(412_435));
    assert_eq!(r.host_write_commands, Some(92_595_817));
    assert_eq!(r.power_cycles, Some(32));
    assert_eq!(r.unsafe_shutdowns, Some(30));
    assert_eq!(r.media_errors, Some(2));
    assert_eq!(
        r.thermal_throttle,
        Some(ThermalThrottle {
            tmt1_transitions: 5,
            tmt2_transitions: 1,
            tmt1_seconds: 120,
            tmt2_seconds: 7
        })
    );
    assert_eq!(r.power_w, None, "interval power 0: not reported");
}

#[test]
fn absent_composite_and_huge_counters() {
    let mut b = vec![0u8; 512];
    put128(&mut b, 32, u128::MAX);
    let log = SmartLog::decode(&b).expect("decodes");
    let mut r = SmartReading::default();
    apply_smart_log(&mut r, &log);
    assert_eq!(r.temperature_c, None, "0 K is no reading, not -273 °C");
    assert_eq!(
        r.health,
        Health::judge(Some(true), Vec::new()),
        "no warning bit: passed"
    );
    assert!(r.sensors_c.is_empty());
    assert_eq!(r.data_units_read, Some(u64::MAX), "saturates, never wraps");
}

#[test]
fn measured_power_scales() {
    let mut b = smart_log_buffer();
    put32(&mut b, 240, (0b10 << 16) | 512); // 512 × 0.01 W
    assert_eq!(
        SmartLog::decode(&b).expect("log").measured_power_w(),
        Some(5.12)
    );
    put32(&mut b, 240, (0b01 << 16) | 45_000); // 45000 × 0.0001 W
    let w = SmartLog::decode(&b).expect("log").measured_power_w();
    assert!((w.expect("reported") - 4.5).abs() < 1e-9);
    put32(&mut b, 240, 512); // scale 00b: not reported
    assert_eq!(SmartLog::decode(&b).expect("log").measured_power_w(), None);
    put32(&mut b, 240, (0b11 << 16) | 512); // scale 11b: reserved
    assert_eq!(SmartLog::decode(&b).expect("log").measured_power_w(), None);
}

#[test]
fn short_buffers_are_errors() {
    assert!(SmartLog::decode(&[0u8; 100]).is_err());
    assert!(IdentifyController::decode(&[0u8; 2048]).is_err());
}

fn ascii(b: &mut [u8], off: usize, len: usize, s: &str) {
    let field = &mut b[off..off + len];
    field.fill(b' ');
    field[..s.len()].copy_from_slice(s.as_bytes());
}

fn psd(b: &mut [u8], i: usize, mp: u16, flags: u8, idle: (u16, u8), active: (u16, u8)) {
    let o = 2048 + 32 * i;
    put16(b, o, mp);
    b[o + 3] = flags;
    put32(b, o + 4, 5);
    put32(b, o + 8, 10);
    put16(b, o + 16, idle.0);
    b[o + 18] = idle.1 << 6;
    put16(b, o + 20, active.0);
    b[o + 22] = active.1 << 6;
}

fn identify_buffer() -> Vec<u8> {
    let mut b = vec![0u8; 4096];
    ascii(&mut b, 4, 20, "TEST0001");
    ascii(&mut b, 24, 40, "QEMU NVMe Ctrl");
    ascii(&mut b, 64, 8, "7.2.22");
    b[263] = 2; // NPSS: three states
    put16(&mut b, 266, 343);
    put16(&mut b, 268, 373);
    put16(&mut b, 322, 0b1); // HCTMA: host controlled thermal management supported
    put16(&mut b, 324, 323); // MNTMT 50 °C
    put16(&mut b, 326, 368); // MXTMT 95 °C
    psd(&mut b, 0, 2500, 0b00, (0, 0), (0, 0)); // 25.00 W, MXPS 0
    psd(&mut b, 1, 35_000, 0b01, (500, 0b10), (21_000, 0b01)); // 3.5 W, MXPS 1
    psd(&mut b, 2, 90, 0b11, (0, 0), (0, 0)); // 0.009 W, non-operational
    b
}

#[test]
fn identify_fields_and_power_state_descriptors() {
    let id = IdentifyController::decode(&identify_buffer()).expect("decodes");
    assert_eq!(id.serial.as_deref(), Some("TEST0001"));
    assert_eq!(id.model.as_deref(), Some("QEMU NVMe Ctrl"));
    assert_eq!(id.firmware.as_deref(), Some("7.2.22"));
    assert_eq!((id.wctemp_k, id.cctemp_k), (343, 373));
    assert!(id.hctm_supported, "HCTMA bit 0");
    assert_eq!((id.mntmt_k, id.mxtmt_k), (323, 368));
    assert_eq!(id.power_states.len(), 3);
    let close = |a: f64, b: f64| (a - b).abs() < 1e-9;
    let p0: &PowerState = &id.power_states[0];
    assert!(close(p0.max_power_w, 25.0), "MXPS 0: 0.01 W units");
    assert!(!p0.non_operational);
    assert_eq!(p0.idle_power_w, None, "scale 00b: not reported");
    let p1 = &id.power_states[1];
    assert!(close(p1.max_power_w, 3.5), "MXPS 1: 0.0001 W units");
    assert!(close(p1.idle_power_w.expect("idle"), 5.0));
    assert!(close(p1.active_power_w.expect("active"), 2.1));
    assert_eq!((p1.entry_latency_us, p1.exit_latency_us), (5, 10));
    let p2 = &id.power_states[2];
    assert!(p2.non_operational);
    assert!(close(p2.max_power_w, 0.009));
    assert!(id.power_state(3).is_none());

    let mut r = SmartReading {
        power_state: Some(1),
        ..Default::default()
    };
    apply_identify(&mut r, &id);
    assert_eq!(r.warning_temp_c, Some(70));
    assert_eq!(r.critical_temp_c, Some(100));
    assert!(close(r.power_state_max_w.expect("ceiling"), 3.5));
    assert_eq!(
        r.power_w, None,
        "a ceiling is never shown as measured power"
    );
}

#[test]
fn identify_without_thresholds_or_current_state() {
    let mut b = identify_buffer();
    put16(&mut b, 266, 0);
    put16(&mut b, 268, 0);
    b[263] = 255; // more than fit: clamp to 32 descriptors, no panic
    let id = IdentifyController::decode(&b).expect("decodes");
    assert_eq!(id.power_states.len(), 32);
    let mut r = SmartReading::default();
    apply_identify(&mut r, &id);
    assert_eq!(r.warning_temp_c, None);
    assert_eq!(r.critical_temp_c, None);
    assert_eq!(r.power_state_max_w, None, "no current state: no ceiling");
}

// --- The thermal management commands, sent to a stand-in controller --------------------

mod thermal {
    use std::cell::RefCell;
    use std::path::Path;

    use drivescope::telemetry::nvme::reading::{
        read_with, AdminCommands, NotSupported, NvmeMemory, OptionalCommand,
    };
    use drivescope::telemetry::nvme::thermal_mgmt::{ThresholdKind, ThresholdSensor};
    use drivescope::telemetry::nvme::{NvmeError, Refusal};
    use drivescope::telemetry::{
        OcpSmartHealth, SensorThresholds, SmartReading, ThermalManagement, ThrottleStatus,
    };

    use super::{identify_buffer, put16, put32, smart_log_buffer};

    /// What QEMU's controller answers an unsupported feature or log page: Invalid Field
    /// in Command with Do Not Retry.
    const INVALID_FIELD: i32 = 0x4002;
    /// Command specific Invalid Log Page (SCT 1, SC 09h).
    const INVALID_LOG_PAGE: i32 = 0x0109;
    /// The OCP log page GUID AFD514C97C6F4F9CA4F2BFEA2810AFC5h, as bytes 496–511 hold it.
    const OCP_GUID: [u8; 16] = [
        0xC5, 0xAF, 0x10, 0x28, 0xEA, 0xBF, 0xF2, 0xA4, 0x9C, 0x4F, 0x6F, 0x7C, 0xC9, 0x14, 0xD5,
        0xAF,
    ];

    fn status(status: i32) -> NvmeError {
        NvmeError::Status {
            what: "test",
            status,
        }
    }

    /// A controller whose answers the test sets, logging each command it is sent.
    struct Fake {
        identify: Vec<u8>,
        smart: Vec<u8>,
        power_state: Result<u8, fn() -> NvmeError>,
        hctm: Result<u32, i32>,
        /// dword 0 for a Get Features 04h's dword 11, or the status refusing it.
        threshold: fn(u32) -> Result<u32, i32>,
        ocp: Result<Vec<u8>, i32>,
        sent: RefCell<Vec<String>>,
    }

    impl Fake {
        fn log(&self, what: String) {
            self.sent.borrow_mut().push(what);
        }
        fn sent(&self, prefix: &str) -> Vec<String> {
            self.sent
                .borrow()
                .iter()
                .filter(|c| c.starts_with(prefix))
                .cloned()
                .collect()
        }
        fn clear(&self) {
            self.sent.borrow_mut().clear();
        }
    }

    impl AdminCommands for Fake {
        fn power_state(&self) -> Result<u8, NvmeError> {
            self.log("02h".into());
            self.power_state.map_err(|e| e())
        }
        fn identify_controller(&self) -> Result<Vec<u8>, NvmeError> {
            self.log("identify".into());
            Ok(self.identify.clone())
        }
        fn smart_log(&self) -> Result<Vec<u8>, NvmeError> {
            self.log("log 02h".into());
            Ok(self.smart.clone())
        }
        fn host_thermal_management(&self) -> Result<u32, NvmeError> {
            self.log("10h".into());
            self.hctm.map_err(status)
        }
        fn temperature_threshold(&self, cdw11: u32) -> Result<u32, NvmeError> {
            self.log(format!("04h {cdw11:#x}"));
            (self.threshold)(cdw11).map_err(status)
        }
        fn ocp_smart_log(&self) -> Result<Vec<u8>, NvmeError> {
            self.log("log C0h".into());
            self.ocp.clone().map_err(status)
        }
    }

    /// QEMU 7.2's controller: no HCTM (HCTMA 0), no sensors besides the composite, the
    /// composite's over threshold 343 K and under threshold 0 K, no C0h log.
    fn qemu_like() -> Fake {
        let mut identify = identify_buffer();
        put16(&mut identify, 322, 0);
        put16(&mut identify, 324, 0);
        put16(&mut identify, 326, 0);
        let mut smart = smart_log_buffer();
        smart[200..216].fill(0);
        Fake {
            identify,
            smart,
            power_state: Ok(0),
            hctm: Err(INVALID_FIELD),
            threshold: |cdw11| match cdw11 {
                0 => Ok(343),
                0x10_0000 => Ok(0),
                _ => Err(INVALID_FIELD),
            },
            ocp: Err(INVALID_FIELD),
            sent: RefCell::new(Vec::new()),
        }
    }

    fn ocp_log() -> Vec<u8> {
        let mut b = vec![0u8; 512];
        b[96] = 7; // throttling events
        b[97] = 2; // throttling at level 2
        b[104..112].copy_from_slice(&12_345u64.to_le_bytes());
        put32(&mut b, 112, 3);
        b[222] = 71;
        put16(&mut b, 494, 4);
        b[496..512].copy_from_slice(&OCP_GUID);
        b
    }

    /// A datacenter drive with everything: HCTM (TMT1 353 K, TMT2 363 K; settable 323–368
    /// K), sensors 1 and 3 with thresholds of their own, the OCP log.
    fn datacenter() -> Fake {
        Fake {
            identify: identify_buffer(),
            smart: smart_log_buffer(),
            power_state: Ok(1),
            hctm: Ok((353 << 16) | 363),
            // Over: 358 K + TMPSEL; under: 268 K + TMPSEL.
            threshold: |cdw11| {
                let tmpsel = (cdw11 >> 16) & 0xF;
                match (cdw11 >> 20) & 0b11 {
                    0 => Ok(358 + tmpsel),
                    _ => Ok(268 + tmpsel),
                }
            },
            ocp: Ok(ocp_log()),
            sent: RefCell::new(Vec::new()),
        }
    }

    fn read(dev: &Fake, memory: &mut NvmeMemory) -> SmartReading {
        read_with(dev, Path::new("/dev/nvme0"), memory)
    }

    fn notes_about<'a>(r: &'a SmartReading, what: &str) -> Vec<&'a str> {
        r.notes
            .iter()
            .filter(|n| n.contains(what))
            .map(String::as_str)
            .collect()
    }

    #[test]
    fn every_figure_from_a_drive_that_has_them() {
        let dev = datacenter();
        let mut memory = NvmeMemory::default();
        let r = read(&dev, &mut memory);
        assert_eq!(
            r.thermal_management,
            Some(ThermalManagement {
                supported: true,
                tmt1_c: Some(80),
                tmt2_c: Some(90),
                mntmt_c: Some(50),
                mxtmt_c: Some(95),
            })
        );
        // The composite (TMPSEL 0) and the sensors the SMART log reports (1 and 3; 2 reads
        // 0 K, absent), each over (THSEL 00b) and under (THSEL 01b).
        assert_eq!(
            dev.sent("04h"),
            [
                "04h 0x0",
                "04h 0x100000",
                "04h 0x10000",
                "04h 0x110000",
                "04h 0x30000",
                "04h 0x130000"
            ]
        );
        let th = |sensor: u8| SensorThresholds {
            sensor,
            over_c: Some(85 + i32::from(sensor)),
            under_c: Some(-5 + i32::from(sensor)),
        };
        assert_eq!(r.temperature_thresholds, [th(0), th(1), th(3)]);
        assert_eq!(
            r.ocp_smart,
            Some(OcpSmartHealth {
                media_written_bytes: Some(0),
                media_read_bytes: Some(0),
                throttle_status: ThrottleStatus::Throttled { level: 2 },
                throttle_events: 7,
                max_temperature_c: Some(71),
                pcie_correctable_errors: 12_345,
                incomplete_shutdowns: 3,
                log_page_version: 4,
            })
        );
        assert!(r.notes.is_empty(), "{:?}", r.notes);
        assert!(memory.unsupported().is_empty());
        // Supported commands are read again on the next poll: the host may change them.
        dev.clear();
        let again = read(&dev, &mut memory);
        assert_eq!(dev.sent("10h").len(), 1);
        assert_eq!(dev.sent("04h").len(), 6);
        assert_eq!(dev.sent("log C0h").len(), 1);
        assert_eq!(again, r);
    }

    #[test]
    fn qemus_controller_asked_for_its_c0h_log_once() {
        let dev = qemu_like();
        let mut memory = NvmeMemory::default();
        let first = read(&dev, &mut memory);
        assert_eq!(
            first.thermal_management,
            Some(ThermalManagement {
                supported: false,
                ..Default::default()
            })
        );
        assert!(
            dev.sent("10h").is_empty(),
            "HCTMA 0: Get Features 10h not sent"
        );
        assert_eq!(dev.sent("04h"), ["04h 0x0", "04h 0x100000"]);
        assert_eq!(
            first.temperature_thresholds,
            [SensorThresholds {
                sensor: 0,
                over_c: Some(70),
                under_c: None,
            }],
            "an under threshold of 0 K is none"
        );
        assert_eq!(first.ocp_smart, None);
        assert_eq!(dev.sent("log C0h").len(), 1);
        assert_eq!(
            memory.unsupported()[0].why,
            NotSupported::Refused(Refusal::InvalidField)
        );
        let said = notes_about(&first, "C0h");
        assert_eq!(
            said,
            [
                "no OCP SMART extended log (Get Log Page C0h): the controller does not support \
              it (invalid field in command); not asked again"
            ]
        );
        assert_eq!(first.notes.len(), 1, "{:?}", first.notes);
        // Polls after: the log is not asked for again; the reading still says why it has
        // none, once, and everything else is read as before.
        for _ in 0..3 {
            dev.clear();
            let r = read(&dev, &mut memory);
            assert!(dev.sent("log C0h").is_empty());
            assert_eq!(dev.sent("log 02h").len(), 1);
            assert_eq!(dev.sent("04h").len(), 2);
            assert_eq!(r.notes, first.notes);
            assert_eq!(r.temperature_thresholds, first.temperature_thresholds);
        }
    }

    #[test]
    fn refusals_are_remembered_each_for_what_was_refused() {
        let mut dev = datacenter();
        dev.hctm = Err(INVALID_FIELD);
        // Sensor 3 has no thresholds of its own; C0h is a vendor's own log.
        dev.threshold = |cdw11| match (cdw11 >> 16) & 0xF {
            3 => Err(INVALID_FIELD),
            _ => Ok(350),
        };
        let mut vendor = ocp_log();
        vendor[511] ^= 0xFF;
        dev.ocp = Ok(vendor);
        let mut memory = NvmeMemory::default();
        let first = read(&dev, &mut memory);
        assert_eq!(
            first.thermal_management.map(|t| (t.supported, t.tmt1_c)),
            Some((true, None))
        );
        assert_eq!(
            first
                .temperature_thresholds
                .iter()
                .map(|t| t.sensor)
                .collect::<Vec<_>>(),
            [0, 1],
            "sensor 3 refused both"
        );
        let commands: Vec<OptionalCommand> =
            memory.unsupported().iter().map(|u| u.command).collect();
        assert_eq!(
            commands,
            [
                OptionalCommand::HostThermalManagement,
                OptionalCommand::TemperatureThreshold(
                    ThresholdSensor::Sensor(3),
                    ThresholdKind::Over
                ),
                OptionalCommand::TemperatureThreshold(
                    ThresholdSensor::Sensor(3),
                    ThresholdKind::Under
                ),
                OptionalCommand::OcpSmartLog,
            ]
        );
        assert_eq!(memory.unsupported()[3].why, NotSupported::OtherC0Log);
        assert_eq!(notes_about(&first, "Get Features 10h").len(), 1);
        assert_eq!(notes_about(&first, "sensor 3").len(), 2);
        assert_eq!(notes_about(&first, "vendor's own").len(), 1);
        dev.clear();
        let second = read(&dev, &mut memory);
        assert!(dev.sent("10h").is_empty());
        assert!(dev.sent("log C0h").is_empty());
        assert_eq!(
            dev.sent("04h"),
            ["04h 0x0", "04h 0x100000", "04h 0x10000", "04h 0x110000"]
        );
        assert_eq!(second.notes, first.notes);
    }

    #[test]
    fn a_composite_without_thresholds_stops_the_feature_and_log_page_statuses() {
        let mut dev = qemu_like();
        dev.smart = smart_log_buffer(); // sensors 1 and 3
        dev.threshold = |_| Err(INVALID_FIELD);
        dev.ocp = Err(INVALID_LOG_PAGE);
        let mut memory = NvmeMemory::default();
        let r = read(&dev, &mut memory);
        assert_eq!(dev.sent("04h"), ["04h 0x0"], "the feature is not supported");
        assert!(r.temperature_thresholds.is_empty());
        assert_eq!(
            memory.unsupported()[1].why,
            NotSupported::Refused(Refusal::InvalidLogPage)
        );
        assert_eq!(r.notes.len(), 2, "{:?}", r.notes);
    }

    #[test]
    fn other_failures_are_retried_and_no_privilege_sends_nothing_more() {
        let mut dev = qemu_like();
        dev.ocp = Err(0x0006); // internal error: may answer next time
        let mut memory = NvmeMemory::default();
        let r = read(&dev, &mut memory);
        assert!(memory.unsupported().is_empty());
        assert_eq!(notes_about(&r, "0x6").len(), 1, "{:?}", r.notes);
        dev.clear();
        read(&dev, &mut memory);
        assert_eq!(dev.sent("log C0h").len(), 1, "asked again");

        dev.power_state = Err(|| NvmeError::PermissionDenied {
            what: "Get Features (power management)",
        });
        dev.clear();
        let r = read(&dev, &mut NvmeMemory::default());
        assert!(dev.sent("04h").is_empty() && dev.sent("log C0h").is_empty());
        assert_eq!(r.notes.len(), 1, "{:?}", r.notes);
    }

    #[test]
    fn new_fields_round_trip_and_old_readings_load() {
        let dev = datacenter();
        let r = read(&dev, &mut NvmeMemory::default());
        let yaml = serde_yaml::to_string(&r).expect("yaml");
        assert!(yaml.contains("state: throttled"), "{yaml}");
        let back: SmartReading = serde_yaml::from_str(&yaml).expect("reads back");
        assert_eq!(back, r);
        let json = serde_json::to_string(&r).expect("json");
        assert_eq!(
            serde_json::from_str::<SmartReading>(&json).expect("json"),
            r
        );
        let old: SmartReading =
            serde_json::from_str(r#"{"temperature_c": 40, "sensors_c": [], "notes": []}"#)
                .expect("a reading from before these fields");
        assert_eq!(old.thermal_management, None);
        assert!(old.temperature_thresholds.is_empty());
        assert_eq!(old.ocp_smart, None);
    }
}
