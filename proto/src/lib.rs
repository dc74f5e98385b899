//! The gRPC surface Rampart implements, in one place: Envoy's external processing protocol,
//! version 3 (spec 4.5, 9). The generated code comes from `envoy-types`; this crate pins the
//! versions (envoy-types 0.7 ↔ tonic 0.14 ↔ prost 0.14) and names the handful of types the
//! ext_proc service uses, so the rest of the code never spells the long generated paths.

pub use envoy_types::pb::envoy::config::core::v3::{HeaderMap, HeaderValue, HeaderValueOption};
pub use envoy_types::pb::envoy::r#type::v3::{HttpStatus, StatusCode};
pub use envoy_types::pb::envoy::service::ext_proc::v3::external_processor_client::ExternalProcessorClient;
pub use envoy_types::pb::envoy::service::ext_proc::v3::external_processor_server::{ExternalProcessor, ExternalProcessorServer};
pub use envoy_types::pb::envoy::service::ext_proc::v3::{
    body_mutation, common_response, processing_request, processing_response, BodyMutation, BodyResponse, CommonResponse, HeaderMutation,
    HeadersResponse, HttpBody, HttpHeaders, HttpTrailers, ImmediateResponse, ProcessingRequest, ProcessingResponse, TrailersResponse,
};
