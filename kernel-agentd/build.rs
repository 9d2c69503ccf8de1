//! Rebuilds when a migration is added or changed (`sqlx::migrate!` embeds them at compile time),
//! compiles memory search's word-segmentation dictionary into an FST embedded in the binary
//! (`memory/segment/dict.rs`), and links the binary with packed relative relocations on
//! Linux/glibc (see `kernel-tg/build.rs`).

use std::collections::BTreeMap;
use std::path::Path;

/// The dictionary, `word frequency` lines (see `data/README.md`).
const DICTIONARY: &str = "data/jieba-dict-60k.txt";

fn main() {
    println!("cargo:rerun-if-changed=migrations");
    println!("cargo:rerun-if-changed={DICTIONARY}");
    dictionary();
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux")
        && std::env::var("CARGO_CFG_TARGET_ENV").as_deref() == Ok("gnu")
    {
        println!("cargo:rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
    }
}

/// Writes `jieba-dict.fst` (word -> frequency, read as jieba-rs's `Jieba::load_dict` reads the
/// file: whitespace-separated fields, a missing frequency is 0, a repeated word keeps its last
/// frequency) and `jieba-dict-total.rs` (the sum of the frequencies) to `OUT_DIR`.
fn dictionary() {
    let text = std::fs::read_to_string(DICTIONARY).expect("the dictionary is readable");
    let mut words: BTreeMap<&[u8], u64> = BTreeMap::new();
    for (n, line) in text.lines().enumerate() {
        let mut fields = line.split_whitespace();
        let Some(word) = fields.next() else { continue };
        let freq = fields.next().map_or(0, |f| {
            f.parse::<u64>()
                .unwrap_or_else(|e| panic!("{DICTIONARY}:{}: frequency {f:?}: {e}", n + 1))
        });
        words.insert(word.as_bytes(), freq);
    }
    let total: u64 = words.values().sum();
    let map =
        fst::Map::from_iter(words.iter().map(|(w, f)| (*w, *f))).expect("sorted, distinct words");
    let out = std::env::var("OUT_DIR").expect("cargo sets OUT_DIR");
    let out = Path::new(&out);
    std::fs::write(out.join("jieba-dict.fst"), map.as_fst().as_bytes())
        .expect("OUT_DIR is writable");
    std::fs::write(
        out.join("jieba-dict-total.rs"),
        format!("/// The sum of the dictionary's frequencies.\nconst TOTAL: u64 = {total};\n"),
    )
    .expect("OUT_DIR is writable");
}
