//! Newline-delimited messages from a byte stream, never holding more than the line limit:
//! a longer line is scanned for its `id` as it streams past and then dropped.

use std::io::{self, BufRead};

use crate::jsonrpc::scan::{Scan, Top};

#[derive(Debug)]
pub enum Line {
    /// A line within the limit, without its newline.
    Whole(Vec<u8>),
    /// A line over the limit: its length (without the newline) and what its top level holds.
    TooLong { len: usize, top: Top },
}

pub struct Lines<R> {
    input: R,
    limit: usize,
}

impl<R: BufRead> Lines<R> {
    pub fn new(input: R, limit: usize) -> Lines<R> {
        Lines { input, limit }
    }

    /// The next line; `None` at the end of the input. A last line without a newline still
    /// counts: a client that writes its final request and closes stdin gets it answered.
    pub fn next_line(&mut self) -> io::Result<Option<Line>> {
        let mut buf = Vec::new();
        let mut over: Option<Scan> = None;
        let mut len = 0usize;
        loop {
            let available = match self.input.fill_buf() {
                Ok(bytes) => bytes,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if available.is_empty() {
                if over.is_none() && buf.is_empty() {
                    return Ok(None);
                }
                break;
            }
            let newline = available.iter().position(|&b| b == b'\n');
            let chunk = &available[..newline.unwrap_or(available.len())];
            len += chunk.len();
            match over.as_mut() {
                Some(scan) => scan.feed(chunk),
                None if len > self.limit => {
                    let mut scan = Scan::default();
                    scan.feed(&buf);
                    scan.feed(chunk);
                    buf = Vec::new();
                    over = Some(scan);
                }
                None => buf.extend_from_slice(chunk),
            }
            let consumed = newline.map_or(available.len(), |i| i + 1);
            self.input.consume(consumed);
            if newline.is_some() {
                break;
            }
        }
        Ok(Some(match over {
            Some(scan) => Line::TooLong {
                len,
                top: scan.finish(),
            },
            None => Line::Whole(buf),
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn all(input: &[u8], limit: usize, buffer: usize) -> Vec<Line> {
        let reader = io::BufReader::with_capacity(buffer, input);
        let mut lines = Lines::new(reader, limit);
        let mut out = Vec::new();
        while let Some(line) = lines.next_line().unwrap() {
            out.push(line);
        }
        out
    }

    #[test]
    fn splits_on_newlines_whatever_the_buffer_size_and_keeps_a_last_unterminated_line() {
        for buffer in [1, 2, 7, 4096] {
            let lines = all(b"{\"a\":1}\n\n  x\r\nlast", 100, buffer);
            let whole: Vec<&[u8]> = lines
                .iter()
                .map(|l| match l {
                    Line::Whole(b) => b.as_slice(),
                    Line::TooLong { .. } => panic!("nothing is too long"),
                })
                .collect();
            assert_eq!(
                whole,
                [&b"{\"a\":1}"[..], b"", b"  x\r", b"last"],
                "buffer {buffer}"
            );
        }
    }

    #[test]
    fn a_line_over_the_limit_is_scanned_not_kept_and_the_next_line_is_whole() {
        let big = format!(
            "{{\"jsonrpc\":\"2.0\",\"params\":{{\"x\":\"{}\"}},\"id\":42,\"method\":\"m\"}}",
            "a".repeat(1000)
        );
        for buffer in [3, 64, 8192] {
            let input = format!("{big}\n{{\"id\":1}}\n");
            let lines = all(input.as_bytes(), 100, buffer);
            assert_eq!(lines.len(), 2);
            match &lines[0] {
                Line::TooLong { len, top } => {
                    assert_eq!(*len, big.len());
                    assert_eq!(top.id(), Some(json!(42)));
                }
                other => panic!("{other:?}"),
            }
            assert!(matches!(&lines[1], Line::Whole(b) if b == b"{\"id\":1}"));
        }
    }

    #[test]
    fn the_limit_is_inclusive() {
        let lines = all(b"12345\n123456\n", 5, 4);
        assert!(matches!(&lines[0], Line::Whole(b) if b == b"12345"));
        assert!(matches!(&lines[1], Line::TooLong { len: 6, .. }));
        let lines = all(b"123456", 5, 4);
        assert!(matches!(&lines[0], Line::TooLong { len: 6, .. }));
    }
}
