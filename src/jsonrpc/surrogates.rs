//! Lone UTF-16 surrogate escapes (`"\ud83d"` with no `\udXXX` low half after it, or a low
//! half alone). JavaScript produces them when it cuts a string inside an emoji and
//! `JSON.stringify`s the rest; serde_json rightly refuses them, as they encode no Unicode
//! character. The text around them is intact, so the server repairs the line the way
//! `String.prototype.toWellFormed` does, each lone half becoming U+FFFD, rather than
//! failing a request whose only fault is one lost half character.

/// A line with every lone surrogate escape replaced by `\ufffd`.
pub struct Repaired {
    pub line: Vec<u8>,
    pub count: usize,
    /// Byte offset of the first lone escape, and its text, for the log.
    pub first_at: usize,
    pub first: String,
}

fn hex4(bytes: &[u8]) -> Option<u16> {
    let text = std::str::from_utf8(bytes.get(..4)?).ok()?;
    u16::from_str_radix(text, 16).ok()
}

fn is_high(u: u16) -> bool {
    (0xD800..=0xDBFF).contains(&u)
}

fn is_low(u: u16) -> bool {
    (0xDC00..=0xDFFF).contains(&u)
}

/// The repaired line, or `None` when the line has no lone surrogate escape. Only escapes
/// inside strings count (`\\ud83d` is a backslash and letters); `\ufffd` has the same six
/// bytes as the escape it replaces, so byte offsets in later error messages still hold.
pub fn repair(line: &[u8]) -> Option<Repaired> {
    let mut fixed: Option<Repaired> = None;
    let mut in_string = false;
    let mut i = 0;
    while i < line.len() {
        let b = line[i];
        if !in_string {
            in_string = b == b'"';
            i += 1;
            continue;
        }
        match b {
            b'"' => {
                in_string = false;
                i += 1;
            }
            b'\\' if line.get(i + 1) == Some(&b'u') => {
                let Some(unit) = hex4(&line[i + 2..]) else {
                    i += 2;
                    continue;
                };
                let paired = is_high(unit)
                    && line.get(i + 6..i + 8) == Some(b"\\u".as_slice())
                    && line.get(i + 8..).and_then(hex4).is_some_and(is_low);
                if paired {
                    i += 12;
                    continue;
                }
                if is_high(unit) || is_low(unit) {
                    let r = fixed.get_or_insert_with(|| Repaired {
                        line: line.to_vec(),
                        count: 0,
                        first_at: i,
                        first: String::from_utf8_lossy(&line[i..i + 6]).into_owned(),
                    });
                    r.line[i..i + 6].copy_from_slice(b"\\ufffd");
                    r.count += 1;
                }
                i += 6;
            }
            b'\\' => i += 2,
            _ => i += 1,
        }
    }
    fixed
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixed(line: &str) -> Option<String> {
        repair(line.as_bytes()).map(|r| String::from_utf8(r.line).unwrap())
    }

    #[test]
    fn lone_halves_become_the_replacement_character_and_pairs_stay() {
        assert_eq!(
            fixed(r#"{"a":"x\ud83d"}"#).as_deref(),
            Some(r#"{"a":"x\ufffd"}"#)
        );
        assert_eq!(
            fixed(r#"{"a":"\uDE00 and \ud83d\ude00"}"#).as_deref(),
            Some(r#"{"a":"\ufffd and \ud83d\ude00"}"#)
        );
        // A high half followed by another high half: the first is lone, the pair after
        // it is whole.
        assert_eq!(
            fixed(r#""\ud83d\ud83d\ude00""#).as_deref(),
            Some(r#""\ufffd\ud83d\ude00""#)
        );
        assert_eq!(fixed(r#"{"a":"\ud83d\ude00 \u00e9"}"#), None);
    }

    #[test]
    fn escaped_backslashes_and_text_outside_strings_are_not_escapes() {
        assert_eq!(fixed(r#"{"a":"\\ud83d"}"#), None);
        assert_eq!(fixed(r#"{"a":1} \ud83d"#), None);
        assert_eq!(
            fixed(r#"{"a":"\\\ud83d"}"#).as_deref(),
            Some(r#"{"a":"\\\ufffd"}"#)
        );
    }

    #[test]
    fn reports_the_count_and_the_first_offset() {
        let r = repair(br#"{"k":"ab\udc00\ud800"}"#).unwrap();
        assert_eq!((r.count, r.first_at, r.first.as_str()), (2, 8, r"\udc00"));
        assert!(serde_json::from_slice::<serde_json::Value>(&r.line).is_ok());
    }

    #[test]
    fn cut_escapes_do_not_panic() {
        for line in [
            r#""\u"#,
            r#""\ud8"#,
            r#""\ud83d\u"#,
            r#""\ud83d\ude"#,
            "\"\\",
        ] {
            let _ = repair(line.as_bytes());
        }
    }
}
