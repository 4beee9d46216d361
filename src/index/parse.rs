//! A parser for NumPy-style selection strings such as `"1:7:2, ..., [3,1,3]"`.
//!
//! Grammar (whitespace is free between tokens):
//!
//! ```text
//! selection := "" | item ("," item)* [","]
//! item      := int | slice | "..." | "None" | "newaxis" | list
//! slice     := [int] ":" [int] [":" [int]]
//! list      := "[" [element ("," element)* [","]] "]"     (rectangular, nested)
//! element   := int | "true" | "false" | "True" | "False" | list
//! ```
//!
//! A list of integers is an index array, a list of booleans a mask; mixing them, floats,
//! ragged nesting and integers outside `i64` are errors that name the column.

use ndarray::{ArrayD, IxDyn};

use super::error::{IndexError, Result};
use super::selection::{Selection, SelectionItem, Slice};

impl Selection {
    /// Parses NumPy-style selection syntax; an empty string selects everything.
    ///
    /// Items are separated by commas: an integer, `start:stop:step` (any part optional,
    /// negative values counted from the end in the positional dialect), `...`, `None` or
    /// `newaxis`, a list of integers `[3,1,3]` (nested lists for multi-dimensional index
    /// arrays) or a list of booleans `[true,false]` (a mask). Floats, ragged lists, mixed
    /// lists and integers outside `i64` are [`IndexError::Syntax`] errors naming the column.
    ///
    /// ```
    /// use zarrflow::index::{Selection, SelectionItem, Slice};
    /// let s = Selection::parse("1:7:2, ..., [3,1,3]").unwrap();
    /// assert_eq!(s.items()[0], SelectionItem::Slice(Slice::new(1, 7, 2)));
    /// assert_eq!(s.items()[1], SelectionItem::Ellipsis);
    /// assert!(Selection::parse("1:2:3:4").is_err());
    /// ```
    pub fn parse(text: &str) -> Result<Selection> {
        Parser {
            text,
            bytes: text.as_bytes(),
            pos: 0,
            depth: 0,
        }
        .selection()
    }
}

impl std::str::FromStr for Selection {
    type Err = IndexError;
    fn from_str(s: &str) -> Result<Self> {
        Selection::parse(s)
    }
}

/// A nested list literal before it becomes an array.
enum Node {
    Int(i64),
    Bool(bool),
    List(Vec<Node>),
}

struct Parser<'a> {
    text: &'a str,
    bytes: &'a [u8],
    pos: usize,
    /// Lists open at `pos` (bounded by [`MAX_LIST_DEPTH`]: the parser recurses per level).
    depth: usize,
}

/// The deepest nesting of lists accepted: an index array has at most
/// [`MAX_RANK`](super::MAX_RANK) dimensions, so deeper input is refused before it can
/// exhaust the stack.
const MAX_LIST_DEPTH: usize = super::MAX_RANK;

impl Parser<'_> {
    fn error(&self, at: usize, reason: impl std::fmt::Display) -> IndexError {
        let column = self.text.get(..at).map_or(at, |t| t.chars().count()) + 1;
        IndexError::Syntax {
            reason: reason.to_string(),
            column,
            text: self.text.chars().take(200).collect(),
        }
    }

    fn skip_ws(&mut self) {
        while self.pos < self.bytes.len() && self.bytes[self.pos].is_ascii_whitespace() {
            self.pos += 1;
        }
    }

    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    fn eat(&mut self, c: u8) -> bool {
        self.skip_ws();
        if self.peek() == Some(c) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn selection(mut self) -> Result<Selection> {
        let mut items = Vec::new();
        self.skip_ws();
        if self.pos == self.bytes.len() {
            return Ok(Selection::new(items));
        }
        loop {
            items.push(self.item()?);
            self.skip_ws();
            match self.peek() {
                None => break,
                Some(b',') => {
                    self.pos += 1;
                    self.skip_ws();
                    if self.pos == self.bytes.len() {
                        break; // a trailing comma, as in NumPy's `a[1,]`
                    }
                }
                Some(_) => return Err(self.error(self.pos, "expected ',' between items")),
            }
        }
        Ok(Selection::new(items))
    }

    fn item(&mut self) -> Result<SelectionItem> {
        self.skip_ws();
        let start = self.pos;
        let rest = &self.text[self.pos..];
        if rest.starts_with("...") {
            self.pos += 3;
            return Ok(SelectionItem::Ellipsis);
        }
        for word in ["None", "newaxis", "np.newaxis"] {
            if rest.starts_with(word) && !self.ident_continues(self.pos + word.len()) {
                self.pos += word.len();
                return Ok(SelectionItem::NewAxis);
            }
        }
        match self.peek() {
            Some(b'[') => {
                let node = self.list()?;
                to_item(node).map_err(|reason| self.error(start, reason))
            }
            None | Some(b',') => Err(self.error(start, "empty item")),
            _ => {
                let first = self.opt_int()?;
                self.skip_ws();
                if self.peek() != Some(b':') {
                    return match first {
                        Some(i) => Ok(SelectionItem::Index(i)),
                        None => Err(self
                            .error(start, "expected an integer, a slice, '...', None or a list")),
                    };
                }
                self.pos += 1;
                let stop = self.opt_int()?;
                let step = if self.eat(b':') {
                    self.opt_int()?
                } else {
                    None
                };
                self.skip_ws();
                if self.peek() == Some(b':') {
                    return Err(self.error(self.pos, "a slice has at most three parts"));
                }
                Ok(SelectionItem::Slice(Slice {
                    start: first,
                    stop,
                    step,
                }))
            }
        }
    }

    fn ident_continues(&self, at: usize) -> bool {
        self.bytes
            .get(at)
            .is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'_')
    }

    /// An optional signed integer; a float or an overflowing value is an error.
    fn opt_int(&mut self) -> Result<Option<i64>> {
        self.skip_ws();
        let start = self.pos;
        if matches!(self.peek(), Some(b'-' | b'+')) {
            self.pos += 1;
        }
        let digits = self.pos;
        while self.peek().is_some_and(|c| c.is_ascii_digit()) {
            self.pos += 1;
        }
        if self.pos == digits {
            if self.pos != start {
                return Err(self.error(start, "a sign must be followed by digits"));
            }
            return Ok(None);
        }
        if matches!(self.peek(), Some(b'.' | b'e' | b'E'))
            && !self.text[self.pos..].starts_with("...")
        {
            return Err(self.error(start, "indices must be integers, not floats"));
        }
        let s = &self.text[start..self.pos];
        s.trim_start_matches('+')
            .parse::<i64>()
            .map(Some)
            .map_err(|_| self.error(start, format!("integer {s} does not fit in i64")))
    }

    fn list(&mut self) -> Result<Node> {
        let open = self.pos;
        if self.depth >= MAX_LIST_DEPTH {
            return Err(self.error(
                open,
                format!("lists nested deeper than {MAX_LIST_DEPTH} (the largest rank)"),
            ));
        }
        self.depth += 1;
        let list = self.list_body(open);
        self.depth -= 1;
        list
    }

    fn list_body(&mut self, open: usize) -> Result<Node> {
        self.pos += 1; // '['
        let mut elems = Vec::new();
        loop {
            self.skip_ws();
            match self.peek() {
                Some(b']') => {
                    self.pos += 1;
                    return Ok(Node::List(elems));
                }
                None => return Err(self.error(open, "unclosed '['")),
                _ => {}
            }
            elems.push(self.element()?);
            self.skip_ws();
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b']') => {}
                None => return Err(self.error(open, "unclosed '['")),
                Some(_) => return Err(self.error(self.pos, "expected ',' or ']' in a list")),
            }
        }
    }

    fn element(&mut self) -> Result<Node> {
        self.skip_ws();
        if self.peek() == Some(b'[') {
            return self.list();
        }
        let rest = &self.text[self.pos..];
        for (word, value) in [
            ("true", true),
            ("True", true),
            ("false", false),
            ("False", false),
        ] {
            if rest.starts_with(word) && !self.ident_continues(self.pos + word.len()) {
                self.pos += word.len();
                return Ok(Node::Bool(value));
            }
        }
        let at = self.pos;
        match self.opt_int()? {
            Some(i) => Ok(Node::Int(i)),
            None => Err(self.error(at, "expected an integer, a boolean or a list")),
        }
    }
}

/// Turns a parsed list into an index array or a mask, checking that it is rectangular and
/// of one element type.
fn to_item(node: Node) -> std::result::Result<SelectionItem, String> {
    let mut shape = Vec::new();
    let mut cur = &node;
    while let Node::List(elems) = cur {
        shape.push(elems.len());
        match elems.first() {
            Some(first) => cur = first,
            None => break,
        }
    }
    let mut ints = Vec::new();
    let mut bools = Vec::new();
    flatten(&node, &shape, 0, &mut ints, &mut bools)?;
    if !ints.is_empty() && !bools.is_empty() {
        return Err("a list mixes integers and booleans".into());
    }
    if !bools.is_empty() {
        let a = ArrayD::from_shape_vec(IxDyn(&shape), bools).map_err(|e| e.to_string())?;
        return Ok(SelectionItem::Mask(a));
    }
    let a = ArrayD::from_shape_vec(IxDyn(&shape), ints).map_err(|e| e.to_string())?;
    Ok(SelectionItem::Array(a))
}

fn flatten(
    node: &Node,
    shape: &[usize],
    depth: usize,
    ints: &mut Vec<i64>,
    bools: &mut Vec<bool>,
) -> std::result::Result<(), String> {
    match node {
        Node::List(elems) => {
            if depth >= shape.len() || elems.len() != shape[depth] {
                return Err(format!(
                    "ragged nested list: expected {} elements at depth {depth}, found {}",
                    shape.get(depth).copied().unwrap_or(0),
                    elems.len()
                ));
            }
            elems
                .iter()
                .try_for_each(|e| flatten(e, shape, depth + 1, ints, bools))
        }
        leaf => {
            if depth != shape.len() {
                return Err(format!(
                    "ragged nested list: a scalar at depth {depth} where lists of depth {} are expected",
                    shape.len()
                ));
            }
            match leaf {
                Node::Int(i) => ints.push(*i),
                Node::Bool(b) => bools.push(*b),
                Node::List(_) => {}
            }
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deep_nesting_is_a_typed_error_not_a_stack_overflow() {
        let deep = format!("{}1{}", "[".repeat(100_000), "]".repeat(100_000));
        let e = Selection::parse(&deep).unwrap_err();
        assert!(
            matches!(&e, IndexError::Syntax { column: 33, reason, .. } if reason.contains("nested deeper")),
            "{e}"
        );
        let ok = format!("{}1{}", "[".repeat(32), "]".repeat(32));
        let s = Selection::parse(&ok).unwrap();
        assert!(matches!(&s.items()[0], SelectionItem::Array(a) if a.ndim() == 32));
        let unclosed = "[".repeat(1_000_000);
        assert!(Selection::parse(&unclosed).is_err());
    }
}
