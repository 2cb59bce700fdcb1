use dsh_tools::ToolSchema;
use dsh_tools::schema::SchemaSpec;
use serde::Deserialize;

pub const fn name_schema() -> SchemaSpec {
    <String as ToolSchema>::SCHEMA
}

#[derive(Deserialize, ToolSchema)]
pub struct Person {
    /// The override is a string: a number range cannot apply to it.
    #[schema(with = "name_schema", range(min = 1))]
    pub name: String,
}

fn main() {
    let _ = <Person as ToolSchema>::SCHEMA;
}
