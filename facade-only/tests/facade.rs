//! The tool of a facade-only crate registers and runs, and refuses bad arguments with the
//! validation texts, like any other.

use dsh_tools_facade_only::get_weather;
use dsh_tools_runtime::ToolRegistry;
use dsh_tools_runtime::dsh_tools::exec::ToolExecutionInput;
use serde_json::json;

#[tokio::test]
async fn a_tool_declared_through_the_facade_runs_and_validates() {
    let registry = ToolRegistry::new();
    registry
        .register(get_weather::definition().expect("a valid tool"))
        .expect("the tool registers")
        .keep();
    let ok = registry
        .execute(ToolExecutionInput::new(
            "c1",
            "get_weather",
            json!({"city": "Oslo", "days": 2}),
        ))
        .await;
    assert_eq!(ok.value(), Some(&json!({"celsius": 26.0})));
    let refused = registry
        .execute(ToolExecutionInput::new(
            "c2",
            "get_weather",
            json!({"city": "Oslo", "days": 30}),
        ))
        .await;
    let text = refused.content()[0].as_text().expect("a text block");
    assert!(
        text.contains(r#""days" must be at most 14"#),
        "the validation text: {text}"
    );
}
