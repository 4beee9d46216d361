//! TensorStore transform JSON and ndsel messages: any text loads or gives a `JsonError`; a
//! loaded transform's canonical JSON loads again to a transform of the same domain.
#![no_main]

use libfuzzer_sys::fuzz_target;
use zarrflow::index::IndexTransform;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(t) = IndexTransform::from_json_str(text) else {
        return;
    };
    let json = t.to_json();
    let again = IndexTransform::from_json(&json).expect("canonical JSON must load");
    assert_eq!(again.domain().shape(), t.domain().shape());
    for o in 0..t.output_rank() {
        let _ = t.output_range(o);
    }
    if t.domain().num_elements().is_some_and(|n| n <= 4096) {
        let _ = t.for_each_mapped(|_, _| {});
    }
});
