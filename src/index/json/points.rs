//! ndsel `points` messages read straight from JSON text into one `i64` column per
//! dimension, without a JSON value tree.
//!
//! A points message is one entry per point, so it can be large (millions of points); read
//! through [`serde_json::Value`] it took ~550 bytes a point (a value per number, a vector
//! per row, then index arrays rebuilt as values again). This reader keeps 8 bytes per
//! coordinate. It accepts exactly `{"kind": "points", "coords": [[...], ...]}` with members
//! once each, rows of one length (at least one row of at least one coordinate, at most
//! [`MAX_JSON_RANK`]) and `i64` integers; anything else is left to the generic reader, which
//! reports errors with their reason codes, so both readers agree on every input.

use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

use super::value::MAX_JSON_RANK;

/// The coordinate columns of the `points` message `text` (one column per dimension, one
/// entry per point), or `None` when `text` is anything else.
pub(super) fn read_points(text: &str) -> Option<Vec<Vec<i64>>> {
    let mut de = serde_json::Deserializer::from_str(text);
    let columns = de.deserialize_map(MessageVisitor).ok()?;
    de.end().ok()?;
    Some(columns)
}

/// Declines the input (the generic reader then judges it).
fn decline<E: de::Error>() -> E {
    E::custom("not a plain points message")
}

struct MessageVisitor;

impl<'de> Visitor<'de> for MessageVisitor {
    type Value = Vec<Vec<i64>>;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a points message")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let (mut kind, mut coords) = (false, None);
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "kind" if !kind => {
                    if map.next_value::<String>()? != "points" {
                        return Err(decline());
                    }
                    kind = true;
                }
                "coords" if coords.is_none() => coords = Some(map.next_value_seed(Columns)?),
                _ => return Err(decline()),
            }
        }
        match coords {
            Some(columns) if kind => Ok(columns),
            _ => Err(decline()),
        }
    }
}

/// The `coords` member: rows of equal length, gathered column by column.
struct Columns;

impl<'de> DeserializeSeed<'de> for Columns {
    type Value = Vec<Vec<i64>>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for Columns {
    type Value = Vec<Vec<i64>>;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a list of points")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut rows: A) -> Result<Self::Value, A::Error> {
        let mut columns: Vec<Vec<i64>> = Vec::new();
        while rows
            .next_element_seed(Row {
                columns: &mut columns,
            })?
            .is_some()
        {}
        if columns.is_empty() {
            return Err(decline());
        }
        Ok(columns)
    }
}

/// One row, appended to the columns (the first row sets their number).
struct Row<'c> {
    columns: &'c mut Vec<Vec<i64>>,
}

impl<'de> DeserializeSeed<'de> for Row<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for Row<'_> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a point: a list of integers")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut row: A) -> Result<(), A::Error> {
        let columns = self.columns;
        if columns.is_empty() {
            while let Some(x) = row.next_element::<i64>()? {
                if columns.len() == MAX_JSON_RANK {
                    return Err(decline());
                }
                columns.push(vec![x]);
            }
            return if columns.is_empty() {
                Err(decline())
            } else {
                Ok(())
            };
        }
        for column in columns.iter_mut() {
            column.push(row.next_element::<i64>()?.ok_or_else(decline)?);
        }
        match row.next_element::<IgnoredAny>()? {
            None => Ok(()),
            Some(_) => Err(decline()),
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::index::IndexTransform;

    /// The fast reader and the generic one (through a JSON value) agree: same transform,
    /// or same error.
    fn agree(text: &str) {
        let fast = IndexTransform::from_json_str(text);
        let generic = serde_json::from_str::<serde_json::Value>(text)
            .map_err(|e| e.to_string())
            .map(|v| IndexTransform::from_json(&v));
        match (fast, generic) {
            (Ok(a), Ok(Ok(b))) => assert_eq!(a, b, "{text}"),
            (Err(a), Ok(Err(b))) => assert_eq!(a, b, "{text}"),
            (Err(a), Err(_)) => assert_eq!(a.code(), "invalid_json", "{text}"),
            (a, b) => panic!("{text}: {a:?} against {b:?}"),
        }
    }

    #[test]
    fn points_read_straight_agree_with_the_generic_reader() {
        let texts = [
            r#"{"kind": "points", "coords": [[1, 2], [3, 4], [1, 2]]}"#,
            r#"{"coords": [[-5, 9223372036854775807]], "kind": "points"}"#,
            r#" { "kind" : "points" , "coords" : [ [ 7 ] , [ 0 ] ] } "#,
            r#"{"kind": "points", "coords": [[1, 2, 3, 4, 5, 6, 7, 8]]}"#,
            // left to the generic reader: errors and rarer shapes
            r#"{"kind": "points", "coords": []}"#,
            r#"{"kind": "points", "coords": [[]]}"#,
            r#"{"kind": "points", "coords": [[], []]}"#,
            r#"{"kind": "points", "coords": [[1, 2], [3]]}"#,
            r#"{"kind": "points", "coords": [[1], [3, 4]]}"#,
            r#"{"kind": "points", "coords": [[1.5]]}"#,
            r#"{"kind": "points", "coords": [[-0]]}"#,
            r#"{"kind": "points", "coords": [[9223372036854775808]]}"#,
            r#"{"kind": "points", "coords": [[true]]}"#,
            r#"{"kind": "points", "coords": [[1]], "extra": 1}"#,
            r#"{"kind": "points", "kind": "points", "coords": [[1]]}"#,
            r#"{"kind": "points", "coords": [[1]], "coords": [[2]]}"#,
            r#"{"kind": "point", "coords": [1, 2]}"#,
            r#"{"kind": "points"}"#,
            r#"{"coords": [[1]]}"#,
            r#"{"kind": "points", "coords": [[1]]} trailing"#,
            r#"{"kind": "points", "coords": [[1]"#,
            r#"[[1, 2]]"#,
            r#"{"kind": "slice", "start": [1], "stop": [5]}"#,
        ];
        for text in texts {
            agree(text);
        }
        let rank_33 = format!(
            r#"{{"kind": "points", "coords": [[{}]]}}"#,
            vec!["0"; 33].join(",")
        );
        agree(&rank_33);
    }
}
