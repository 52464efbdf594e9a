//! Byte offsets (what `rules` reports) to and from the protocol's
//! positions: 0-based lines, and columns counted in UTF-16 code units, as
//! LSP asks by default. Positions past the end are clamped, never trusted.

use lsp_types::{Position, Range};

use crate::rules::Span;

/// Where each line of a text starts, for both directions.
pub struct LineIndex<'a> {
    text: &'a str,
    starts: Vec<usize>,
}

impl<'a> LineIndex<'a> {
    /// Indexes `text` (a line break is `\n`; a `\r` before it is text).
    pub fn new(text: &'a str) -> Self {
        let mut starts = vec![0];
        starts.extend(
            text.bytes()
                .enumerate()
                .filter(|(_, b)| *b == b'\n')
                .map(|(i, _)| i + 1),
        );
        LineIndex { text, starts }
    }

    /// The position of byte `offset` (clamped to the text, and back to a
    /// character boundary).
    pub fn position(&self, offset: usize) -> Position {
        let mut offset = offset.min(self.text.len());
        while !self.text.is_char_boundary(offset) {
            offset -= 1;
        }
        let line = self.starts.partition_point(|s| *s <= offset) - 1;
        let start = self.starts.get(line).copied().unwrap_or(0);
        let column = self.text[start..offset].encode_utf16().count();
        Position::new(line as u32, column as u32)
    }

    /// The end of 0-based line `line` (before its line break and any `\r`),
    /// or `None` past the last line: where a hint after the line goes.
    pub fn line_end(&self, line: usize) -> Option<Position> {
        let start = *self.starts.get(line)?;
        let rest = &self.text[start..];
        let text = &rest[..rest.find('\n').unwrap_or(rest.len())];
        let text = text.strip_suffix('\r').unwrap_or(text);
        Some(Position::new(
            line as u32,
            text.encode_utf16().count() as u32,
        ))
    }

    /// The range of a span; the whole-file span is the first character.
    pub fn range(&self, span: Span) -> Range {
        if span.is_file() {
            return Range::new(Position::new(0, 0), Position::new(0, 0));
        }
        Range::new(
            self.position(span.start as usize),
            self.position(span.end as usize),
        )
    }

    /// The byte offset of `pos`: a line past the end is the end of the
    /// text, a column past the end of its line the end of that line, and a
    /// column inside a character that character's start.
    pub fn offset(&self, pos: Position) -> usize {
        let Some(&start) = self.starts.get(pos.line as usize) else {
            return self.text.len();
        };
        let line = &self.text[start..];
        let line = &line[..line.find('\n').unwrap_or(line.len())];
        let mut units = 0u32;
        for (i, c) in line.char_indices() {
            let next = units + c.len_utf16() as u32;
            if next > pos.character {
                return start + i;
            }
            units = next;
        }
        start + line.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_count_utf16_units() {
        let text = "a=\"é😀x\"\nb\n";
        let index = LineIndex::new(text);
        let x = text.find('x').unwrap_or_default();
        assert_eq!(index.position(x), Position::new(0, 6));
        assert_eq!(index.offset(Position::new(0, 6)), x);
        assert_eq!(
            index.offset(Position::new(0, 999)),
            text.find('\n').unwrap_or(0)
        );
        assert_eq!(index.offset(Position::new(99, 0)), text.len());
        assert_eq!(index.position(text.len() + 5), Position::new(2, 0));
    }
}
