//! The selection-string parser: any text parses or gives an `IndexError`; a parsed
//! selection applied to a small array, in every mode and dialect, gives a transform or an
//! error, and a small resulting transform maps every cell inside the array.
#![no_main]

use libfuzzer_sys::fuzz_target;
use zarrflow::index::{Dialect, IndexTransform, Selection, SelectionMode};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(selection) = Selection::parse(text) else {
        return;
    };
    let shape = [7u64, 5, 3];
    let base = IndexTransform::from_shape(&shape).expect("identity");
    for mode in [
        SelectionMode::Basic,
        SelectionMode::Outer,
        SelectionMode::Vectorized,
    ] {
        for dialect in [Dialect::Positional, Dialect::Literal] {
            let Ok(t) = base.select(&selection, mode, dialect) else {
                continue;
            };
            let _ = t.selection_repr();
            if t.domain().num_elements().is_some_and(|n| n <= 4096) {
                t.for_each_mapped(|_, out| {
                    for (o, n) in out.iter().zip(shape) {
                        assert!(*o >= 0 && (*o as u64) < n, "{out:?} outside {shape:?}");
                    }
                })
                .expect("mapping a valid transform");
            }
        }
    }
});
