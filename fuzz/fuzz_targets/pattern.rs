//! `pattern`s: the subset's screen, compilation and one-pass matcher against regress itself
//! (see `dsh_tools_fuzz_harness::pattern`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| dsh_tools_fuzz_harness::pattern(data));
