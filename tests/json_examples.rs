//! Unit tests of the JSON layer: the §12 TensorStore examples, the §13 ndsel examples,
//! the rank limit, TensorStore's minimal form, lowering rules, serialisation from the
//! engine and bad input (each a typed error whose message names the offending part).

use ndarray::{ArrayD, IxDyn};
use serde_json::{Value, json};
use zarrflow::index::json::{
    Bound, IndexValue, JsonError, Message, Reason, TransformJson, canonicalize, normalize,
    normalize_str,
};
use zarrflow::index::{IndexArray, IndexDomain, IndexTransform, OutputIndexMap};
use zarrflow::sel;

fn load(v: Value) -> IndexTransform {
    IndexTransform::from_json(&v).unwrap_or_else(|e| panic!("{v}: {e}"))
}

fn load_err(v: Value) -> JsonError {
    match IndexTransform::from_json(&v) {
        Ok(t) => panic!("{v} loaded as {t}"),
        Err(e) => e,
    }
}

fn norm_err(v: Value) -> JsonError {
    match normalize(&v) {
        Ok(b) => panic!("{v} normalized to {b}"),
        Err(e) => e,
    }
}

/// Asserts the reason and that the message names every fragment.
fn expect(e: &JsonError, reason: Reason, fragments: &[&str]) {
    assert_eq!(e.reason, reason, "{e}");
    let msg = e.to_string();
    assert!(msg.starts_with(&format!("{}: ", reason.code())), "{msg}");
    for f in fragments {
        assert!(msg.contains(f), "{msg:?} does not mention {f:?}");
    }
}

fn dim(input_dimension: usize, offset: i64, stride: i64) -> OutputIndexMap {
    OutputIndexMap::dimension(input_dimension, offset, stride)
}

// ---------------------------------------------------------------- §12 TensorStore examples

#[test]
fn tensorstore_example_1_is_x_from_2() {
    let v = json!({"input_inclusive_min": [2], "input_exclusive_max": [10],
                   "output": [{"input_dimension": 0}]});
    let t = load(v.clone());
    let x = IndexTransform::from_shape(&[10]).unwrap();
    assert_eq!(t, x.index(&sel![2..]).unwrap());
    assert_eq!(t.domain().interval(0), (2, 10));
    assert_eq!(t.output(), &[dim(0, 0, 1)]);
    assert_eq!(
        canonicalize(&v).unwrap(),
        json!({"input_rank": 1, "input_inclusive_min": [2], "input_exclusive_max": [10],
               "input_labels": [""],
               "output": [{"offset": 0, "stride": 1, "input_dimension": 0}]})
    );
    assert_eq!(t.to_json(), canonicalize(&v).unwrap());
}

#[test]
fn tensorstore_example_2_is_translated_slice() {
    let v = json!({"input_inclusive_min": [0], "input_exclusive_max": [4],
                   "output": [{"input_dimension": 0, "offset": 2}]});
    let t = load(v);
    let x = IndexTransform::from_shape(&[10]).unwrap();
    let expected = x
        .index(&sel![2..6])
        .unwrap()
        .translate_domain_to(&[0])
        .unwrap();
    assert_eq!(t, expected);
    assert_eq!(t.output(), &[dim(0, 2, 1)]);
    assert_eq!(t.apply(&[3]).unwrap(), vec![5]);
}

#[test]
fn tensorstore_example_3_three_map_kinds_and_implicit_bound() {
    let v = json!({"input_rank": 2, "input_inclusive_min": [0, 0], "input_shape": [[4], 3],
                   "input_labels": ["t", "x"],
                   "output": [{"input_dimension": 0, "offset": 5, "stride": 2},
                              {"index_array": [[6, 0, 2]], "index_array_bounds": [0, 9]},
                              {"offset": 3}]});
    // Message layer: the implicit upper bound on `t` is kept, the bounds carried.
    let body = TransformJson::parse(&v).unwrap();
    assert_eq!(
        body.exclusive_max(),
        &[Bound::new(IndexValue::Finite(4), true), Bound::explicit(3)]
    );
    assert_eq!(
        canonicalize(&v).unwrap(),
        json!({"input_rank": 2, "input_inclusive_min": [0, 0], "input_exclusive_max": [[4], 3],
               "input_labels": ["t", "x"],
               "output": [{"offset": 5, "stride": 2, "input_dimension": 0},
                          {"offset": 0, "stride": 1, "index_array": [[6, 0, 2]],
                           "index_array_bounds": [0, 9]},
                          {"offset": 3}]})
    );
    // Engine: implicit bound lowered by value, labels kept, (t, x) -> (5 + 2t, A[x], 3).
    let t = load(v);
    assert_eq!(t.domain().shape(), vec![4, 3]);
    assert_eq!(
        t.domain().labels(),
        Some(&["t".to_string(), "x".to_string()][..])
    );
    assert_eq!(t.apply(&[1, 0]).unwrap(), vec![7, 6, 3]);
    assert_eq!(t.apply(&[3, 2]).unwrap(), vec![11, 2, 3]);
    match &t.output()[1] {
        OutputIndexMap::Array { array, .. } => assert_eq!(array.shape(), &[1, 3]),
        m => panic!("expected an index array map, got {m}"),
    }
    // Serialised back: explicit bounds, full-rank nested array, bounds ["-inf", "+inf"].
    let back = t.to_json();
    assert_eq!(back["input_exclusive_max"], json!([4, 3]));
    assert_eq!(
        back["output"][1],
        json!({"offset": 0, "stride": 1, "index_array": [[6, 0, 2]],
               "index_array_bounds": ["-inf", "+inf"]})
    );
    assert_eq!(load(back), t);
}

// ---------------------------------------------------------------- §13 ndsel examples

fn slice1(start: i64, stop: i64, step: i64) -> IndexTransform {
    load(json!({"kind": "slice", "start": [start], "stop": [stop], "step": [step]}))
}

#[test]
fn slice_10_20_2() {
    let t = slice1(10, 20, 2);
    assert_eq!(t.domain().interval(0), (5, 10));
    assert_eq!(t.output(), &[dim(0, 0, 2)]);
}

#[test]
fn slice_15_5_minus_2() {
    let t = slice1(15, 5, -2);
    assert_eq!(t.domain().interval(0), (-7, -2));
    assert_eq!(t.output(), &[dim(0, 1, -2)]);
    // Source points 15, 13, 11, 9, 7.
    let pts: Vec<i64> = (-7..-2).map(|i| t.apply(&[i]).unwrap()[0]).collect();
    assert_eq!(pts, vec![15, 13, 11, 9, 7]);
}

#[test]
fn slice_minus_9_5_2() {
    let t = slice1(-9, 5, 2);
    assert_eq!(t.domain().interval(0), (-4, 3));
    assert_eq!(t.output(), &[dim(0, -1, 2)]);
    assert_eq!(t.apply(&[-4]).unwrap(), vec![-9]);
}

#[test]
fn box_inclusive_max() {
    let t = load(json!({"kind": "box", "inclusive_min": [2], "inclusive_max": [9]}));
    assert_eq!(t.domain().interval(0), (2, 10));
    assert_eq!(t.output(), &[dim(0, 0, 1)]);
}

#[test]
fn points_empty() {
    let v = json!({"kind": "points", "coords": []});
    let t = load(v.clone());
    assert_eq!(t.domain().interval(0), (0, 0));
    assert!(t.output().is_empty());
    assert_eq!(normalize(&v).unwrap()["output"], json!([]));
}

#[test]
fn points_lower_to_a_vindex() {
    let t = load(json!({"kind": "points", "coords": [[1, 10], [2, 20], [3, 30]]}));
    let x = IndexTransform::from_shape(&[5, 40]).unwrap();
    let v = x.vindex(&sel![[1, 2, 3], [10, 20, 30]]).unwrap();
    assert_eq!(t, v);
}

#[test]
fn point_lowers_to_constants() {
    let t = load(json!({"kind": "point", "coords": [4, -7]}));
    assert_eq!(t.input_rank(), 0);
    assert_eq!(t.apply(&[]).unwrap(), vec![4, -7]);
}

#[test]
fn normalize_str_reads_text() {
    let b =
        normalize_str(r#"{"kind": "slice", "start": [10], "stop": [20], "step": [2]}"#).unwrap();
    assert_eq!(b["input_inclusive_min"], json!([5]));
    assert_eq!(
        Message::parse_str(r#"{"kind": "box"}"#).unwrap().kind(),
        "box"
    );
}

// ---------------------------------------------------------------- rank limit

#[test]
fn rank_32_accepted_33_rejected() {
    for (n, ok) in [(32usize, true), (33, false)] {
        let cases = [
            json!({"kind": "box", "shape": vec![2; n]}),
            json!({"kind": "transform", "input_rank": n}),
            json!({"input_shape": vec![1; n]}),
            json!({"kind": "point", "coords": vec![0; n]}),
            json!({"kind": "points", "coords": [vec![0; n]]}),
            json!({"kind": "slice", "start": vec![0; n], "stop": vec![1; n]}),
            json!({"kind": "transform", "input_rank": 0,
                   "output": vec![json!({"offset": 1}); n]}),
        ];
        for v in cases {
            match TransformJson::parse(&v) {
                Ok(b) if ok => assert!(b.rank() == n || b.output().len() == n),
                Err(e) if !ok => expect(&e, Reason::RankMismatch, &["33", "maximum rank 32"]),
                r => panic!("rank {n}: {v} gave {r:?}"),
            }
        }
    }
    // Lowering at rank 32 works; an index array nested 33 deep is rejected.
    let t = load(json!({"kind": "box", "shape": vec![1; 32]}));
    assert_eq!(t.input_rank(), 32);
    let mut deep = json!(0);
    for _ in 0..33 {
        deep = json!([deep]);
    }
    let e = norm_err(json!({"kind": "transform", "output": [{"index_array": deep}]}));
    expect(&e, Reason::RankMismatch, &["output[0].index_array", "32"]);
}

// ---------------------------------------------------------------- TensorStore minimal form

#[test]
fn tensorstore_minimal_forms() {
    // A fully implicit-infinite domain is `{"input_rank": n}` in TensorStore's to_json.
    assert_eq!(
        canonicalize(&json!({"input_rank": 2})).unwrap(),
        json!({"input_rank": 2, "input_inclusive_min": [["-inf"], ["-inf"]],
               "input_exclusive_max": [["+inf"], ["+inf"]], "input_labels": ["", ""],
               "output": [{"offset": 0, "stride": 1, "input_dimension": 0},
                          {"offset": 0, "stride": 1, "input_dimension": 1}]})
    );
    // Shape without a minimum: explicit 0; an upper bound alone: implicit -inf minimum.
    let b = TransformJson::parse(&json!({"input_shape": [3]})).unwrap();
    assert_eq!(b.inclusive_min(), &[Bound::explicit(0)]);
    let b = TransformJson::parse(&json!({"input_exclusive_max": [5]})).unwrap();
    assert_eq!(b.inclusive_min(), &[Bound::new(IndexValue::NegInf, true)]);
    // The same members with kind "transform" follow ndsel: missing minimum = explicit 0.
    let b =
        TransformJson::parse(&json!({"kind": "transform", "input_exclusive_max": [5]})).unwrap();
    assert_eq!(b.inclusive_min(), &[Bound::explicit(0)]);
    // TensorStore's documentation example (mixed explicit/implicit, infinite bounds).
    let ts = json!({"input_inclusive_min": ["-inf", 7, ["-inf"], [8]],
                    "input_exclusive_max": ["+inf", 11, ["+inf"], [17]],
                    "input_labels": ["x", "y", "z", ""],
                    "output": [{"offset": 3}, {"stride": 2, "input_dimension": 2},
                               {"offset": 7, "index_array": [[[[1]], [[2]], [[3]], [[4]]]],
                                "index_array_bounds": [1, 4]}]});
    let c = canonicalize(&ts).unwrap();
    assert_eq!(c["input_inclusive_min"], json!(["-inf", 7, ["-inf"], [8]]));
    assert_eq!(
        c["output"][1],
        json!({"offset": 0, "stride": 2, "input_dimension": 2})
    );
    assert_eq!(canonicalize(&c).unwrap(), c);
    // Infinite bounds cannot be lowered.
    expect(
        &load_err(ts),
        Reason::InvalidJson,
        &["input_inclusive_min[0]", "-inf", "finite"],
    );
    // A bare body may not carry `kind`; an ndsel message may not omit it.
    let e = TransformJson::from_tensorstore(&json!({"kind": "transform"})).unwrap_err();
    expect(&e, Reason::UnknownField, &["kind"]);
    expect(
        &norm_err(json!({"input_rank": 1})),
        Reason::InvalidJson,
        &["kind"],
    );
}

#[test]
fn constant_maps_drop_redundant_members() {
    let b = normalize(&json!({"kind": "transform", "input_rank": 0,
                              "output": [{"offset": 4, "stride": 3,
                                          "index_array_bounds": [0, 1]}]}))
    .unwrap();
    assert_eq!(b["output"], json!([{"offset": 4}]));
}

// ---------------------------------------------------------------- lowering rules

#[test]
fn lower_rank_index_arrays_are_widened_by_prepending() {
    let t = load(json!({"input_shape": [2, 3], "output": [{"index_array": [7, 8, 9]}]}));
    match &t.output()[0] {
        OutputIndexMap::Array { array, .. } => assert_eq!(array.shape(), &[1, 3]),
        m => panic!("{m}"),
    }
    assert_eq!(t.apply(&[1, 2]).unwrap(), vec![9]);
}

#[test]
fn empty_index_array_goes_on_the_single_empty_axis() {
    let t = load(json!({"input_shape": [3, 0], "output": [{"index_array": []}]}));
    match &t.output()[0] {
        OutputIndexMap::Array { array, .. } => assert_eq!(array.shape(), &[1, 0]),
        m => panic!("{m}"),
    }
    // Two empty axes, or none: no place for it.
    let e = load_err(json!({"input_shape": [0, 0], "output": [{"index_array": []}]}));
    expect(
        &e,
        Reason::RankMismatch,
        &["output[0].index_array", "found 2"],
    );
    let e = load_err(json!({"input_shape": [2, 3], "output": [{"index_array": []}]}));
    expect(
        &e,
        Reason::RankMismatch,
        &["output[0].index_array", "found 0"],
    );
}

#[test]
fn engine_invariant_failures_are_rank_mismatch() {
    // Wrong extent along a varying axis.
    let e = load_err(json!({"input_shape": [4], "output": [{"index_array": [1, 2, 3]}]}));
    expect(&e, Reason::RankMismatch, &["output 0", "extent 3"]);
    // Index array of higher rank than the input.
    let e = load_err(json!({"input_shape": [3], "output": [{"index_array": [[1, 2, 3]]}]}));
    expect(
        &e,
        Reason::RankMismatch,
        &["output[0].index_array", "rank 2"],
    );
    // input_dimension out of range.
    let e = norm_err(json!({"kind": "transform", "input_rank": 1,
                            "output": [{"input_dimension": 1}]}));
    expect(&e, Reason::RankMismatch, &["output[0].input_dimension = 1"]);
}

#[test]
fn labels_all_empty_load_as_none() {
    let t = load(json!({"kind": "box", "shape": [2, 2], "labels": ["", ""]}));
    assert_eq!(t.domain().labels(), None);
    let t = load(json!({"kind": "box", "shape": [2, 2], "labels": ["a", ""]}));
    assert_eq!(
        t.domain().labels(),
        Some(&["a".to_string(), String::new()][..])
    );
    assert_eq!(t.to_json()["input_labels"], json!(["a", ""]));
}

#[test]
fn index_array_bounds_are_checked_on_raw_values_before_offset_and_stride() {
    // 5 is within [0, 9]; 100 + 2 * 5 is not, and does not need to be.
    let t = load(
        json!({"input_shape": [2], "output": [{"index_array": [5, 9], "offset": 100,
                        "stride": 2, "index_array_bounds": [0, 9]}]}),
    );
    assert_eq!(t.apply(&[0]).unwrap(), vec![110]);
    // One-sided bounds.
    load(
        json!({"input_shape": [2], "output": [{"index_array": [-50, 10],
                "index_array_bounds": ["-inf", 10]}]}),
    );
    let e = load_err(
        json!({"input_shape": [2], "output": [{"index_array": [-50, 11],
                            "index_array_bounds": ["-inf", 10]}]}),
    );
    expect(
        &e,
        Reason::InvalidJson,
        &[
            "output[0].index_array",
            "value 11",
            "index_array_bounds [-inf, 10]",
        ],
    );
    let e = load_err(
        json!({"input_shape": [3], "output": [{"index_array": [0, 12, 3],
                            "index_array_bounds": [0, 9]}]}),
    );
    expect(&e, Reason::InvalidJson, &["value 12", "[0, 9]"]);
    // A singleton is checked too (before it collapses to a constant).
    let e = load_err(json!({"input_shape": [1], "output": [{"index_array": [-1],
                            "index_array_bounds": [0, 9]}]}));
    expect(&e, Reason::InvalidJson, &["value -1"]);
}

// ---------------------------------------------------------------- bad input

#[test]
fn malformed_json_text() {
    let e = IndexTransform::from_json_str(r#"{"kind": "box", "shape": [3"#).unwrap_err();
    expect(&e, Reason::InvalidJson, &["malformed JSON", "line 1"]);
    let e = normalize_str("[1, 2,]").unwrap_err();
    expect(&e, Reason::InvalidJson, &["malformed JSON"]);
    let e = IndexTransform::from_json_str("[1, 2]").unwrap_err();
    expect(&e, Reason::InvalidJson, &["expected an object"]);
}

#[test]
fn float_index_arrays() {
    let v = json!({"input_shape": [2], "output": [{"index_array": [1, 2.5]}]});
    let e = load_err(v.clone());
    expect(
        &e,
        Reason::InvalidJson,
        &["output[0].index_array[1]", "float 2.5"],
    );
    // Integral floats are floats too.
    let e = IndexTransform::from_json_str(
        r#"{"input_shape": [2], "output": [{"index_array": [1.0, 2]}]}"#,
    )
    .unwrap_err();
    expect(
        &e,
        Reason::InvalidJson,
        &["output[0].index_array[0]", "float"],
    );
    let e = load_err(json!({"input_shape": [2], "output": [{"index_array": [1, "2"]}]}));
    expect(
        &e,
        Reason::InvalidJson,
        &["output[0].index_array[1]", "string"],
    );
    let e = load_err(json!({"input_shape": [2], "output": [{"index_array": 3}]}));
    expect(
        &e,
        Reason::InvalidJson,
        &["output[0].index_array", "expected an array"],
    );
}

#[test]
fn ragged_index_arrays() {
    // ndsel carries index arrays verbatim (shape validation is deferred) ...
    let v = json!({"input_shape": [2, 2], "output": [{"index_array": [[1, 2], [3]]}]});
    assert!(canonicalize(&v).is_ok());
    // ... but lowering needs a rectangular array.
    let e = load_err(v);
    expect(
        &e,
        Reason::InvalidJson,
        &["output[0].index_array[1]", "ragged"],
    );
    let e = load_err(json!({"input_shape": [2, 2],
                            "output": [{"offset": 1}, {"index_array": [[1, 2], 3]}]}));
    expect(
        &e,
        Reason::InvalidJson,
        &["output[1].index_array[1]", "ragged"],
    );
    let e = load_err(json!({"input_shape": [2, 1], "output": [{"index_array": [[1], [[2]]]}]}));
    expect(
        &e,
        Reason::InvalidJson,
        &["output[0].index_array[1][0]", "ragged"],
    );
}

#[test]
fn booleans_are_not_integers() {
    let cases = [
        (json!({"kind": "point", "coords": [1, true]}), "coords[1]"),
        (
            json!({"kind": "slice", "start": [0], "stop": [false]}),
            "stop[0]",
        ),
        (json!({"kind": "box", "shape": [[true]]}), "shape[0][0]"),
        (
            json!({"kind": "transform", "input_rank": true}),
            "input_rank",
        ),
        (
            json!({"kind": "transform", "output": [{"offset": true}]}),
            "output[0].offset",
        ),
        (
            json!({"input_rank": 1, "output": [{"index_array": [false]}]}),
            "output[0].index_array[0]",
        ),
        (
            json!({"input_rank": 1, "output": [{"input_dimension": true}]}),
            "output[0].input_dimension",
        ),
    ];
    for (v, path) in cases {
        let e = TransformJson::parse(&v).unwrap_err();
        expect(&e, Reason::InvalidJson, &[path, "boolean"]);
        expect(&load_err(v), Reason::InvalidJson, &[path]);
    }
}

#[test]
fn integers_outside_i64() {
    let e = IndexTransform::from_json_str(r#"{"kind": "point", "coords": [9223372036854775808]}"#)
        .unwrap_err();
    expect(
        &e,
        Reason::InvalidJson,
        &["coords[0]", "9223372036854775808", "i64"],
    );
    let e =
        IndexTransform::from_json_str(r#"{"kind": "point", "coords": [0, -9223372036854775809]}"#)
            .unwrap_err();
    expect(&e, Reason::InvalidJson, &["coords[1]", "float"]);
    let e = normalize_str(r#"{"kind": "point", "coords": [99999999999999999999]}"#).unwrap_err();
    expect(&e, Reason::InvalidJson, &["coords[0]"]);
    // The extremes themselves are exact.
    let b = normalize_str(
        r#"{"kind": "point", "coords": [9223372036854775807, -9223372036854775808]}"#,
    )
    .unwrap();
    assert_eq!(
        b["output"],
        json!([{"offset": i64::MAX}, {"offset": i64::MIN}])
    );
    // Derived bounds that leave i64.
    let e = norm_err(json!({"kind": "box", "inclusive_max": [i64::MAX]}));
    expect(
        &e,
        Reason::InvalidJson,
        &["inclusive_max[0]", "exceeds i64"],
    );
    let e = norm_err(json!({"kind": "box", "inclusive_min": [1], "shape": [i64::MAX]}));
    expect(&e, Reason::InvalidJson, &["dimension 0", "exceeds i64"]);
    let e = norm_err(
        json!({"kind": "slice", "start": [i64::MIN], "stop": [i64::MIN],
                            "step": [-1]}),
    );
    expect(&e, Reason::InvalidJson, &["slice dimension 0", "i64"]);
    // offset + stride * value leaving i64 on load.
    let e = load_err(
        json!({"input_shape": [2], "output": [{"index_array": [0, i64::MAX],
                            "stride": 2}]}),
    );
    expect(
        &e,
        Reason::InvalidJson,
        &["output[0].index_array", "overflows"],
    );
}

#[test]
fn other_reasons_name_the_member() {
    expect(
        &norm_err(json!({"kind": "box", "shapee": [3]})),
        Reason::UnknownField,
        &["\"shapee\""],
    );
    expect(
        &norm_err(json!({"kind": "transform", "output": [{"offset": 0, "bogus": 1}]})),
        Reason::UnknownField,
        &["output[0]", "\"bogus\""],
    );
    expect(
        &norm_err(json!({"kind": "Box"})),
        Reason::UnknownKind,
        &["\"Box\""],
    );
    expect(
        &norm_err(json!({"kind": ""})),
        Reason::UnknownKind,
        &["\"\""],
    );
    expect(
        &norm_err(json!({"kind": 3})),
        Reason::InvalidJson,
        &["kind", "integer"],
    );
    expect(
        &norm_err(json!({"kind": "box", "shape": [3], "inclusive_max": [3]})),
        Reason::MultipleUpperBounds,
        &["inclusive_max", "shape"],
    );
    expect(
        &norm_err(json!({"kind": "slice", "start": [0, 0], "stop": [1, 1], "step": [1, 0]})),
        Reason::StepZero,
        &["step[1]"],
    );
    expect(
        &norm_err(json!({"kind": "slice", "start": [5], "stop": [6], "step": [-1]})),
        Reason::BoundsOutOfOrder,
        &["dimension 0", "stop 6", "start 5"],
    );
    expect(
        &norm_err(json!({"kind": "points", "coords": [[1, 2], [3]]})),
        Reason::RankMismatch,
        &["coords[1]"],
    );
    expect(
        &norm_err(json!({"kind": "transform", "input_rank": 2, "input_labels": ["a"]})),
        Reason::RankMismatch,
        &["input_labels has 1", "input_rank = 2"],
    );
    expect(
        &norm_err(
            json!({"kind": "transform", "output": [{"input_dimension": 0,
                                                           "index_array": [1]}]}),
        ),
        Reason::OutputMapConflict,
        &["output[0]"],
    );
    expect(
        &norm_err(json!({"kind": "box", "inclusive_min": ["-inf"], "shape": [3]})),
        Reason::InvalidJson,
        &["infinite", "shape"],
    );
    expect(
        &norm_err(json!({"kind": "slice", "start": ["-inf"], "stop": [3]})),
        Reason::InvalidJson,
        &["start[0]", "string"],
    );
}

#[test]
fn reason_codes_are_stable() {
    let codes: Vec<&str> = Reason::ALL.iter().map(|r| r.code()).collect();
    assert_eq!(
        codes,
        [
            "invalid_json",
            "unknown_kind",
            "unknown_field",
            "multiple_upper_bounds",
            "bounds_out_of_order",
            "output_map_conflict",
            "rank_mismatch",
            "step_zero",
            "negative_step_unsupported",
        ]
    );
    for r in Reason::ALL {
        assert_eq!(Reason::from_code(r.code()), Some(r));
    }
    assert_eq!(Reason::from_code("nope"), None);
    // The retired code is recognised, never produced: negative steps are valid.
    assert_eq!(
        Reason::from_code("negative_step_unsupported"),
        Some(Reason::NegativeStepUnsupported)
    );
    assert!(normalize(&json!({"kind": "slice", "start": [3], "stop": [0], "step": [-1]})).is_ok());
    let e = JsonError::new(Reason::StepZero, "step[0] is 0");
    assert_eq!(e.to_string(), "step_zero: step[0] is 0");
}

// ---------------------------------------------------------------- serialising from the engine

#[test]
fn to_json_orthogonal_arrays_have_full_rank_and_no_input_dimension() {
    let x = IndexTransform::from_shape(&[5, 6]).unwrap();
    let t = x.oindex(&sel![[3, 1], [0, 2, 4]]).unwrap();
    let j = t.to_json();
    assert_eq!(
        j["output"],
        json!([{"offset": 0, "stride": 1, "index_array": [[3], [1]],
                "index_array_bounds": ["-inf", "+inf"]},
               {"offset": 0, "stride": 1, "index_array": [[0, 2, 4]],
                "index_array_bounds": ["-inf", "+inf"]}])
    );
    assert_eq!(load(j), t);
}

#[test]
fn to_json_collapses_singleton_and_empty_arrays() {
    let domain = IndexDomain::from_shape(&[1, 1]).unwrap();
    let single = IndexArray::new(ArrayD::from_shape_vec(IxDyn(&[1, 1]), vec![4]).unwrap());
    let t = IndexTransform::new(
        domain,
        vec![OutputIndexMap::Array {
            array: single,
            offset: 3,
            stride: -2,
        }],
    )
    .unwrap();
    assert_eq!(t.to_json()["output"], json!([{"offset": -5}]));

    let x = IndexTransform::from_shape(&[5, 6]).unwrap();
    let e = x.oindex(&sel![Vec::<i64>::new(), 2..4]).unwrap();
    assert_eq!(e.domain().shape(), vec![0, 2]);
    assert!(matches!(e.output()[0], OutputIndexMap::Array { .. }));
    let j = e.to_json();
    assert_eq!(j["output"][0], json!({"offset": 0}));
    assert_eq!(j["input_exclusive_max"], json!([0, 4]));
    // Reloading gives the same transform except for the (unobservable) empty map.
    let back = load(j);
    assert_eq!(back.domain(), e.domain());
    assert_eq!(back.output()[0], OutputIndexMap::constant(0));
    assert_eq!(back.output()[1], e.output()[1]);
}

#[test]
fn to_json_vindex_arrays() {
    let x = IndexTransform::from_shape(&[4, 5, 6]).unwrap();
    let t = x.vindex(&sel![[0, 1, 3], .., [5, 0, 2]]).unwrap();
    let j = t.to_json();
    assert_eq!(j["input_rank"], json!(2));
    assert_eq!(j["output"][0]["index_array"], json!([[0], [1], [3]]));
    assert_eq!(load(j.clone()), t);
    let mut m = j.clone();
    m["kind"] = json!("transform");
    assert_eq!(normalize(&m).unwrap(), j);
}
