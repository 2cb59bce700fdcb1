//! json_schema_to_ts, the SDK render, and swc parsing the printed type.
#![no_main]

libfuzzer_sys::fuzz_target!(
    init: dsh_tools_fuzz_harness::tolerate_caught_swc_parser_panics(),
    |data: &[u8]| dsh_tools_fuzz_harness::schema_to_ts(data)
);
