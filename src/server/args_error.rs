//! A serde error about the tool's arguments as a refusal that names the field, with the
//! error code of what is wrong (a missing field, an unknown action or stage).

use crate::error::{Error, ErrorCode};

pub(super) fn describe_serde_error(path: &str, inner: &str) -> Error {
    // serde quotes the offending value whole (`invalid type: string "…"`), and the path
    // holds caller keys (`answers.<id>`).
    let inner = &crate::error::clip(inner, crate::error::QUOTE_CHARS);
    let path = super::args::clip(path);
    let path = path.as_str();
    let at_root = path == "." || path.is_empty();
    if at_root {
        if let Some(field) = between(inner, "missing field `", "`") {
            return Error::argument(
                ErrorCode::MissingField,
                format!(
                    "field `{field}` is required (one of: {})",
                    crate::workflow::action::names()
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            );
        }
        return Error::argument(ErrorCode::InvalidArgument, inner.to_string());
    }
    let code = match path {
        "action" if inner.contains("unknown variant") => ErrorCode::UnknownAction,
        "stage" if inner.contains("unknown variant") => ErrorCode::InvalidStage,
        _ => ErrorCode::InvalidArgument,
    };
    Error::argument(code, format!("field `{path}`: {inner}"))
}

fn between<'a>(s: &'a str, start: &str, end: &str) -> Option<&'a str> {
    let i = s.find(start)? + start.len();
    let j = s[i..].find(end)? + i;
    Some(&s[i..j])
}
