//! Schema assertion and validation: a schema, optionally NUL and an instance.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| dsh_tools_fuzz_harness::schema_validate(data));
