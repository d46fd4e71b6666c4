//! Records how the crate was optimized (`ACPWIRE_BUILD`), so that benchmark reports can say
//! which build they measured: a plain release build, or the release wheels' profile-guided one.

fn main() {
    // The Python version's cfgs (`Py_3_14`, ...), as pyo3 itself sets them.
    #[cfg(feature = "python")]
    pyo3_build_config::use_pyo3_cfgs();
    println!("cargo::rerun-if-env-changed=CARGO_ENCODED_RUSTFLAGS");
    let flags = std::env::var("CARGO_ENCODED_RUSTFLAGS").unwrap_or_default();
    let has = |option: &str| flags.split('\x1f').any(|flag| flag.contains(option));
    let optimization = if has("profile-use=") {
        "profile-guided"
    } else if has("profile-generate") {
        "instrumented"
    } else {
        "plain"
    };
    let profile = std::env::var("PROFILE").unwrap_or_else(|_| "unknown".to_owned());
    println!("cargo::rustc-env=ACPWIRE_BUILD={profile}, {optimization}");
}
