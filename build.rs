//! Links the `earmark` binary with packed relative relocations (DT_RELR)
//! where glibc loads them: ld.so reads 10 KB of relocations at start-up
//! instead of 1 MB, and a playing session keeps 1.2 MB less resident
//! (docs/benchmarks.md, "Memory").

fn main() {
    let var = |k: &str| std::env::var(k).unwrap_or_default();
    if var("CARGO_CFG_TARGET_OS") == "linux" && var("CARGO_CFG_TARGET_ENV") == "gnu" {
        // lld and GNU ld (2.38 and later) pack them only when the glibc
        // linked against (2.36 and later) says it can load them; older GNU
        // ld ignores the option with a warning. musl (the NAS build) is left
        // as it is.
        println!("cargo:rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
    }
    println!("cargo:rerun-if-changed=build.rs");
}
