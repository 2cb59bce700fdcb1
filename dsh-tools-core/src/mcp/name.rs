//! Public tool names of imported MCP tools and the server-name rule (`docs/CONTRACTS.md`, "MCP").

use sha2::{Digest, Sha256};

/// The longest public name a model provider accepts.
const MAX_PUBLIC_NAME_LEN: usize = 64;
/// Hex digits of the identity hash appended when the clean name does not fit.
const HASH_HEX_LEN: usize = 12;
/// The longest server name.
const MAX_SERVER_NAME_LEN: usize = 32;

/// Whether `name` is a valid MCP server name: `[A-Za-z0-9_-]{1,32}`.
///
/// ```
/// use dsh_tools_runtime::mcp::is_valid_server_name;
/// assert!(is_valid_server_name("fs"));
/// assert!(is_valid_server_name("my-server_2"));
/// assert!(!is_valid_server_name(""));
/// assert!(!is_valid_server_name("has space"));
/// assert!(!is_valid_server_name(&"x".repeat(33)));
/// ```
pub fn is_valid_server_name(name: &str) -> bool {
    (1..=MAX_SERVER_NAME_LEN).contains(&name.len()) && name.bytes().all(is_name_byte)
}

fn is_name_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'-'
}

/// The model-facing name of the MCP tool `raw` of server `server` (a pure function of both).
///
/// The clean case is `mcp__<server>__<raw>`. When that name holds characters outside
/// `[A-Za-z0-9_-]` or is longer than 64 characters, every such character becomes `_` (one per
/// UTF-16 code unit, as JavaScript's `replace(/[^A-Za-z0-9_-]/g, '_')` does), the result is cut
/// to 51 characters and `_` plus the first 12 hex digits of SHA-256(`<server>\0<raw>`) are
/// appended, so two different tools never share a public name. The raw name is what goes on
/// the wire.
///
/// ```
/// use dsh_tools_runtime::mcp::public_tool_name;
/// assert_eq!(public_tool_name("fs", "read_text_file"), "mcp__fs__read_text_file");
/// let dotted = public_tool_name("fs", "files.read");
/// assert!(dotted.starts_with("mcp__fs__files_read_"));
/// assert_eq!(dotted.len(), "mcp__fs__files_read_".len() + 12);
/// ```
pub fn public_tool_name(server: &str, raw: &str) -> String {
    let joined = format!("mcp__{server}__{raw}");
    let mut normalized = String::with_capacity(joined.len());
    for c in joined.chars() {
        if c.is_ascii() && is_name_byte(c as u8) {
            normalized.push(c);
        } else {
            normalized.extend(std::iter::repeat_n('_', c.len_utf16()));
        }
    }
    if normalized == joined && normalized.len() <= MAX_PUBLIC_NAME_LEN {
        return normalized;
    }
    let digest = Sha256::digest(format!("{server}\0{raw}").as_bytes());
    let hash: String = digest
        .iter()
        .flat_map(|b| [b >> 4, b & 0x0f])
        .take(HASH_HEX_LEN)
        .map(|nibble| char::from_digit(u32::from(nibble), 16).unwrap_or('0'))
        .collect();
    // Only ASCII is left, so byte and character positions agree.
    normalized.truncate(MAX_PUBLIC_NAME_LEN - HASH_HEX_LEN - 1);
    format!("{normalized}_{hash}")
}
