//! A saved smartctl output that is not what it claims is an error that says what was
//! expected or quotes smartctl: JSON that is not a smartctl output, an output whose exit
//! status says it read nothing, one with only messages; a byte-order mark and UTF-16 are
//! read, UTF-32 is refused by name, and a file over the cap is refused unread.

use std::path::{Path, PathBuf};

use drivescope::telemetry::smartctl::{
    decode_file, Encoding, JsonShape, Refusal, SmartctlError, TextProblem, MAX_OUTPUT_BYTES,
};

use super::{fixture, path};

fn write(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, bytes).expect("write");
    p
}

#[test]
fn unreadable_and_unparsable_files() {
    let dir = tempfile::tempdir().expect("tempdir");
    let e = decode_file(&write(dir.path(), "bad.json", b"not json")).expect_err("bad JSON");
    assert!(e.to_string().contains("not smartctl JSON"), "{e}");
    let e = decode_file(&dir.path().join("missing.json")).expect_err("missing");
    assert!(e.to_string().contains("cannot read"), "{e}");
}

#[test]
fn json_that_is_not_a_smartctl_output() {
    let dir = tempfile::tempdir().expect("tempdir");
    for (text, shape) in [
        ("[]", JsonShape::Array),
        ("[{\"smartctl\": {}}]", JsonShape::Array),
        ("null", JsonShape::Null),
        ("42", JsonShape::Number),
        ("\"smartctl\"", JsonShape::String),
        ("{}", JsonShape::ObjectWithoutSmartctl),
        // Nothing of smartctl's: `{"model_name": "X"}` is read now, its header cut away
        // (telemetry_smartctl::edges).
        (
            "{\"temperature\": {\"current\": 30}}",
            JsonShape::ObjectWithoutSmartctl,
        ),
    ] {
        let p = write(dir.path(), "x.json", text.as_bytes());
        match decode_file(&p) {
            Err(e @ SmartctlError::NotSmartctl { found, .. }) => {
                assert_eq!(found, shape, "{text}");
                let msg = e.to_string();
                assert!(
                    msg.contains("expected a JSON object with a \"smartctl\" object"),
                    "{msg}"
                );
                assert!(msg.contains(&format!("found {shape}")), "{msg}");
            }
            other => panic!("{text}: {other:?}"),
        }
    }
}

#[test]
fn an_output_that_read_nothing_quotes_smartctl() {
    let dir = tempfile::tempdir().expect("tempdir");
    let open_failed = r#"{"json_format_version": [1, 0],
        "smartctl": {"version": [7, 3], "exit_status": 2, "messages": [
            {"string": "Smartctl open device: /dev/sdz failed: No such device", "severity": "error"}]},
        "device": {"name": "/dev/sdz", "info_name": "/dev/sdz", "type": "scsi", "protocol": "SCSI"},
        "local_time": {"time_t": 1234567890}}"#;
    let e = decode_file(&write(dir.path(), "open.json", open_failed.as_bytes()))
        .expect_err("device open failed");
    assert!(
        matches!(
            e,
            SmartctlError::Refused {
                why: Refusal::DeviceOpen { status: 2 },
                unprivileged: false,
                ..
            }
        ),
        "{e:?}"
    );
    let msg = e.to_string();
    assert!(
        msg.contains("\"Smartctl open device: /dev/sdz failed: No such device\""),
        "{msg}"
    );
    let bad_args = r#"{"smartctl": {"exit_status": 1, "messages": [
        {"string": "=======> UNRECOGNIZED OPTION: z", "severity": "error"}]}}"#;
    let e = decode_file(&write(dir.path(), "args.json", bad_args.as_bytes())).expect_err("bit 0");
    assert!(
        matches!(
            e,
            SmartctlError::Refused {
                why: Refusal::CommandLine { status: 1 },
                ..
            }
        ),
        "{e:?}"
    );
    let only = r#"{"smartctl": {"messages": [{"string": "Permission denied"}]}}"#;
    let e = decode_file(&write(dir.path(), "only.json", only.as_bytes())).expect_err("messages");
    assert!(
        matches!(
            e,
            SmartctlError::Refused {
                why: Refusal::OnlyMessages,
                ..
            }
        ),
        "{e:?}"
    );
    assert!(e.to_string().contains("\"Permission denied\""), "{e}");
    let silent = r#"{"smartctl": {"exit_status": 2}}"#;
    let e = decode_file(&write(dir.path(), "silent.json", silent.as_bytes())).expect_err("bit 1");
    assert!(e.to_string().contains("smartctl gave no message"), "{e}");
}

#[test]
fn a_byte_order_mark_and_utf16_are_read() {
    let name = "nvme_micron_7450_MTFDKCC3T2TFS.json";
    let want = fixture(name);
    let text = std::fs::read_to_string(path(name)).expect("fixture");
    let dir = tempfile::tempdir().expect("tempdir");
    let mut bom = vec![0xEF, 0xBB, 0xBF];
    bom.extend(text.as_bytes());
    let utf16le = |with_bom: bool| {
        let mut b = if with_bom {
            vec![0xFF, 0xFE]
        } else {
            Vec::new()
        };
        b.extend(text.encode_utf16().flat_map(u16::to_le_bytes));
        b
    };
    let mut utf16be = vec![0xFE, 0xFF];
    utf16be.extend(text.encode_utf16().flat_map(u16::to_be_bytes));
    for (name, bytes) in [
        ("bom.json", bom),
        ("powershell.json", utf16le(true)),
        ("utf16le.json", utf16le(false)),
        ("utf16be.json", utf16be),
    ] {
        let r = decode_file(&write(dir.path(), name, &bytes)).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(r, want, "{name}");
    }
}

#[test]
fn utf32_and_broken_text_are_refused_by_name() {
    let dir = tempfile::tempdir().expect("tempdir");
    let utf32: Vec<u8> = [0xFF, 0xFE, 0, 0]
        .into_iter()
        .chain("{}".chars().flat_map(|c| u32::from(c).to_le_bytes()))
        .collect();
    let e = decode_file(&write(dir.path(), "u32.json", &utf32)).expect_err("UTF-32");
    assert!(
        matches!(
            e,
            SmartctlError::Text {
                problem: TextProblem::Unsupported(Encoding::Utf32Le),
                ..
            }
        ),
        "{e:?}"
    );
    assert!(e.to_string().contains("UTF-32LE"), "{e}");
    let latin1 = b"{\"model_name\": \"Gr\xF6\xDFe\"}";
    let e = decode_file(&write(dir.path(), "latin1.json", latin1)).expect_err("not UTF-8");
    assert!(
        e.to_string().contains("not valid UTF-8 text (at byte 18)"),
        "{e}"
    );
}

#[test]
fn a_file_over_the_cap_is_refused_unread() {
    let dir = tempfile::tempdir().expect("tempdir");
    let p = dir.path().join("huge.json");
    let f = std::fs::File::create(&p).expect("create");
    // Sparse: no disk space, and a reader that read it would take seconds and the memory.
    f.set_len(MAX_OUTPUT_BYTES + 1).expect("set_len");
    let e = decode_file(&p).expect_err("too large");
    assert!(
        matches!(
            e,
            SmartctlError::Input(drivescope::user_file::InputError::TooLarge { .. })
        ),
        "{e:?}"
    );
    assert!(e.to_string().contains("larger than the 4MiB"), "{e}");
}
