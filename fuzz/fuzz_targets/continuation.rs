//! Continuations: text the harness did not seal, and bodies it sealed, resumed on a Code Mode
//! host (see `dsh_tools_fuzz_harness::continuation`).
#![no_main]

libfuzzer_sys::fuzz_target!(
    init: dsh_tools_fuzz_harness::tolerate_caught_swc_parser_panics(),
    |data: &[u8]| dsh_tools_fuzz_harness::continuation(data)
);
