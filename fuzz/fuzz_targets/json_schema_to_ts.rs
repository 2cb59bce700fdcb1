//! json_schema_to_ts, the SDK render, and swc parsing the printed type.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| dsh_tools_fuzz_harness::schema_to_ts(data));
