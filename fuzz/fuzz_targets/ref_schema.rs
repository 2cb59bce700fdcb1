//! `$ref`/`$defs` schemas through every dialect, the SDK lowering and the subset compiler.
#![no_main]

libfuzzer_sys::fuzz_target!(
    init: dsh_tools_fuzz_harness::tolerate_caught_swc_parser_panics(),
    |data: &[u8]| dsh_tools_fuzz_harness::ref_schema(data)
);
