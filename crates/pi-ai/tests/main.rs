//! One integration-test binary for the crate: every file beside this one is a module of it
//! (one link instead of one per file keeps the debug build small). Helpers are declared
//! here once; test files reach them with `use crate::<helper>;`.

mod anthropic_google_support;
mod openai_request_support;
mod openai_support;

mod anthropic_conformance;
mod anthropic_edge_streams;
mod bedrock;
mod bedrock_failures;
mod google_conformance;
mod hostile;
mod library_use;
mod mapper_fuzz;
mod openai_conformance;
mod openai_fuzz;
mod openai_mappers;
mod openai_requests;
mod openai_requests_responses;
mod openai_streams;
mod partial_json;
mod recorded_streams;
mod reference_requests;
mod robustness;
mod sse;
mod validation;
mod vertex_adc;
