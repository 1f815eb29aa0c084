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
/// each does. Claude Code sends the input schema with every
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
        if let Some(values) = constants {
            schema.remove("oneOf");
            schema.insert("type".into(), "string".into());
            schema.insert("enum".into(), Value::Array(values));
        }
        transform_subschemas(self, schema);
    }
}

/// What a model reads of the input schema with every request, kept to what says
/// something: an argument that may be left out does not also admit `null` (leaving it out
/// says the same, and the server still reads a `null` as absent); a description's line
/// breaks (a doc comment's wrapping) are spaces; an array's items carry no description
/// beside the argument's own.
#[derive(Debug, Clone, Copy)]
pub struct OptionalWithoutNull;

impl Transform for OptionalWithoutNull {
    fn transform(&mut self, schema: &mut Schema) {
        let required: Vec<Value> = schema
            .get("required")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        if let Some(Value::Object(properties)) = schema.get_mut("properties") {
            for (name, property) in properties.iter_mut() {
                if !required.contains(&Value::String(name.clone())) {
                    without_null(property);
                }
            }
        }
        if let Some(Value::String(d)) = schema.get_mut("description") {
            *d = d.replace('\n', " ");
        }
        if let Some(Value::Object(items)) = schema.get_mut("items") {
            items.remove("description");
        }
        transform_subschemas(self, schema);
    }
}

/// Takes `null` out of a schema's `type` list (a single type left is written alone) and out
/// of its `enum`.
fn without_null(schema: &mut Value) {
    if let Some(Value::Array(types)) = schema.get_mut("type") {
        types.retain(|t| t != "null");
        if types.len() == 1 {
            let only = types.remove(0);
            schema["type"] = only;
        }
    }
    if let Some(Value::Array(values)) = schema.get_mut("enum") {
        values.retain(|v| !v.is_null());
    }
}

/// The input schema of `T`: subschemas inlined, so that hosts and models see the action
/// names without resolving `$ref`s, constants as enums ([`ConstantsAsEnum`]), optional
/// arguments without `null` ([`OptionalWithoutNull`]), and no `title` (the type's Rust
/// name, which tells a model nothing).
pub fn input<T: JsonSchema>() -> Value {
    let mut settings = SchemaSettings::draft2020_12()
        .with_transform(StandardFormatsOnly)
        .with_transform(ConstantsAsEnum)
        .with_transform(OptionalWithoutNull);
    settings.inline_subschemas = true;
    let mut schema = settings.into_generator().into_root_schema_for::<T>();
    schema.remove("title");
    schema.to_value()
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

    #[derive(JsonSchema, serde::Deserialize)]
    #[allow(dead_code)]
    enum Kind {
        One,
        Two,
    }

    /// Arguments.
    #[derive(JsonSchema, serde::Deserialize)]
    #[allow(dead_code)]
    struct Args {
        must: String,
        /// Given or left out,
        /// over two lines.
        #[serde(default)]
        maybe: Option<String>,
        #[serde(default)]
        kind: Option<Kind>,
        #[serde(default)]
        list: Option<Vec<Kind>>,
    }

    #[test]
    fn optional_arguments_admit_no_null_and_descriptions_are_one_line() {
        let schema = input::<Args>();
        let p = &schema["properties"];
        assert_eq!(
            schema["required"],
            serde_json::json!(["must"]),
            "{schema:#}"
        );
        assert_eq!(p["must"]["type"], "string");
        assert_eq!(p["maybe"]["type"], "string", "{schema:#}");
        assert_eq!(
            p["maybe"]["description"],
            "Given or left out, over two lines."
        );
        assert_eq!(p["kind"]["type"], "string", "{schema:#}");
        assert_eq!(p["kind"]["enum"], serde_json::json!(["One", "Two"]));
        assert_eq!(p["list"]["type"], "array", "{schema:#}");
        assert!(schema.get("title").is_none(), "{schema:#}");
        // Without the transform the same type admits null: the test can fail.
        let plain = schemars::schema_for!(Args).to_value();
        assert!(plain["properties"]["maybe"]["type"]
            .as_array()
            .is_some_and(|t| t.contains(&Value::from("null"))));
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
