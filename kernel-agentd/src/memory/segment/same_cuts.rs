//! The comparison test of issue 51: the static segmenter ([`super::cut`] over the FST) cuts
//! every text of the project's sets exactly as jieba-rs 0.11 does over the same dictionary
//! (`Jieba::cut_for_search(text, true)`, what memory search used before), word for word and in
//! the same order, and so the index terms and query terms are unchanged.

use jieba_rs::Jieba;
use proptest::prelude::*;

fn jieba() -> &'static Jieba {
    static JIEBA: std::sync::LazyLock<Jieba> = std::sync::LazyLock::new(|| {
        Jieba::with_dict(&mut include_str!("../../../data/jieba-dict-60k.txt").as_bytes()).unwrap()
    });
    &JIEBA
}

fn ours(text: &str) -> Vec<&str> {
    let mut words = Vec::new();
    super::cut::cut_for_search(text, |w| words.push(w));
    words
}

fn theirs(text: &str) -> Vec<&str> {
    jieba()
        .cut_for_search(text, true)
        .into_iter()
        .map(|t| t.word)
        .collect()
}

/// Compares the cuts of every text; the differences (none expected), listed.
fn differences<'a>(texts: impl IntoIterator<Item = &'a str>) -> (usize, Vec<String>) {
    let mut compared = 0;
    let mut differ = Vec::new();
    for text in texts {
        compared += 1;
        let (a, b) = (ours(text), theirs(text));
        if a != b {
            differ.push(format!("{text:?}\n  static: {a:?}\n  jieba:  {b:?}"));
        }
    }
    (compared, differ)
}

fn assert_same<'a>(set: &str, texts: impl IntoIterator<Item = &'a str>) {
    let (compared, differ) = differences(texts);
    assert!(compared > 0, "{set}: nothing compared");
    assert!(
        differ.is_empty(),
        "{set}: {} of {compared} texts cut differently:\n{}",
        differ.len(),
        differ.join("\n")
    );
}

/// Every string in a JSON value.
fn strings(value: &serde_json::Value, out: &mut Vec<String>) {
    match value {
        serde_json::Value::String(s) => out.push(s.clone()),
        serde_json::Value::Array(a) => a.iter().for_each(|v| strings(v, out)),
        serde_json::Value::Object(o) => o.values().for_each(|v| strings(v, out)),
        _ => {}
    }
}

#[test]
fn the_memory_recall_set_is_cut_the_same() {
    let set: serde_json::Value =
        serde_json::from_str(include_str!("../../../../tests/data/recall_set.json")).unwrap();
    let mut texts = Vec::new();
    strings(&set, &mut texts);
    assert!(texts.len() >= 140, "{}", texts.len());
    assert_same("recall_set.json", texts.iter().map(String::as_str));
    // And so the terms memory search stores and asks with.
    for text in &texts {
        let expected: Vec<String> = theirs(text)
            .into_iter()
            .map(|w| w.trim().to_lowercase())
            .filter(|w| w.chars().any(char::is_alphanumeric))
            .collect();
        assert_eq!(super::index_terms(text), expected.join(" "), "{text}");
    }
}

#[test]
fn the_projects_chinese_texts_are_cut_the_same() {
    let files = [
        include_str!("../../../../SOUL.md"),
        include_str!("../../../../kernel-tg/src/texts/help.rs"),
        include_str!("../../../src/media/texts.rs"),
        include_str!("../../../../tests/tests/it/memory/search.rs"),
        include_str!("../../../../tests/tests/it/memory/consolidation.rs"),
        include_str!(
            "../../../../kernel-render/tests/it/snapshots/it__render_snapshots__chinese_long.snap"
        ),
    ];
    assert_same("files", files);
    assert_same("lines", files.iter().flat_map(|f| f.lines()));
}

/// Deterministic text from the dictionary: runs of consecutive dictionary words (so long
/// words meet their neighbours), mixed with ASCII words, numbers, connectors and punctuation.
fn generated(count: usize) -> Vec<String> {
    let words: Vec<&str> = include_str!("../../../data/jieba-dict-60k.txt")
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    let extra = [
        "，",
        "。",
        " ",
        "ThinkPad",
        "X1",
        "WES-5.4.5",
        "3.6.3",
        "a_b",
        "C++",
        "C#",
        "100%",
        "\r\n",
        "\n",
        "😀",
        "《",
        "》",
        "Volvo",
        "e5",
        "-",
        ".",
        "㐀",
        "𠀀",
        "ｘ",
        "café",
        "𫠝",
    ];
    let mut state: u64 = 0x2545_F491_4F6C_DD1D;
    let mut next = |n: usize| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state % n as u64) as usize
    };
    (0..count)
        .map(|_| {
            let mut text = String::new();
            for _ in 0..1 + next(12) {
                if next(4) == 0 {
                    text.push_str(extra[next(extra.len())]);
                } else {
                    let at = next(words.len());
                    for w in &words[at..(at + 1 + next(3)).min(words.len())] {
                        text.push_str(w);
                    }
                }
            }
            text
        })
        .collect()
}

#[test]
fn generated_texts_are_cut_the_same() {
    let texts = generated(20_000);
    assert_same("generated", texts.iter().map(String::as_str));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2_000))]

    /// Any text over an alphabet of frequent Chinese characters, rare CJK, ASCII, connectors,
    /// punctuation, whitespace and emoji.
    #[test]
    fn arbitrary_texts_are_cut_the_same(
        text in "[的一是不了在人有我他这中大来上国个到说们为子和你地出道也时年得就那要下以生会自着去之过家学对可她里后小么心多天而能好都然没日于起还发成事只作当想看文无开手十用主行方又如前所本见经头面公同三已老从动两长知民样现分将外但身些与高意进把法此实回二理美点月明其种声全工己话儿者向情部正名定女问力机给等几很业最间新什打便位因重被走电四第门相次东政海口使教西再平真听世气信北少关并内加化由却代军产入先山五太水万市眼体别处总才场师书比住员九笑性通目华报立马命张活难神数件安表原车白应路期叫死常提感金何更反合放做系计或司利受光王果亲界及今京务制解各任至清物台象记边共风战干接它许八特觉望直服毛林题建南度统色字请交爱让认算论百吃义科怎元社术结六功指思非流每青管夫连远资队跟带花快条院变联言权往展该领传近留红治决周保达办运武半候七必城父强步完革深区即求品士转量空甚众技轻程告江语英基派满式李息写呢识极令黄德收脸钱党倒未持取设始版双历越史商千片容研像找友孩站广改议形委早房音火际则首单据导影失拿网香似斯专石若兵弟谁校读志飞观争究包组造落视济喜离虽坐集编宝谈府拉黑且随格尽剑讲布杀微怕母调局根曾准团段终乐切级克精哪官示冷域读aZ09 .,_\\-+#&%，。！？、\r\n😀㐀𠀀ｘé]{0,40}"
    ) {
        prop_assert_eq!(ours(&text), theirs(&text));
    }
}
