//! Accepted `#[derive(ToolSchema)]` inputs.

use dsh_tools::ToolSchema;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, ToolSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Options<'a, T> {
    #[serde(alias = "maxCount")]
    max_count: Option<T>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    label: Option<std::borrow::Cow<'a, str>>,
}

#[derive(Serialize, Deserialize, ToolSchema)]
#[serde(tag = "kind", content = "data", rename_all = "kebab-case")]
enum Command {
    Stop,
    Go(u8),
    Turn { degrees: i16 },
}

#[derive(Serialize, Deserialize, ToolSchema)]
#[serde(untagged)]
enum Either {
    Text(String),
    Number(f64),
}

fn main() {
    assert!(Options::<u8>::SCHEMA.to_value_schema().is_ok());
    assert!(Command::SCHEMA.to_value_schema().is_ok());
    assert!(Either::SCHEMA.to_value_schema().is_ok());
}
