use dsh_tools::tool;

/// Store a setting.
#[tool]
async fn set(
    /// The setting's value: any JSON.
    #[schema(range(min = 0))]
    value: serde_json::Value,
) {
    let _ = value;
}

fn main() {
    let _ = set::definition();
}
