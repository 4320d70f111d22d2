//! libFuzzer target: any bytes as a theme file.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let _ = drivescope::ui::theme::Theme::from_yaml(&text, "t.yaml");
});
