//! Rust source as tokens, with comments and literals gone: the module check
//! reads code only, so a path written in a string, a comment or a doc line
//! is no dependency, and a brace inside one does not unbalance the count
//! that finds where a `#[cfg(test)]` item ends.

/// One token of code and the line it starts on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Token {
    /// An identifier or keyword whole, `::` whole, a literal as `"`, a
    /// lifetime as `'`, a number as `0`; any other punctuation one char.
    pub text: String,
    pub line: usize,
}

/// The tokens of `source`, comments dropped and literals reduced to one
/// placeholder each.
pub fn tokens(source: &str) -> Vec<Token> {
    let mut lexer = Lexer {
        chars: source.chars().collect(),
        at: 0,
        line: 1,
        out: Vec::new(),
    };
    while lexer.at < lexer.chars.len() {
        lexer.next_token();
    }
    lexer.out
}

struct Lexer {
    chars: Vec<char>,
    at: usize,
    line: usize,
    out: Vec<Token>,
}

fn starts_ident(c: char) -> bool {
    c.is_alphabetic() || c == '_'
}

fn continues_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

impl Lexer {
    fn peek(&self, ahead: usize) -> char {
        self.chars.get(self.at + ahead).copied().unwrap_or('\0')
    }

    fn push(&mut self, text: &str, line: usize) {
        self.out.push(Token {
            text: text.to_string(),
            line,
        });
    }

    /// Moves one char on, counting lines.
    fn bump(&mut self) {
        if self.peek(0) == '\n' {
            self.line += 1;
        }
        self.at += 1;
    }

    fn next_token(&mut self) {
        let c = self.peek(0);
        let line = self.line;
        match c {
            c if c.is_whitespace() => self.bump(),
            '/' if self.peek(1) == '/' => {
                while self.at < self.chars.len() && self.peek(0) != '\n' {
                    self.bump();
                }
            }
            '/' if self.peek(1) == '*' => self.block_comment(),
            '"' => {
                self.quoted('"');
                self.push("\"", line);
            }
            '\'' => self.quote_or_lifetime(line),
            'r' | 'b' | 'c' if self.literal_prefix().is_some() => self.prefixed_literal(line),
            c if starts_ident(c) => self.ident(line),
            c if c.is_ascii_digit() => self.number(line),
            ':' if self.peek(1) == ':' => {
                self.at += 2;
                self.push("::", line);
            }
            c => {
                self.at += 1;
                self.push(&c.to_string(), line);
            }
        }
    }

    /// A `/* */` comment, which nests in Rust.
    fn block_comment(&mut self) {
        let mut depth = 0usize;
        while self.at < self.chars.len() {
            if self.peek(0) == '/' && self.peek(1) == '*' {
                depth += 1;
                self.at += 2;
            } else if self.peek(0) == '*' && self.peek(1) == '/' {
                depth -= 1;
                self.at += 2;
                if depth == 0 {
                    return;
                }
            } else {
                self.bump();
            }
        }
    }

    /// Past a literal opened by `close` at the current char, escapes included.
    fn quoted(&mut self, close: char) {
        self.at += 1;
        while self.at < self.chars.len() {
            match self.peek(0) {
                '\\' => {
                    self.bump();
                    self.bump();
                }
                c if c == close => {
                    self.at += 1;
                    return;
                }
                _ => self.bump(),
            }
        }
    }

    /// `'x'`, `'\n'`, `'\''` are chars; `'a` and `'static` are lifetimes.
    fn quote_or_lifetime(&mut self, line: usize) {
        if self.peek(1) == '\\' || (self.peek(1) != '\0' && self.peek(2) == '\'') {
            self.quoted('\'');
            self.push("\"", line);
        } else {
            self.at += 1;
            while continues_ident(self.peek(0)) {
                self.at += 1;
            }
            self.push("'", line);
        }
    }

    /// How many chars of prefix (`b`, `r`, `br`, `c`, `cr`) open a literal
    /// here, with the number of `#` of a raw one; None for an identifier.
    fn literal_prefix(&self) -> Option<(usize, Option<usize>)> {
        let mut n = 0;
        if matches!(self.peek(0), 'b' | 'c') {
            n = 1;
        }
        if self.peek(n) == 'r' {
            let mut hashes = 0;
            while self.peek(n + 1 + hashes) == '#' {
                hashes += 1;
            }
            return (self.peek(n + 1 + hashes) == '"').then_some((n + 1, Some(hashes)));
        }
        let quote = self.peek(n);
        (n == 1 && (quote == '"' || (quote == '\'' && self.peek(0) == 'b'))).then_some((n, None))
    }

    fn prefixed_literal(&mut self, line: usize) {
        let Some((prefix, raw)) = self.literal_prefix() else {
            return;
        };
        self.at += prefix;
        match raw {
            None => {
                let close = self.peek(0);
                self.quoted(close);
            }
            Some(hashes) => {
                self.at += hashes + 1;
                let end: Vec<char> = std::iter::once('"')
                    .chain(std::iter::repeat_n('#', hashes))
                    .collect();
                while self.at < self.chars.len() && !self.chars[self.at..].starts_with(&end) {
                    self.bump();
                }
                self.at += end.len();
            }
        }
        self.push("\"", line);
    }

    /// An identifier, a raw one (`r#type`) as its plain name.
    fn ident(&mut self, line: usize) {
        if self.peek(0) == 'r' && self.peek(1) == '#' && starts_ident(self.peek(2)) {
            self.at += 2;
        }
        let start = self.at;
        while continues_ident(self.peek(0)) {
            self.at += 1;
        }
        let text: String = self.chars[start..self.at].iter().collect();
        self.push(&text, line);
    }

    /// `12`, `0x1f_u8`, `1.5e3`; a `.` belongs to it only before a digit,
    /// so `0..n` and `t.0.1` stay apart.
    fn number(&mut self, line: usize) {
        while continues_ident(self.peek(0))
            || (self.peek(0) == '.' && self.peek(1).is_ascii_digit())
        {
            self.at += 1;
        }
        self.push("0", line);
    }
}
