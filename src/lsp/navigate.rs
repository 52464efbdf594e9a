//! Go to definition, find references and rename, for user variables. A
//! rename is refused when cpuplugd would read the new name as something
//! else (a setting it starts like, a keyword, a name already taken), and,
//! to be sure, when the renamed file loads with more errors than before.

use std::collections::{HashMap, HashSet};

use lsp_types::{Location, TextEdit, Uri, WorkspaceEdit};

use super::diagnostics::analyse;
use super::names::{at, occurrences, refuse_name};
use super::position::LineIndex;
use crate::kernel::SystemFacts;
use crate::rules::Severity;

/// Where the variable at `offset` is defined.
pub fn definition(uri: &Uri, text: &str, offset: usize) -> Option<Location> {
    let all = occurrences(text);
    let o = at(&all, offset)?;
    let def = all.iter().find(|d| d.definition && d.name == o.name)?;
    let index = LineIndex::new(text);
    Some(Location::new(
        uri.clone(),
        lsp_types::Range::new(index.position(def.start), index.position(def.end)),
    ))
}

/// The most places one answer lists (references, the edits of a rename):
/// a 2 MiB file naming one variable a million times made answers of
/// 110 MB and 233 MB that took gigabytes to build. No rule file cpuplugd
/// loads names a variable this often (a rule line is 2,048 characters).
pub const MAX_PLACES: usize = 10_000;

/// The refusal of an answer past [`MAX_PLACES`].
fn too_many(name: &str, n: usize) -> String {
    format!(
        "`{name}` stands in {n} places; plugtop answers for at most {MAX_PLACES}: use `plugtop check` or a text search"
    )
}

/// Every place the variable at `offset` stands (its definition when
/// asked), or why not (more than [`MAX_PLACES`]).
pub fn references(
    uri: &Uri,
    text: &str,
    offset: usize,
    with_definition: bool,
) -> Result<Vec<Location>, String> {
    let all = occurrences(text);
    let Some(name) = at(&all, offset).map(|o| o.name.clone()) else {
        return Ok(Vec::new());
    };
    let wanted =
        |o: &&super::names::Occurrence| o.name == name && (with_definition || !o.definition);
    let n = all.iter().filter(wanted).count();
    if n > MAX_PLACES {
        return Err(too_many(&name, n));
    }
    let index = LineIndex::new(text);
    Ok(all
        .iter()
        .filter(wanted)
        .map(|o| {
            Location::new(
                uri.clone(),
                lsp_types::Range::new(index.position(o.start), index.position(o.end)),
            )
        })
        .collect())
}

/// Errors and warnings of `text`, counted apart: a rename may add
/// neither (a new name `check` would call a misspelt keyword is refused
/// as surely as one that breaks the file).
fn findings(text: &str, facts: &SystemFacts) -> (usize, usize) {
    let (_, outcome) = analyse(text, facts);
    let errors = outcome
        .diagnostics
        .iter()
        .filter(|d| d.severity == Severity::Error)
        .count();
    (errors, outcome.diagnostics.len() - errors)
}

/// The edit renaming the variable at `offset` to `new`, or why not.
/// `Ok(None)`: no variable there.
pub fn rename(
    uri: &Uri,
    text: &str,
    offset: usize,
    new: &str,
    facts: &SystemFacts,
) -> Result<Option<WorkspaceEdit>, String> {
    let all = occurrences(text);
    let Some(name) = at(&all, offset).map(|o| o.name.clone()) else {
        return Ok(None);
    };
    let taken: HashSet<&str> = all
        .iter()
        .filter(|o| o.definition && o.name != name)
        .map(|o| o.name.as_str())
        .collect();
    if let Some(why) = refuse_name(new, &taken) {
        return Err(format!("cannot rename `{name}` to `{new}`: {why}"));
    }
    let mine: Vec<_> = all.iter().filter(|o| o.name == name).collect();
    if mine.len() > MAX_PLACES {
        return Err(too_many(&name, mine.len()));
    }
    let mut renamed = String::with_capacity(text.len());
    let mut from = 0;
    for o in &mine {
        renamed.push_str(&text[from..o.start]);
        renamed.push_str(new);
        from = o.end;
    }
    renamed.push_str(&text[from..]);
    let (before, after) = (findings(text, facts), findings(&renamed, facts));
    if after.0 > before.0 {
        return Err(format!(
            "cannot rename `{name}` to `{new}`: cpuplugd would read the renamed file differently"
        ));
    }
    if after.1 > before.1 {
        return Err(format!(
            "cannot rename `{name}` to `{new}`: `plugtop check` would warn about the new name"
        ));
    }
    let index = LineIndex::new(text);
    let edits = mine
        .iter()
        .map(|o| TextEdit {
            range: lsp_types::Range::new(index.position(o.start), index.position(o.end)),
            new_text: new.to_string(),
        })
        .collect();
    Ok(Some(WorkspaceEdit {
        changes: Some(HashMap::from([(uri.clone(), edits)])),
        ..WorkspaceEdit::default()
    }))
}
