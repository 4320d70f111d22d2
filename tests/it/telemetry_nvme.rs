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
