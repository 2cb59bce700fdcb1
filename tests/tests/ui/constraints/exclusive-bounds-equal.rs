use dsh_tools::tool;

/// Scale.
#[tool]
async fn scale(
    /// A factor strictly between 0 and 0.
    #[schema(range(exclusive_min = 0.0, exclusive_max = 0.0))]
    factor: f64,
) {
    let _ = factor;
}

fn main() {}
