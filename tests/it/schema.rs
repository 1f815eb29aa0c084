//! The tool's schemas are standard JSON Schema 2020-12: each is valid against the
//! 2020-12 meta-schema, and compiles under a validator that asserts formats and refuses
//! the ones it does not know (schemars' `uint32`, `uint64`, `int64`, `double`, … are not
//! JSON Schema formats; Claude Code 2.1 prints a warning on stderr for each of them on
//! every call).

use jsonschema::Draft;
use serde_json::Value;

fn schemas() -> [(&'static str, Value); 2] {
    let tool = bmad_mcp::server::tool();
    let input = Value::Object((*tool.input_schema).clone());
    assert!(tool.output_schema.is_none(), "no outputSchema on the tool");
    [
        ("input", input),
        ("output", bmad_mcp::server::reply_schema()),
    ]
}

/// Every `format` in a schema, with where it is.
fn formats(v: &Value, at: &str, out: &mut Vec<String>) {
    match v {
        Value::Object(o) => {
            for (k, child) in o {
                let here = format!("{at}/{k}");
                match (k.as_str(), child) {
                    ("format", Value::String(f)) => out.push(format!("{here} = {f}")),
                    _ => formats(child, &here, out),
                }
            }
        }
        Value::Array(a) => {
            for (i, child) in a.iter().enumerate() {
                formats(child, &format!("{at}/{i}"), out);
            }
        }
        _ => {}
    }
}

#[test]
fn both_schemas_are_valid_2020_12_schemas() {
    for (which, schema) in schemas() {
        assert_eq!(
            schema["$schema"], "https://json-schema.org/draft/2020-12/schema",
            "{which}"
        );
        if let Err(e) = jsonschema::draft202012::meta::validate(&schema) {
            panic!("the {which} schema is not a valid 2020-12 schema: {e}");
        }
    }
}

#[test]
fn both_schemas_compile_under_a_validator_that_refuses_unknown_formats() {
    for (which, schema) in schemas() {
        let mut found = Vec::new();
        formats(&schema, "", &mut found);
        let built = jsonschema::options()
            .with_draft(Draft::Draft202012)
            .should_validate_formats(true)
            .should_ignore_unknown_formats(false)
            .build(&schema);
        if let Err(e) = built {
            panic!("the {which} schema does not compile strictly: {e}\nformats in it: {found:#?}");
        }
    }
}

#[test]
fn the_strict_validator_does_refuse_an_unknown_format() {
    // The check above can fail: the same options refuse schemars' integer formats.
    for format in ["uint32", "uint64", "int64", "uint"] {
        let schema = serde_json::json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "integer",
            "format": format
        });
        let built = jsonschema::options()
            .with_draft(Draft::Draft202012)
            .should_validate_formats(true)
            .should_ignore_unknown_formats(false)
            .build(&schema);
        assert!(built.is_err(), "{format} was accepted");
    }
}

#[tokio::test]
async fn the_strict_validator_accepts_replies_the_server_gives() {
    // The output schema still describes what the server sends: replies from real calls to
    // the binary (a change, a status, an error) validate against it.
    let output = bmad_mcp::server::reply_schema();
    let validator = jsonschema::options()
        .with_draft(Draft::Draft202012)
        .should_validate_formats(true)
        .should_ignore_unknown_formats(false)
        .build(&output)
        .expect("the output schema compiles");
    let sandbox = crate::support::Sandbox::new();
    let c = crate::support::connect(crate::support::Era::Legacy, &sandbox.project).await;
    let started = c
        .ok(crate::support::start_args(
            &sandbox.project,
            "Build a todo app",
        ))
        .await;
    let id = started["session_id"].as_str().unwrap().to_string();
    let status = c
        .ok(serde_json::json!({
            "action": "status", "session_id": id,
            "cwd": sandbox.project.display().to_string()
        }))
        .await;
    let error = c
        .refused(serde_json::json!({"action": "explode"}), "unknown_action")
        .await;
    c.close().await;
    for reply in [started, status, error] {
        let problems: Vec<String> = validator
            .iter_errors(&reply)
            .map(|e| format!("{e} at {}", e.instance_path()))
            .collect();
        assert!(problems.is_empty(), "{problems:#?}\n{reply:#}");
    }
}
