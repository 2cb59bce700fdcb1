use dsh_tools::ToolSchema;
use serde::Deserialize;

#[derive(Deserialize, ToolSchema)]
#[serde(try_from = "String")]
struct Version {
    #[serde(with = "text")]
    major: u32,
    #[serde(deserialize_with = "text::deserialize")]
    minor: u32,
}

mod text {
    pub fn deserialize<'de, D: serde::Deserializer<'de>>(_: D) -> Result<u32, D::Error> {
        Ok(0)
    }
    pub fn serialize<S: serde::Serializer>(_: &u32, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u32(0)
    }
}

impl TryFrom<String> for Version {
    type Error = String;
    fn try_from(_: String) -> Result<Self, String> {
        Err("no".into())
    }
}

fn main() {}
