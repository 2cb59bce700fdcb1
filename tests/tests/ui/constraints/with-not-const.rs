use dsh_tools::ToolSchema;
use dsh_tools::schema::SchemaSpec;
use serde::Deserialize;

pub fn name_schema() -> SchemaSpec {
    <String as ToolSchema>::SCHEMA
}

#[derive(Deserialize, ToolSchema)]
pub struct Person {
    /// The schema is a `const`: the override must be a `const fn`.
    #[schema(with = "name_schema")]
    pub name: String,
}

fn main() {
    let _ = <Person as ToolSchema>::SCHEMA;
}
