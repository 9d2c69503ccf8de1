//! What the model sees of an output file: all of it up to a character limit, else its head and
//! tail around a marker saying how much was cut. Reads at most a few hundred KB of the file,
//! however large it is (the cut characters are counted in one streaming pass).

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::path::Path;

/// A UTF-8 character takes at most this many bytes.
const MAX_CHAR_BYTES: u64 = 4;

/// The file's text (invalid UTF-8 replaced), cut in the middle to at most `max_chars`
/// characters plus a marker naming how many were cut. A missing file reads as empty.
pub(super) fn excerpt(path: &Path, max_chars: usize) -> io::Result<String> {
    let mut file = match File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(String::new()),
        Err(e) => return Err(e),
    };
    let len = file.metadata()?.len();
    let whole_budget = max_chars as u64 * MAX_CHAR_BYTES;
    if len <= whole_budget {
        let mut bytes = Vec::new();
        file.take(whole_budget).read_to_end(&mut bytes)?;
        return Ok(cut_middle(&String::from_utf8_lossy(&bytes), max_chars));
    }
    let half = max_chars / 2;
    let half_bytes = half as u64 * MAX_CHAR_BYTES;
    let mut head = Vec::new();
    (&mut file).take(half_bytes).read_to_end(&mut head)?;
    file.seek(SeekFrom::Start(len.saturating_sub(half_bytes)))?;
    let mut tail = Vec::new();
    (&mut file).take(half_bytes).read_to_end(&mut tail)?;
    file.seek(SeekFrom::Start(0))?;
    let total = count_chars((&mut file).take(len))?;
    let head = String::from_utf8_lossy(&head);
    let tail = String::from_utf8_lossy(&tail);
    Ok(join(
        first_chars(&head, half),
        total.saturating_sub(2 * half),
        last_chars(&tail, half),
    ))
}

/// `text` if it has at most `max_chars` characters; otherwise its first and last
/// `max_chars / 2` characters around a marker saying how many were cut.
pub fn cut_middle(text: &str, max_chars: usize) -> String {
    let total = text.chars().count();
    if total <= max_chars {
        return text.to_owned();
    }
    let half = max_chars / 2;
    join(
        first_chars(text, half),
        total - 2 * half,
        last_chars(text, half),
    )
}

fn join(head: &str, cut: usize, tail: &str) -> String {
    format!("{head}\n\n[… {cut} characters cut …]\n\n{tail}")
}

fn first_chars(text: &str, n: usize) -> &str {
    kernel_common::text::head(text, n)
}

fn last_chars(text: &str, n: usize) -> &str {
    let total = text.chars().count();
    let start = text
        .char_indices()
        .nth(total.saturating_sub(n))
        .map_or(text.len(), |(i, _)| i);
    &text[start..]
}

/// Characters in a UTF-8 stream: bytes that do not continue a character.
fn count_chars(mut reader: impl Read) -> io::Result<usize> {
    let mut buf = vec![0u8; 64 * 1024];
    let mut count = 0;
    loop {
        let n = reader.read(&mut buf)?;
        if n == 0 {
            return Ok(count);
        }
        count += buf[..n].iter().filter(|b| (**b & 0xC0) != 0x80).count();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_text_is_whole() {
        assert_eq!(cut_middle("abc", 3), "abc");
        assert_eq!(cut_middle("", 3), "");
    }

    #[test]
    fn long_text_keeps_head_and_tail_by_characters() {
        let text = format!("{}{}{}", "头".repeat(6), "中".repeat(5), "尾".repeat(6));
        assert_eq!(
            cut_middle(&text, 10),
            format!(
                "{}\n\n[… 7 characters cut …]\n\n{}",
                "头".repeat(5),
                "尾".repeat(5)
            )
        );
    }

    #[test]
    fn files_small_and_large_and_missing() {
        let dir = tempfile::tempdir().unwrap();
        let small = dir.path().join("small.txt");
        std::fs::write(&small, "hello 世界").unwrap();
        assert_eq!(excerpt(&small, 100).unwrap(), "hello 世界");

        // Large enough that only the head and tail are read: 3-byte characters.
        let big = dir.path().join("big.txt");
        let text = format!("{}{}{}", "头".repeat(30), "中".repeat(100), "尾".repeat(30));
        std::fs::write(&big, &text).unwrap();
        assert_eq!(excerpt(&big, 40).unwrap(), cut_middle(&text, 40));
        assert!(
            excerpt(&big, 40)
                .unwrap()
                .contains("[… 120 characters cut …]")
        );

        assert_eq!(excerpt(&dir.path().join("none"), 10).unwrap(), "");
    }

    #[test]
    fn invalid_utf8_is_replaced_not_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bin");
        std::fs::write(&path, b"ok \xff\xfe end").unwrap();
        assert_eq!(excerpt(&path, 100).unwrap(), "ok \u{fffd}\u{fffd} end");
    }
}
