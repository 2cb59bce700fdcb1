//! A host crate that depends on `dsh-tools-runtime` alone (no `dsh-tools` in its manifest):
//! `#[tool]` and `#[derive(ToolSchema)]`, used through the facade's re-export, find the
//! authoring crate at `::dsh_tools_runtime::dsh_tools` by themselves.

use dsh_tools_runtime::dsh_tools::{ToolSchema, tool};
use serde::{Deserialize, Serialize};

/// A forecast.
#[derive(Debug, Serialize, Deserialize, ToolSchema)]
pub struct Forecast {
    /// Temperature in degrees Celsius.
    pub celsius: f64,
}

/// Get the weather forecast for a city.
#[tool(read_only)]
pub async fn get_weather(
    /// The city, e.g. "Paris".
    city: String,
    /// How many days ahead.
    #[schema(range(1..=14))]
    days: Option<u8>,
) -> Result<Forecast, String> {
    let days = f64::from(days.unwrap_or(1));
    Ok(Forecast {
        celsius: 20.0 + days + city.len() as f64,
    })
}
