//! Provider turns: the four response parsers and the two stream accumulators, then the turn.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| dsh_tools_fuzz_harness::provider_turns(data));
