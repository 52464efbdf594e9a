//! The rule file as the user wrote it. cpuplugd strips whitespace before it
//! reads anything, so every position plugtop reports is mapped back to this
//! original text: errors and traces must point at what the user typed.

/// A byte range in the original file. Kept as `u32` pairs so AST nodes stay
/// small; rule files are limited to lines of 2048 bytes anyway.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Span {
    pub start: u32,
    pub end: u32,
}

impl Span {
    /// Stands for the file as a whole, for findings with no one place.
    pub const FILE: Span = Span {
        start: u32::MAX,
        end: u32::MAX,
    };

    /// True for [`Span::FILE`].
    pub fn is_file(self) -> bool {
        self == Span::FILE
    }

    /// A span from `start` to `end` (exclusive) in file bytes.
    pub fn new(start: usize, end: usize) -> Self {
        Span {
            start: start as u32,
            end: end.max(start) as u32,
        }
    }

    /// The smallest span covering both, for a node built from two children.
    pub fn join(self, other: Span) -> Span {
        Span {
            start: self.start.min(other.start),
            end: self.end.max(other.end),
        }
    }
}

/// Line and column (both 1-based; the column counts characters) so messages
/// read like every other compiler's `file:line:col`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Position {
    pub line: usize,
    pub column: usize,
}

/// What a file plainly not a rule file is, in words: "a plugtop
/// recording" (it starts as one), or "a binary file" (a NUL byte, which no
/// text holds, or more than a quarter of its bytes, and at least 8,
/// neither text nor UTF-8: a comment in Latin-1 is still text). `None` for text, even text cpuplugd
/// refuses. The one check for it: `check`, every command's `-c` and `train
/// grade` say it in one line instead of a diagnostic for each line of it.
pub fn not_a_rule_file(bytes: &[u8]) -> Option<&'static str> {
    if bytes.starts_with(crate::kernel::recording::MAGIC) {
        return Some("a plugtop recording");
    }
    if bytes.contains(&0) {
        return Some("a binary file");
    }
    let controls = bytes
        .iter()
        .filter(|b| b.is_ascii_control() && !b"\t\n\r\x0c".contains(b))
        .count();
    let mut undecoded = 0;
    let mut rest = bytes;
    while let Err(e) = std::str::from_utf8(rest) {
        let bad = e.error_len().unwrap_or(rest.len() - e.valid_up_to());
        undecoded += bad;
        rest = &rest[e.valid_up_to() + bad..];
    }
    let odd = controls + undecoded;
    (odd >= 8 && odd * 4 > bytes.len()).then_some("a binary file")
}

/// The original bytes of a rule file plus where each line starts.
#[derive(Debug, Clone)]
pub struct SourceFile {
    name: String,
    text: Vec<u8>,
    line_starts: Vec<usize>,
}

impl SourceFile {
    /// Wraps the file's bytes; `name` is what diagnostics print before `:line:col`.
    pub fn new(name: impl Into<String>, text: Vec<u8>) -> Self {
        let mut line_starts = vec![0];
        for (i, b) in text.iter().enumerate() {
            if *b == b'\n' && i + 1 < text.len() {
                line_starts.push(i + 1);
            }
        }
        SourceFile {
            name: name.into(),
            text,
            line_starts,
        }
    }

    /// The name given at construction (usually the path as typed).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// All bytes of the file.
    pub fn bytes(&self) -> &[u8] {
        &self.text
    }

    /// 1-based line containing byte `offset`.
    pub fn line_of(&self, offset: usize) -> usize {
        match self.line_starts.binary_search(&offset) {
            Ok(i) => i + 1,
            Err(i) => i,
        }
    }

    /// Byte offset where 1-based `line` starts.
    pub fn line_start(&self, line: usize) -> usize {
        self.line_starts
            .get(line.saturating_sub(1))
            .copied()
            .unwrap_or(self.text.len())
    }

    /// The text of 1-based `line` without its line break.
    pub fn line_bytes(&self, line: usize) -> &[u8] {
        let start = self.line_start(line);
        let end = self.text[start..]
            .iter()
            .position(|b| *b == b'\n')
            .map_or(self.text.len(), |p| start + p);
        &self.text[start..end]
    }

    /// Line and character column of byte `offset`.
    pub fn position(&self, offset: usize) -> Position {
        let line = self.line_of(offset);
        let start = self.line_start(line);
        let end = offset.min(self.text.len());
        let column = String::from_utf8_lossy(&self.text[start..end.max(start)])
            .chars()
            .count()
            + 1;
        Position { line, column }
    }

    /// The original text of a span, lossily decoded, for messages.
    pub fn snippet(&self, span: Span) -> String {
        let s = (span.start as usize).min(self.text.len());
        let e = (span.end as usize).clamp(s, self.text.len());
        String::from_utf8_lossy(&self.text[s..e]).into_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::not_a_rule_file;

    #[test]
    fn a_recording_or_binary_is_not_a_rule_file_and_text_in_latin_1_is() {
        let mut rec = crate::kernel::recording::MAGIC.to_vec();
        rec.extend(b"v1\n");
        assert_eq!(not_a_rule_file(&rec), Some("a plugtop recording"));
        assert_eq!(not_a_rule_file(b"UPDATE=\"1\"\0\n"), Some("a binary file"));
        let no_text: Vec<u8> = (0..64u8).map(|b| b | 0x80).collect();
        assert_eq!(not_a_rule_file(&no_text), Some("a binary file"));
        let escapes = b"\x1b[2J\x1b[H\x07\x08".repeat(4);
        assert_eq!(not_a_rule_file(&escapes), Some("a binary file"));
        // A comment in Latin-1, tabs, CRLF, a form feed: text.
        let latin = b"# caf\xe9 \xe0 la cr\xe8me\r\nUPDATE=\"1\"\t\x0c\nCPU_MIN=\"1\"\n";
        assert_eq!(not_a_rule_file(latin), None);
        assert_eq!(not_a_rule_file(b""), None);
        assert_eq!(
            not_a_rule_file("HOTPLUG=\"idle < 1\" # ≤ Ünïcödé\n".as_bytes()),
            None
        );
    }
}
