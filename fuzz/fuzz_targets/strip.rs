//! The source guard and the TypeScript strip.
#![no_main]

libfuzzer_sys::fuzz_target!(
    init: dsh_tools_fuzz_harness::tolerate_caught_swc_parser_panics(),
    |data: &[u8]| dsh_tools_fuzz_harness::strip(data)
);
