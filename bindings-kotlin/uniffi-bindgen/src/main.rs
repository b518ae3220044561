//! `uniffi-bindgen`, built from the same uniffi version as the binding crate.
fn main() {
    uniffi::uniffi_bindgen_main()
}
