//! The TOON writer (`text_format = "toon"`) over any JSON document.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some(value) = toolsmith_fuzz::json(data) else {
        return;
    };
    let _ = toolsmith_model::toon::encode(&value);
});
