//! The SIMD intrinsics, each behind a function whose `# Safety` says what it needs.

pub(crate) mod json;
