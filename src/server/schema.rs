//! The tool's input and output schemas, as standard JSON Schema 2020-12.
//!
//! schemars marks Rust integers and floats with `format`s of its own (`uint32`, `uint64`,
//! `int64`, `uint`, `double`, …). JSON Schema defines no such formats: a strict validator
//! refuses them, and Claude Code 2.1 prints a warning on stderr for each on every call. The
//! generator here drops every `format` that the 2020-12 specification does not define; the
//! `minimum: 0` that schemars writes beside an unsigned format stays, so the schema still
//! says that a count cannot be negative.

use schemars::generate::SchemaSettings;
use schemars::transform::{transform_subschemas, Transform};
use schemars::{JsonSchema, Schema};
use serde_json::Value;

/// The formats defined by JSON Schema 2020-12 (Validation, section 7.3).
pub const STANDARD_FORMATS: [&str; 19] = [
    "date-time",
    "date",
    "time",
    "duration",
    "email",
    "idn-email",
    "hostname",
    "idn-hostname",
    "ipv4",
    "ipv6",
    "uri",
    "uri-reference",
    "iri",
    "iri-reference",
    "uuid",
    "uri-template",
    "json-pointer",
    "relative-json-pointer",
    "regex",
];

/// Removes every `format` that is not a standard one, in a schema and all its subschemas.
#[derive(Debug, Clone, Copy)]
pub struct StandardFormatsOnly;

impl Transform for StandardFormatsOnly {
    fn transform(&mut self, schema: &mut Schema) {
        let standard = match schema.get("format") {
            Some(Value::String(f)) => STANDARD_FORMATS.contains(&f.as_str()),
            Some(_) => false,
            None => true,
        };
        if !standard {
            schema.remove("format");
        }
        transform_subschemas(self, schema);
    }
}

/// Writes a `oneOf` of string constants as an `enum` of them: the same values in a third
/// of the bytes. The constants' own descriptions go; the field's description names what
/// each does. A `default` of null goes too. Claude Code sends the input schema with every
/// request to the model.
#[derive(Debug, Clone, Copy)]
pub struct ConstantsAsEnum;

impl Transform for ConstantsAsEnum {
    fn transform(&mut self, schema: &mut Schema) {
        let constants: Option<Vec<Value>> =
            schema
                .get("oneOf")
                .and_then(Value::as_array)
                .and_then(|items| {
                    items
                        .iter()
                        .map(|i| match (i.get("const"), i.get("type")) {
                            (Some(c @ Value::String(_)), Some(t)) if t == "string" => {
                                Some(c.clone())
                            }
                            _ => None,
                        })
                        .collect()
                });
        // `#[serde(default)]` on an `Option` says nothing a schema reader needs.
        if schema.get("default") == Some(&Value::Null) {
            schema.remove("default");
        }
        if let Some(values) = constants {
            schema.remove("oneOf");
            schema.insert("type".into(), "string".into());
            schema.insert("enum".into(), Value::Array(values));
        }
        transform_subschemas(self, schema);
    }
}

/// The input schema of `T`: subschemas inlined, so that hosts and models see the action
/// names without resolving `$ref`s, and constants as enums ([`ConstantsAsEnum`]).
pub fn input<T: JsonSchema>() -> Value {
    let mut settings = SchemaSettings::draft2020_12()
        .with_transform(StandardFormatsOnly)
        .with_transform(ConstantsAsEnum);
    settings.inline_subschemas = true;
    settings
        .into_generator()
        .into_root_schema_for::<T>()
        .to_value()
}

/// The output schema of `T`, for the values the server serializes.
pub fn output<T: JsonSchema>() -> Value {
    let settings = SchemaSettings::draft2020_12()
        .for_serialize()
        .with_transform(StandardFormatsOnly);
    settings
        .into_generator()
        .into_root_schema_for::<T>()
        .to_value()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(JsonSchema)]
    #[allow(dead_code)]
    struct Counts {
        small: u32,
        big: u64,
        signed: i64,
        ratio: f64,
        maybe: Option<u32>,
        many: Vec<u16>,
        nested: Inner,
        when: Stamp,
    }

    #[derive(JsonSchema)]
    #[allow(dead_code)]
    struct Inner {
        size: usize,
    }

    /// A type that states a standard format, which must stay.
    #[allow(dead_code)]
    struct Stamp;

    impl JsonSchema for Stamp {
        fn schema_name() -> std::borrow::Cow<'static, str> {
            "Stamp".into()
        }
        fn json_schema(_: &mut schemars::SchemaGenerator) -> Schema {
            schemars::json_schema!({"type": "string", "format": "date-time"})
        }
    }

    fn all_formats(v: &Value, out: &mut Vec<String>) {
        match v {
            Value::Object(o) => {
                for (k, child) in o {
                    if let ("format", Value::String(f)) = (k.as_str(), child) {
                        out.push(f.clone());
                    } else {
                        all_formats(child, out);
                    }
                }
            }
            Value::Array(a) => a.iter().for_each(|c| all_formats(c, out)),
            _ => {}
        }
    }

    #[test]
    fn only_standard_formats_are_left_inlined_or_in_defs() {
        for schema in [input::<Counts>(), output::<Counts>()] {
            let mut found = Vec::new();
            all_formats(&schema, &mut found);
            assert_eq!(found, ["date-time"], "{schema:#}");
            // The non-negative bound stays with the unsigned integers.
            let text = schema.to_string();
            assert!(text.contains("\"minimum\":0"), "{schema:#}");
        }
        // Without the transform the same type has schemars' formats: the test can fail.
        let plain = schemars::schema_for!(Counts).to_value();
        let mut found = Vec::new();
        all_formats(&plain, &mut found);
        assert!(found.iter().any(|f| f == "uint32"), "{found:?}");
    }
}
