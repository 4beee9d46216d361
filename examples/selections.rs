//! The index model on a built-in example: NumPy-style selections become index transforms,
//! chains of selections compose into one transform, and the transform is applied to an
//! in-memory array.
//!
//! Run with `cargo run --example selections`.

use ndarray::{ArrayD, IxDyn};
use zarrflow::index::{Dialect, IndexError, IndexTransform, Selection, SelectionMode};
use zarrflow::sel;

fn main() -> Result<(), IndexError> {
    // A 6 x 8 "stored" array whose values tell their own coordinates: 10 * row + column.
    let source = ArrayD::from_shape_fn(IxDyn(&[6, 8]), |i| (10 * i[0] + i[1]) as i64);
    let array = IndexTransform::from_shape(&[6, 8])?;

    let steps: [(&str, SelectionMode); 3] = [
        ("1:, ::-2", SelectionMode::Basic),
        ("[3, 0, 3], :", SelectionMode::Outer),
        ("[0, 2], [1, 0]", SelectionMode::Vectorized),
    ];
    let mut view = array.clone();
    for (text, mode) in steps {
        let selection = Selection::parse(text)?;
        view = view.select(&selection, mode, Dialect::Positional)?;
        println!("after {mode:?} [{text}]:");
        println!("  transform: {view}");
        println!(
            "  values:    {:?}",
            view.gather_from(&source)?.into_raw_vec_and_offset().0
        );
    }

    // The same view written with the Rust macro, in the literal (TensorStore) dialect:
    // `..;-2` is the whole axis from its end with step 2, as in ndarray's `s![]`, and index
    // values are the view's own coordinates (rows 1..6 keep their numbers, so row 0 is gone).
    let rows = array.index(&sel![1.., ..;-2])?;
    let literal = rows.oindex(&sel![[4, 1, 4], ..])?;
    println!("literal oindex view: {literal}");
    println!(
        "literal row 0 -> {}",
        rows.oindex(&sel![[0], ..]).unwrap_err()
    );

    // Bad input gets a typed error naming the offending part.
    for bad in ["0:5:0", "[1.5]", "7, 0"] {
        let err = Selection::parse(bad)
            .and_then(|s| array.select(&s, SelectionMode::Basic, Dialect::Positional));
        println!(
            "[{bad}] -> {}",
            err.map(|_| "ok".to_string())
                .unwrap_or_else(|e| e.to_string())
        );
    }
    Ok(())
}
