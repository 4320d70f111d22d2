//! libFuzzer target: any bytes as a keys.yaml; what loads has no conflicting binding.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    if let Ok(k) = drivescope::app::Keymap::from_yaml(&text, "keys.yaml") {
        assert!(k.conflict().is_none());
    }
});
