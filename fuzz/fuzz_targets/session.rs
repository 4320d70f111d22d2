//! libFuzzer target: any bytes as a session file; what loads must replay.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let path = std::path::Path::new("fuzz.yaml");
    if let Ok(loaded) = drivescope::session::parse(path, &text) {
        let _ = drivescope::dashboard::replay::timeline(&loaded.session);
    }
});
