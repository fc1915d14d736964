//! The openai_completions wire API's mapper on arbitrary SSE bodies (see `pi_rs_fuzz::fuzz_mapper`).
#![no_main]

use libfuzzer_sys::fuzz_target;
use pi_ai::providers::openai_completions::OpenAiCompletions;

fuzz_target!(|data: &[u8]| pi_rs_fuzz::fuzz_mapper(&OpenAiCompletions, data));
