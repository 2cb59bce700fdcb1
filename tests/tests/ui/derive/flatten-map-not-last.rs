use std::collections::HashMap;

use dsh_tools::ToolSchema;
use serde::Deserialize;

#[derive(Deserialize, ToolSchema)]
struct Labels {
    name: String,
}

/// serde hands the map every remaining key, including `name`, which is not a `u8`.
#[derive(Deserialize, ToolSchema)]
struct Tagged {
    #[serde(flatten)]
    counts: HashMap<String, u8>,
    #[serde(flatten)]
    labels: Labels,
}

fn main() {
    let _ = Tagged::SCHEMA;
}
