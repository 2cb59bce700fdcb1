//! `$ref`/`$defs` schemas through every dialect, the SDK lowering and the subset compiler.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| dsh_tools_fuzz_harness::ref_schema(data));
