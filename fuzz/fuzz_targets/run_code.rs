//! Whole programs in the QuickJS sandbox under small limits.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| dsh_tools_fuzz_harness::run_code(data));
