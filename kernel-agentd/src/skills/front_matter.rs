//! The strict parser of a `SKILL.md`: a `---` fence, `key: value` lines (`name`, `description`,
//! `side_effects`; blank lines and `#` comments allowed; a value may be quoted), a closing `---`
//! fence, then the body. Anything else is a [`FrontMatterError`] naming the line.

use std::fmt;

/// Longest skill name (the same rule as tool names: `[A-Za-z0-9_-]{1,64}`).
const MAX_NAME_LEN: usize = 64;

/// Longest description, in characters (the index holds one line per skill).
pub(super) const MAX_DESCRIPTION_CHARS: usize = 300;

/// The most a skill may do, as it declares it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SideEffects {
    /// Reads only.
    ReadOnly,
    /// Writes local files.
    LocalWrite,
    /// Sends messages to others.
    MessageSend,
    /// Starts or stops processes.
    ProcessControl,
}

impl SideEffects {
    /// The front-matter spelling: `read-only`, `local-write`, `message-send`, `process-control`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::ReadOnly => "read-only",
            Self::LocalWrite => "local-write",
            Self::MessageSend => "message-send",
            Self::ProcessControl => "process-control",
        }
    }

    fn parse(value: &str) -> Option<Self> {
        [
            Self::ReadOnly,
            Self::LocalWrite,
            Self::MessageSend,
            Self::ProcessControl,
        ]
        .into_iter()
        .find(|s| s.as_str() == value)
    }
}

impl fmt::Display for SideEffects {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What the front matter declares.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct FrontMatter {
    pub name: String,
    pub description: String,
    pub side_effects: SideEffects,
}

/// Why a `SKILL.md` was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(super) enum FrontMatterError {
    #[error("the file does not start with a `---` front-matter fence")]
    NoOpeningFence,
    #[error("the front matter has no closing `---` fence")]
    NoClosingFence,
    #[error("line {line}: expected `key: value`")]
    NotKeyValue { line: usize },
    #[error("line {line}: unknown key {key:?} (allowed: name, description, side_effects)")]
    UnknownKey { line: usize, key: String },
    #[error("line {line}: {key} is given twice")]
    Duplicate { line: usize, key: &'static str },
    #[error("{0} is missing")]
    Missing(&'static str),
    #[error("line {line}: {key} is empty")]
    Empty { line: usize, key: &'static str },
    #[error("line {line}: name {value:?} must be 1-64 characters of a-z, A-Z, 0-9, _ and -")]
    BadName { line: usize, value: String },
    #[error("line {line}: description is longer than {MAX_DESCRIPTION_CHARS} characters")]
    LongDescription { line: usize },
    #[error(
        "line {line}: side_effects {value:?} is not one of read-only, local-write, message-send, \
         process-control"
    )]
    BadSideEffects { line: usize, value: String },
    #[error("line {line}: unbalanced quotes")]
    BadQuotes { line: usize },
}

/// Splits `text` into its front matter and body (the body with leading blank lines removed).
pub(super) fn parse(text: &str) -> Result<(FrontMatter, &str), FrontMatterError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut lines = LineIter { rest: text };
    match lines.next() {
        Some(first) if first.trim_end() == "---" => {}
        _ => return Err(FrontMatterError::NoOpeningFence),
    }
    let (mut name, mut description, mut side_effects) = (None, None, None);
    let mut number = 1;
    loop {
        let Some(line) = lines.next() else {
            return Err(FrontMatterError::NoClosingFence);
        };
        number += 1;
        let line = line.trim_end();
        if line == "---" {
            break;
        }
        if line.trim().is_empty() || line.trim_start().starts_with('#') {
            continue;
        }
        let Some((key, value)) = line.split_once(':') else {
            return Err(FrontMatterError::NotKeyValue { line: number });
        };
        let key = key.trim();
        let value = unquote(value.trim(), number)?;
        let (slot, key): (&mut Option<(usize, String)>, &'static str) = match key {
            "name" => (&mut name, "name"),
            "description" => (&mut description, "description"),
            "side_effects" => (&mut side_effects, "side_effects"),
            other => {
                return Err(FrontMatterError::UnknownKey {
                    line: number,
                    key: other.to_owned(),
                });
            }
        };
        if slot.is_some() {
            return Err(FrontMatterError::Duplicate { line: number, key });
        }
        if value.is_empty() {
            return Err(FrontMatterError::Empty { line: number, key });
        }
        *slot = Some((number, value.to_owned()));
    }
    let (line, name) = name.ok_or(FrontMatterError::Missing("name"))?;
    if !valid_name(&name) {
        return Err(FrontMatterError::BadName { line, value: name });
    }
    let (line, description) = description.ok_or(FrontMatterError::Missing("description"))?;
    if description.chars().count() > MAX_DESCRIPTION_CHARS {
        return Err(FrontMatterError::LongDescription { line });
    }
    let (line, value) = side_effects.ok_or(FrontMatterError::Missing("side_effects"))?;
    let side_effects =
        SideEffects::parse(&value).ok_or(FrontMatterError::BadSideEffects { line, value })?;
    let body = lines.rest.trim_start_matches(['\n', '\r']);
    Ok((
        FrontMatter {
            name,
            description,
            side_effects,
        },
        body,
    ))
}

/// Whether `name` matches `^[A-Za-z0-9_-]{1,64}$`.
pub(super) fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= MAX_NAME_LEN
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

/// `"x"` / `'x'` → `x`; a value starting with a quote must end with the same one.
fn unquote(value: &str, line: usize) -> Result<&str, FrontMatterError> {
    for quote in ['"', '\''] {
        if let Some(inner) = value.strip_prefix(quote) {
            return match inner.strip_suffix(quote) {
                Some(inner) if !inner.contains(quote) => Ok(inner.trim()),
                _ => Err(FrontMatterError::BadQuotes { line }),
            };
        }
    }
    Ok(value)
}

/// Lines of a text (without their `\n`), keeping what is left after each.
struct LineIter<'a> {
    rest: &'a str,
}

impl<'a> Iterator for LineIter<'a> {
    type Item = &'a str;

    fn next(&mut self) -> Option<&'a str> {
        if self.rest.is_empty() {
            return None;
        }
        let (line, rest) = match self.rest.split_once('\n') {
            Some((line, rest)) => (line, rest),
            None => (self.rest, ""),
        };
        self.rest = rest;
        Some(line.strip_suffix('\r').unwrap_or(line))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = "---\nname: daily-brief\n# a comment\n\ndescription: \"Summarise the day\"\nside_effects: read-only\n---\n\n# Body\nSteps.\n";

    #[test]
    fn a_well_formed_skill_parses_and_keeps_its_body() {
        let (fm, body) = parse(GOOD).unwrap();
        assert_eq!(fm.name, "daily-brief");
        assert_eq!(fm.description, "Summarise the day");
        assert_eq!(fm.side_effects, SideEffects::ReadOnly);
        assert_eq!(body, "# Body\nSteps.\n");
        let crlf = GOOD.replace('\n', "\r\n");
        let (fm2, body2) = parse(&crlf).unwrap();
        assert_eq!(fm2, fm);
        assert_eq!(body2, "# Body\r\nSteps.\r\n");
    }

    #[test]
    fn malformed_front_matter_is_refused_with_the_reason() {
        let cases: [(&str, FrontMatterError); 9] = [
            ("# no fence\n", FrontMatterError::NoOpeningFence),
            ("---\nname: a\n", FrontMatterError::NoClosingFence),
            (
                "---\nname a\n---\n",
                FrontMatterError::NotKeyValue { line: 2 },
            ),
            (
                "---\nname: a\nlicense: MIT\n---\n",
                FrontMatterError::UnknownKey {
                    line: 3,
                    key: "license".into(),
                },
            ),
            (
                "---\nname: a\nname: b\n---\n",
                FrontMatterError::Duplicate {
                    line: 3,
                    key: "name",
                },
            ),
            (
                "---\nname: a\nside_effects: read-only\n---\n",
                FrontMatterError::Missing("description"),
            ),
            (
                "---\nname: a b\ndescription: d\nside_effects: read-only\n---\n",
                FrontMatterError::BadName {
                    line: 2,
                    value: "a b".into(),
                },
            ),
            (
                "---\nname: a\ndescription: d\nside_effects: everything\n---\n",
                FrontMatterError::BadSideEffects {
                    line: 4,
                    value: "everything".into(),
                },
            ),
            (
                "---\nname: \"a\ndescription: d\nside_effects: read-only\n---\n",
                FrontMatterError::BadQuotes { line: 2 },
            ),
        ];
        for (text, want) in cases {
            assert_eq!(parse(text).unwrap_err(), want, "{text:?}");
        }
        let long = format!(
            "---\nname: a\ndescription: {}\nside_effects: read-only\n---\n",
            "x".repeat(MAX_DESCRIPTION_CHARS + 1)
        );
        assert_eq!(
            parse(&long).unwrap_err(),
            FrontMatterError::LongDescription { line: 3 }
        );
    }
}
