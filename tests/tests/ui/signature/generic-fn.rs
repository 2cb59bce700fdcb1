use dsh_tools::tool;

/// Echo anything.
#[tool]
async fn echo<T: serde::Serialize>(value: T, label: impl Into<String>) -> T {
    let _ = label.into();
    value
}

fn main() {}
