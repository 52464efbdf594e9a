//! The files the editor has open, by URI, with a bound on what they may
//! hold together: a client that opens huge files one after another gets
//! refusals, not a server that grows without end.

use std::collections::HashMap;

/// The largest document checked, bytes. cpuplugd's files are a few KB
/// (lines of at most 2048 characters); a check costs about 17 bytes of
/// memory and 70 ns a byte, so a 1 MB file is diagnosed in about 70 ms with
/// the server under 30 MB (`scripts/lsp-speed.py`), and this bound keeps
/// the worst case near 40 MB.
pub const MAX_DOCUMENT: usize = 2 << 20;

/// All open documents together may hold this many bytes, their URIs
/// included.
pub const MAX_OPEN_BYTES: usize = 4 * MAX_DOCUMENT;

/// What an open document costs besides its URI and text (its entry in the
/// map, and the copies of its URI the server keeps): so a flood of empty
/// documents is bounded too.
const ENTRY: usize = 256;

/// What an open document holds.
pub enum Document {
    /// Its text, checked as a rule file.
    Text(String),
    /// Larger than cpuplugd's files can be: not kept, only reported.
    TooLarge(usize),
}

/// The open documents.
#[derive(Default)]
pub struct Documents {
    open: HashMap<String, Document>,
    bytes: usize,
}

impl Documents {
    /// Opens or replaces `uri` with `text`. A text larger than a rule file
    /// may be, or than the room left, is dropped and marked too large; a
    /// URI for which there is no room at all (the URIs count: 20 documents
    /// named by 10 MB URIs held 220 MB) is not kept, and `false` says so.
    pub fn set(&mut self, uri: &str, text: String) -> bool {
        self.close(uri);
        let name = uri.len() + ENTRY;
        if self.bytes + name > MAX_OPEN_BYTES {
            return false;
        }
        let len = text.len();
        let doc = if len > MAX_DOCUMENT || self.bytes + name + len > MAX_OPEN_BYTES {
            Document::TooLarge(len)
        } else {
            self.bytes += len;
            Document::Text(text)
        };
        self.bytes += name;
        self.open.insert(uri.to_string(), doc);
        true
    }

    /// Forgets `uri`.
    pub fn close(&mut self, uri: &str) {
        if let Some(doc) = self.open.remove(uri) {
            self.bytes -= uri.len() + ENTRY;
            if let Document::Text(t) = doc {
                self.bytes -= t.len();
            }
        }
    }

    /// The document at `uri`, if open.
    pub fn get(&self, uri: &str) -> Option<&Document> {
        self.open.get(uri)
    }

    /// The text of `uri`, if open and kept.
    pub fn text(&self, uri: &str) -> Option<&str> {
        match self.open.get(uri) {
            Some(Document::Text(t)) => Some(t),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uris_count_toward_the_bound() {
        let mut docs = Documents::default();
        let long = "u".repeat(MAX_OPEN_BYTES / 3);
        let kept = (0..10)
            .filter(|i| docs.set(&format!("{i}{long}"), String::new()))
            .count();
        assert_eq!(kept, 2);
        // Closing one makes room again; the total comes back to nothing.
        docs.close(&format!("0{long}"));
        assert!(docs.set("file:///etc/cpuplugd.conf", "UPDATE=\"1\"\n".into()));
        assert!(docs.text("file:///etc/cpuplugd.conf").is_some());
        docs.close("file:///etc/cpuplugd.conf");
        docs.close(&format!("1{long}"));
        assert_eq!(docs.bytes, 0);
    }
}
