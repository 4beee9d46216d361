//! Property tests: `from_json(to_json(t)) == t` for transforms built by indexing (basic,
//! `oindex`, `vindex`, domain translation, labels), and `normalize` is idempotent.

use ndarray::{Array1, ArrayD, IxDyn};
use proptest::prelude::*;
use serde_json::{Value, json};
use zarrflow::index::json::{TransformJson, canonicalize, normalize};
use zarrflow::index::{IndexTransform, NewAxis, OutputIndexMap, Selection, SelectionItem, Slice};
use zarrflow::sel;

/// A deterministic stream of choices drawn from the proptest-generated seeds.
struct Choices<'a> {
    seeds: &'a [u64],
    i: usize,
}

impl Choices<'_> {
    fn next(&mut self) -> u64 {
        let v = self.seeds[self.i % self.seeds.len()];
        self.i += 1;
        v.wrapping_mul(0x9E37_79B9_7F4A_7C15)
            .rotate_left(self.i as u32 % 64)
    }
    fn below(&mut self, n: u64) -> u64 {
        if n == 0 { 0 } else { self.next() % n }
    }
    /// A literal coordinate in `[lo, hi]` (inclusive of `hi` when `upper`).
    fn coord(&mut self, lo: i64, hi: i64, upper: bool) -> i64 {
        let span = (hi - lo) as u64 + u64::from(upper);
        lo + self.below(span) as i64
    }
}

/// One literal selection item for dimension `d` of `t`'s domain.
fn basic_item(t: &IndexTransform, d: usize, c: &mut Choices<'_>) -> SelectionItem {
    let (lo, hi) = t.domain().interval(d);
    match c.below(4) {
        0 if hi > lo => SelectionItem::Index(c.coord(lo, hi - 1, true)),
        1 => SelectionItem::Slice(Slice::full()),
        _ => {
            let step = [1, 2, 3, -1, -2][c.below(5) as usize];
            let a = c.coord(lo, hi, true);
            let b = c.coord(lo, hi, true);
            let (start, stop) = if step > 0 {
                (a.min(b), a.max(b))
            } else if hi > lo {
                // Downwards from a coordinate inside the domain to one at or below it.
                let s = c.coord(lo, hi - 1, true);
                (s, (lo - 1).max(s - (b - lo)))
            } else {
                (lo, lo)
            };
            let omit = c.below(4);
            SelectionItem::Slice(Slice {
                start: (omit != 1).then_some(start),
                stop: (omit != 2).then_some(stop),
                step: Some(step),
            })
        }
    }
}

fn coords(t: &IndexTransform, d: usize, n: usize, c: &mut Choices<'_>) -> Vec<i64> {
    let (lo, hi) = t.domain().interval(d);
    if hi == lo {
        return vec![];
    }
    (0..n).map(|_| c.coord(lo, hi - 1, true)).collect()
}

/// Applies one random indexing operation; an operation the engine refuses is skipped.
fn step(t: &IndexTransform, op: u64, c: &mut Choices<'_>) -> IndexTransform {
    let rank = t.input_rank();
    let next = match op % 5 {
        0 => {
            let mut items: Vec<SelectionItem> = (0..rank).map(|d| basic_item(t, d, c)).collect();
            if rank < 4 && c.below(3) == 0 {
                items.insert(c.below(items.len() as u64 + 1) as usize, NewAxis.into());
            }
            t.index(&Selection::new(items))
        }
        1 => {
            let items: Vec<SelectionItem> = (0..rank)
                .map(|d| match c.below(3) {
                    0 => {
                        let n = c.below(4) as usize;
                        SelectionItem::from(coords(t, d, n, c))
                    }
                    1 => SelectionItem::Slice(Slice::full()),
                    _ => basic_item(t, d, c),
                })
                .collect();
            t.oindex(&Selection::new(items))
        }
        2 => {
            // Vectorized: a common length for 1-D arrays, or an outer product written with
            // broadcasting shapes (n, 1) and (1, m).
            let n = c.below(4) as usize;
            let outer = c.below(2) == 0 && rank >= 2;
            let items: Vec<SelectionItem> = (0..rank)
                .map(|d| {
                    if outer && d < 2 {
                        let v = coords(t, d, n + 1, c);
                        let shape = if d == 0 { [v.len(), 1] } else { [1, v.len()] };
                        ArrayD::from_shape_vec(IxDyn(&shape), v)
                            .map(SelectionItem::Array)
                            .unwrap_or(SelectionItem::Slice(Slice::full()))
                    } else if c.below(3) == 0 && !outer {
                        SelectionItem::Slice(Slice::full())
                    } else {
                        SelectionItem::Array(Array1::from(coords(t, d, n, c)).into_dyn())
                    }
                })
                .collect();
            t.vindex(&Selection::new(items))
        }
        3 => {
            let origin: Vec<i64> = (0..rank).map(|_| c.below(21) as i64 - 10).collect();
            t.translate_domain_to(&origin)
        }
        _ => {
            // The sel! macro, literal coordinates of the current domain.
            if rank >= 1 && t.domain().extent(0) >= 2 {
                let (lo, hi) = t.domain().interval(0);
                t.index(&sel![lo..hi;2, ...])
            } else {
                t.index(&sel![...])
            }
        }
    };
    next.unwrap_or_else(|_| t.clone())
}

/// `t` with every empty index-array map replaced by `{offset: 0}`, as `to_json` writes it.
fn empty_arrays_as_constants(t: &IndexTransform) -> IndexTransform {
    let output = t
        .output()
        .iter()
        .map(|m| match m {
            OutputIndexMap::Array { array, .. } if array.is_empty() => OutputIndexMap::constant(0),
            m => m.clone(),
        })
        .collect();
    let labels = (0..t.input_rank())
        .map(|d| t.domain().label(d).to_string())
        .collect();
    IndexTransform::new(t.domain().clone(), output)
        .and_then(|x| x.with_labels(labels))
        .unwrap_or_else(|e| panic!("{t}: {e}"))
}

fn build(shape: &[u64], ops: &[u64], seeds: &[u64], labelled: bool) -> IndexTransform {
    let mut t = IndexTransform::from_shape(shape).unwrap();
    let mut c = Choices { seeds, i: 0 };
    for &op in ops {
        t = step(&t, op, &mut c);
    }
    if labelled && t.input_rank() > 0 {
        let labels = (0..t.input_rank()).map(|d| format!("d{d}")).collect();
        t = t.with_labels(labels).unwrap();
    }
    t
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn to_json_round_trips(
        shape in prop::collection::vec(0u64..6, 0..4),
        ops in prop::collection::vec(any::<u64>(), 1..5),
        seeds in prop::collection::vec(any::<u64>(), 1..16),
        labelled in any::<bool>(),
    ) {
        let t = build(&shape, &ops, &seeds, labelled);
        let j = t.to_json();
        let back = IndexTransform::from_json(&j)
            .unwrap_or_else(|e| panic!("{t} -> {j}: {e}"));
        prop_assert_eq!(&back, &empty_arrays_as_constants(&t), "{} -> {}", t, j);
        if !t.output().iter().any(|m| matches!(m, OutputIndexMap::Array { array, .. } if array.is_empty())) {
            prop_assert_eq!(&back, &t);
        }
        // Serialisation is stable and the body is canonical.
        prop_assert_eq!(back.to_json(), j.clone());
        prop_assert_eq!(canonicalize(&j).unwrap(), j.clone());
        let mut msg = j.clone();
        msg["kind"] = json!("transform");
        prop_assert_eq!(normalize(&msg).unwrap(), j.clone());
        // Text round trip.
        let text = serde_json::to_string(&j).unwrap();
        prop_assert_eq!(IndexTransform::from_json_str(&text).unwrap(), back);
    }

    #[test]
    fn normalize_is_idempotent_on_messages(
        start in prop::collection::vec(-50i64..50, 1..4),
        len in prop::collection::vec(0i64..20, 1..4),
        step in prop::collection::vec(prop_oneof![1i64..5, -5i64..-1], 1..4),
        rows in prop::collection::vec(prop::collection::vec(-9i64..9, 2), 0..5),
        lo in prop::collection::vec(-5i64..5, 0..4),
        implicit in any::<bool>(),
    ) {
        let n = start.len().min(len.len()).min(step.len());
        let stop: Vec<i64> = (0..n)
            .map(|d| if step[d] > 0 { start[d] + len[d] } else { start[d] - len[d] })
            .collect();
        let bound = |v: i64| if implicit { json!([v]) } else { json!(v) };
        let messages: Vec<Value> = vec![
            json!({"kind": "slice", "start": &start[..n], "stop": stop, "step": &step[..n]}),
            json!({"kind": "points", "coords": rows}),
            json!({"kind": "point", "coords": lo}),
            json!({"kind": "box", "inclusive_min": lo.iter().map(|&v| bound(v)).collect::<Vec<_>>(),
                   "shape": lo.iter().map(|&v| bound(v.abs())).collect::<Vec<_>>()}),
            json!({"kind": "transform", "input_inclusive_min": lo}),
        ];
        for m in messages {
            let once = normalize(&m).unwrap_or_else(|e| panic!("{m}: {e}"));
            let mut again = once.clone();
            again["kind"] = json!("transform");
            prop_assert_eq!(normalize(&again).unwrap(), once.clone(), "{}", m);
            prop_assert_eq!(canonicalize(&once).unwrap(), once.clone());
            let body = TransformJson::parse(&m).unwrap();
            if !body.has_infinite_bounds() {
                // Lowered, serialised and normalised again: the same canonical body,
                // except that implicit flags are lowered by value.
                let t = IndexTransform::from_json(&m).unwrap();
                let j = t.to_json();
                prop_assert_eq!(IndexTransform::from_json(&j).unwrap(), t);
                if !implicit && m["kind"] != "points" {
                    prop_assert_eq!(j, once);
                }
            }
        }
    }
}
