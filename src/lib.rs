//! acpwire: a wire codec for the Agent Client Protocol.
//!
//! The core modules are plain Rust and know nothing of Python; the `PyO3` layer in
//! [`python`] (feature `python`) converts at the edge.

pub mod base64;
pub mod framing;
mod json_text;
pub mod session;
mod simd;
pub mod terminal;

#[cfg(feature = "python")]
mod python;
