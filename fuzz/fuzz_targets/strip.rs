//! The source guard and the TypeScript strip.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| dsh_tools_fuzz_harness::strip(data));
