//! The pieces of a command's arguments: lists of `#n` numbers (half- and full-width, several
//! separators) and an optional one-word name, each refused with the command's `CommandError`.

use super::{CommandError, CommandKind, MAX_COMMAND_CHARS, MAX_NAME_CHARS, MAX_NUMBERS};

pub(super) fn non_empty_numbers(kind: CommandKind, args: &str) -> Result<Vec<u32>, CommandError> {
    let list = numbers(kind, args, MAX_NUMBERS)?;
    if list.is_empty() {
        return Err(CommandError::MissingNumber { command: kind });
    }
    Ok(list)
}

/// Splits `args` on whitespace, `/`, `,` (and their full-width forms, plus `、`) and parses each
/// piece as `#n` / `n`; duplicates are dropped; more than `max` distinct-or-not pieces is an error.
pub(super) fn numbers(kind: CommandKind, args: &str, max: usize) -> Result<Vec<u32>, CommandError> {
    let mut out = Vec::new();
    let pieces = args
        .split(|c: char| c.is_whitespace() || matches!(c, '/' | '／' | ',' | '，' | '、'))
        .filter(|piece| !piece.is_empty());
    for (index, piece) in pieces.enumerate() {
        if index >= max {
            return Err(CommandError::TooManyNumbers { command: kind, max });
        }
        let n = number(piece).ok_or_else(|| CommandError::InvalidNumber {
            command: kind,
            token: piece.chars().take(MAX_COMMAND_CHARS).collect(),
        })?;
        if !out.contains(&n) {
            out.push(n);
        }
    }
    Ok(out)
}

/// `#3`, `＃3`, `3` and full-width digits → 3; anything else, 0 or > u32::MAX → `None`.
fn number(piece: &str) -> Option<u32> {
    let digits = piece
        .strip_prefix('#')
        .or_else(|| piece.strip_prefix('＃'))
        .unwrap_or(piece);
    if digits.is_empty() {
        return None;
    }
    let mut value: u32 = 0;
    for c in digits.chars() {
        let digit = match c {
            '0'..='9' => c as u32 - '0' as u32,
            '０'..='９' => c as u32 - '０' as u32,
            _ => return None,
        };
        value = value.checked_mul(10)?.checked_add(digit)?;
    }
    (value >= 1).then_some(value)
}

pub(super) fn optional_name(kind: CommandKind, args: &str) -> Result<Option<String>, CommandError> {
    let name = args.trim();
    if name.is_empty() {
        return Ok(None);
    }
    if name.chars().any(char::is_whitespace) || name.chars().count() > MAX_NAME_CHARS {
        return Err(CommandError::InvalidName { command: kind });
    }
    Ok(Some(name.to_owned()))
}
