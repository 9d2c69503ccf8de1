//! Rebuilds when a migration is added or changed (`sqlx::migrate!` embeds them at compile time),
//! and links the binary with packed relative relocations on Linux/glibc (see `kernel-tg/build.rs`).

fn main() {
    println!("cargo:rerun-if-changed=migrations");
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux")
        && std::env::var("CARGO_CFG_TARGET_ENV").as_deref() == Ok("gnu")
    {
        println!("cargo:rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
    }
}
