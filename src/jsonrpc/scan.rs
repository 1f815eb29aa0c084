//! A byte-by-byte look at the top level of a line that serde_json refused or that is too
//! long to parse: which members the top-level object has, the `id`, `jsonrpc` and `method`
//! values when they are short scalars, and where arrays and objects first nest deeper than
//! serde_json's limit. It neither recurses nor keeps more than a few hundred bytes, so it
//! reads lines that serde cannot (10,000 levels deep, cut short, gigabytes long) and can be
//! fed one chunk at a time.

use serde_json::Value;

/// serde_json's recursion limit: a message nested deeper is refused before it is read.
pub const MAX_DEPTH: usize = 128;

/// A scalar longer than this is not kept (no usable `id` or `method` is this long).
const MAX_SCALAR: usize = 256;

/// The top-level members of the `jsonrpc` message that a line seems to hold.
#[derive(Debug, Default, Clone)]
pub struct Top {
    /// The first byte that is not whitespace: `{` for an object, `[` for an array (a batch).
    pub first: Option<u8>,
    /// Byte offset where nesting first went deeper than [`MAX_DEPTH`].
    pub deep_at: Option<usize>,
    pub has_id: bool,
    pub has_method: bool,
    pub has_result: bool,
    pub has_error: bool,
    id: Option<Vec<u8>>,
    jsonrpc: Option<Vec<u8>>,
    method: Option<Vec<u8>>,
}

impl Top {
    /// The `id`, when it was read whole and is one JSON-RPC allows (a string or an integer).
    pub fn id(&self) -> Option<Value> {
        let v: Value = serde_json::from_slice(self.id.as_deref()?).ok()?;
        let usable = v.is_string() || v.is_i64() || v.is_u64();
        usable.then_some(v)
    }

    pub fn jsonrpc_is_2_0(&self) -> bool {
        self.jsonrpc.as_deref().map(<[u8]>::trim_ascii) == Some(b"\"2.0\"".as_slice())
    }

    pub fn method_is_string(&self) -> bool {
        self.method
            .as_deref()
            .and_then(|raw| serde_json::from_slice::<Value>(raw).ok())
            .is_some_and(|v| v.is_string())
    }

    /// A reply of the client (to a request of ours): never answered.
    pub fn is_response(&self) -> bool {
        !self.has_method && (self.has_result || self.has_error)
    }

    /// A notification: never answered, whatever is wrong with it.
    pub fn is_notification(&self) -> bool {
        self.has_method && !self.has_id
    }
}

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
enum Slot {
    #[default]
    Key,
    Colon,
    Value,
}

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
enum Member {
    Id,
    Jsonrpc,
    Method,
    #[default]
    Other,
}

/// The scanner's state between chunks.
#[derive(Debug, Default)]
pub struct Scan {
    offset: usize,
    depth: usize,
    ended: bool,
    in_string: bool,
    escaped: bool,
    slot: Slot,
    key: Vec<u8>,
    member: Member,
    value: Vec<u8>,
    value_unusable: bool,
    top: Top,
}

impl Scan {
    pub fn feed(&mut self, chunk: &[u8]) {
        for &b in chunk {
            self.step(b);
        }
    }

    /// What was seen. A member whose value had not ended when the input did (a line cut
    /// short) is not reported: `"id": 12` cut after the `1` must not answer id 1.
    pub fn finish(self) -> Top {
        self.top
    }

    fn step(&mut self, b: u8) {
        let at = self.offset;
        self.offset += 1;
        if self.ended {
            return;
        }
        // Only members of the top-level object matter; deeper bytes are merely counted.
        let member_level = self.depth == 1 && self.top.first == Some(b'{');
        if self.in_string {
            let closing = !self.escaped && b == b'"';
            self.escaped = !self.escaped && b == b'\\';
            if member_level {
                match self.slot {
                    Slot::Key if closing => self.slot = Slot::Colon,
                    Slot::Key => {
                        if self.key.len() <= MAX_SCALAR {
                            self.key.push(b);
                        }
                    }
                    Slot::Value => self.capture(b),
                    Slot::Colon => {}
                }
            }
            self.in_string = !closing;
            return;
        }
        if matches!(b, b' ' | b'\t' | b'\n' | b'\r') {
            return;
        }
        if self.top.first.is_none() {
            self.top.first = Some(b);
        }
        match b {
            b'"' => {
                self.in_string = true;
                if member_level {
                    match self.slot {
                        Slot::Key => self.key.clear(),
                        Slot::Value => self.capture(b),
                        Slot::Colon => {}
                    }
                }
            }
            b'{' | b'[' => {
                if member_level && self.slot == Slot::Value {
                    // An object or array is no usable id, jsonrpc or method.
                    self.value_unusable = true;
                }
                self.depth += 1;
                if self.depth > MAX_DEPTH && self.top.deep_at.is_none() {
                    self.top.deep_at = Some(at);
                }
            }
            b'}' | b']' => {
                if member_level {
                    self.end_member();
                }
                self.depth = self.depth.saturating_sub(1);
                self.ended = self.depth == 0;
            }
            b',' if member_level => {
                self.end_member();
                self.slot = Slot::Key;
            }
            b':' if member_level && self.slot == Slot::Colon => self.begin_value(),
            _ if member_level && self.slot == Slot::Value => self.capture(b),
            _ => {}
        }
    }

    fn begin_value(&mut self) {
        self.member = match self.key.as_slice() {
            b"id" => Member::Id,
            b"jsonrpc" => Member::Jsonrpc,
            b"method" => Member::Method,
            _ => Member::Other,
        };
        match self.key.as_slice() {
            b"id" => self.top.has_id = true,
            b"method" => self.top.has_method = true,
            b"result" => self.top.has_result = true,
            b"error" => self.top.has_error = true,
            _ => {}
        }
        self.value.clear();
        self.value_unusable = false;
        self.slot = Slot::Value;
    }

    fn capture(&mut self, b: u8) {
        if self.member == Member::Other {
            return;
        }
        if self.value.len() < MAX_SCALAR {
            self.value.push(b);
        } else {
            self.value_unusable = true;
        }
    }

    fn end_member(&mut self) {
        if self.slot != Slot::Value || self.value_unusable {
            self.member = Member::Other;
            return;
        }
        let value = std::mem::take(&mut self.value);
        let field = match self.member {
            Member::Id => &mut self.top.id,
            Member::Jsonrpc => &mut self.top.jsonrpc,
            Member::Method => &mut self.top.method,
            Member::Other => return,
        };
        // The first occurrence counts, as it is the one a reader of the line sees first.
        field.get_or_insert(value);
        self.member = Member::Other;
    }
}

/// Scans a whole line.
pub fn scan(line: &[u8]) -> Top {
    let mut s = Scan::default();
    s.feed(line);
    s.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_the_members_of_a_request_cut_short() {
        let top = scan(br#"{"jsonrpc": "2.0", "id": 1, "method": "tools/call""#);
        assert_eq!(top.id(), Some(json!(1)));
        assert!(top.jsonrpc_is_2_0() && top.has_method && !top.is_notification());
        // The method's value never ended, so it is not reported as a string.
        assert!(!top.method_is_string());
    }

    #[test]
    fn a_value_cut_short_is_not_reported() {
        assert_eq!(scan(br#"{"id": 12"#).id(), None);
        assert!(scan(br#"{"id": 12"#).has_id);
        assert_eq!(scan(br#"{"id": "ab"#).id(), None);
    }

    #[test]
    fn finds_the_id_after_a_deep_or_large_member_and_skips_strings() {
        let mut line = br#"{"jsonrpc":"2.0","params":{"a":"\"id\": 5, }]","b":"#.to_vec();
        let first_bracket = line.len();
        line.extend(std::iter::repeat_n(b'[', 10_000));
        line.extend(std::iter::repeat_n(b']', 10_000));
        line.extend(br#"},"id":"req-7","method":"x"}"#);
        let top = scan(&line);
        assert_eq!(top.id(), Some(json!("req-7")));
        assert!(top.method_is_string());
        // Two objects enclose the brackets, so the 127th `[` is the first at depth 129.
        assert_eq!(top.deep_at, Some(first_bracket + 126));
    }

    #[test]
    fn fed_in_chunks_it_sees_what_it_sees_at_once() {
        let line = br#"{"id" : "a\"b" , "method":"ping","result":{}}"#;
        let whole = scan(line);
        let mut s = Scan::default();
        for b in line.chunks(3) {
            s.feed(b);
        }
        let chunked = s.finish();
        assert_eq!(chunked.id(), Some(json!("a\"b")));
        assert_eq!(whole.id(), chunked.id());
        assert!(chunked.has_result && !chunked.is_response());
    }

    #[test]
    fn ids_that_json_rpc_does_not_allow_are_not_usable() {
        for line in [
            r#"{"id": null}"#,
            r#"{"id": 1.5}"#,
            r#"{"id": {"a": 1}}"#,
            r#"{"id": [1]}"#,
            r#"{"id": true}"#,
        ] {
            let top = scan(line.as_bytes());
            assert!(top.has_id, "{line}");
            assert_eq!(top.id(), None, "{line}");
        }
        let long = format!(r#"{{"id": "{}"}}"#, "x".repeat(300));
        assert_eq!(scan(long.as_bytes()).id(), None);
    }

    #[test]
    fn nested_ids_do_not_count_and_trailing_bytes_are_ignored() {
        let top = scan(br#"{"params": {"id": 3}, "method": "m"} {"id": 4}"#);
        assert!(!top.has_id && top.is_notification());
        assert_eq!(scan(br#"[{"id": 1}]"#).first, Some(b'['));
        assert!(!scan(br#"[{"id": 1}]"#).has_id);
    }

    #[test]
    fn responses_and_notifications_are_recognised() {
        assert!(scan(br#"{"jsonrpc":"2.0","id":1,"result":{}}"#).is_response());
        assert!(scan(br#"{"jsonrpc":"2.0","id":1,"error":{"code":1}}"#).is_response());
        assert!(scan(br#"{"jsonrpc":"2.0","method":"notifications/x"}"#).is_notification());
        assert!(!scan(br#"{"jsonrpc":"1.0","id":1,"method":"x"}"#).jsonrpc_is_2_0());
    }
}
