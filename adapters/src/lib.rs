//! The decision services that answer a web server's question about a request: the nginx
//! `auth_request` adapter. ext_proc has its own crate (tonic, the Envoy protos); both hold a
//! [`gate::adapter_door::AdapterDoor`].

pub mod auth;
#[cfg(any(test, feature = "fuzzing"))]
pub mod fuzzing;
pub mod original;
