//! MCP message handling: our server fed a client's bytes, our import fed a hostile server's.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| dsh_tools_fuzz_harness::mcp_messages(data));
