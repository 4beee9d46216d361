//! The ndsel conformance corpus (`test-data/ndsel/*.json`, 54 cases): every success case
//! normalises to exactly its `normalized` body and (unless it has infinite bounds) lowers
//! into an engine transform; every error case fails with exactly its reason code.

use std::path::Path;

use serde_json::Value;
use zarrflow::index::IndexTransform;
use zarrflow::index::json::{Reason, TransformJson, normalize};

const CORPUS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/test-data/ndsel");
const FILES: [&str; 6] = [
    "box.json",
    "errors.json",
    "point.json",
    "points.json",
    "slice.json",
    "transform.json",
];

fn cases() -> Vec<(String, Value)> {
    let mut out = Vec::new();
    for file in FILES {
        let path = Path::new(CORPUS).join(file);
        let text = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
        let cases: Vec<Value> = serde_json::from_str(&text)
            .unwrap_or_else(|e| panic!("parsing {}: {e}", path.display()));
        for case in cases {
            out.push((file.to_string(), case));
        }
    }
    out
}

#[test]
fn corpus_is_conformant() {
    let cases = cases();
    let (mut ok, mut err, mut lowered) = (0, 0, 0);
    for (file, case) in &cases {
        let name = case["name"].as_str().unwrap_or("<unnamed>");
        let input = &case["input"];
        if let Some(expected) = case.get("normalized") {
            let got = normalize(input).unwrap_or_else(|e| panic!("{file} {name}: {e}"));
            assert_eq!(&got, expected, "{file} {name}: normalized body differs");
            // Idempotent, both as an ndsel message and as a bare TensorStore body.
            let mut again = got.clone();
            again["kind"] = Value::from("transform");
            assert_eq!(
                normalize(&again).unwrap(),
                got,
                "{file} {name}: not idempotent"
            );
            assert_eq!(
                TransformJson::from_tensorstore(&got).unwrap().to_json(),
                got,
                "{file} {name}: bare body does not reload to itself"
            );
            let body = TransformJson::parse(input).unwrap();
            if !body.has_infinite_bounds() {
                let t = IndexTransform::from_json(input)
                    .unwrap_or_else(|e| panic!("{file} {name}: lowering failed: {e}"));
                assert_eq!(t.input_rank(), body.rank(), "{file} {name}");
                assert_eq!(t.output_rank(), body.output().len(), "{file} {name}");
                // The canonical body lowers to the same transform.
                assert_eq!(IndexTransform::from_json(&got).unwrap(), t, "{file} {name}");
                lowered += 1;
            } else {
                let e = IndexTransform::from_json(input).unwrap_err();
                assert_eq!(e.reason, Reason::InvalidJson, "{file} {name}: {e}");
            }
            ok += 1;
        } else {
            let code = case["error"]
                .as_str()
                .unwrap_or_else(|| panic!("{file} {name}: neither normalized nor error"));
            assert!(
                Reason::from_code(code).is_some(),
                "{name}: unknown code {code}"
            );
            let e = normalize(input)
                .err()
                .unwrap_or_else(|| panic!("{file} {name}: accepted, expected {code}"));
            assert_eq!(e.code(), code, "{file} {name}: wrong reason ({e})");
            // Lowering fails the same way. (An object without `kind` is read by
            // `from_json` as a bare TensorStore body, where e.g. `coords` is an unknown
            // member: it must fail, with that body's reason.)
            let e = IndexTransform::from_json(input).unwrap_err();
            if input.get("kind").is_some() {
                assert_eq!(e.code(), code, "{file} {name}: lowering gave {e}");
            }
            err += 1;
        }
    }
    println!(
        "ndsel corpus: {} cases, {ok} valid ({lowered} lowered), {err} errors",
        cases.len()
    );
    assert_eq!(cases.len(), 54);
    assert_eq!((ok, err), (31, 23));
}
