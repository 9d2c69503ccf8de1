//! The paged `/memory` listing, `/memory <words>` search results and their refusals (a page
//! past the last, a search text too long). Every memory line is `#n <date> 〔手动|自动〕 <text>`.

use std::fmt::Write as _;

use super::listing::MemoryEntry;
use super::{MAX_MEMORY_CHARS, Texts, escape_html, escape_truncated};
use crate::command::CommandKind;
use kernel_common::config::Locale;

/// Longest query echoed in a search reply (characters).
const MAX_QUERY_SHOWN: usize = 60;

/// A page of `/memory` as agentd returned it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemoryPageView {
    pub total: u32,
    pub page: u32,
    pub pages: u32,
}

impl Texts {
    fn push_memory_lines(self, out: &mut String, memories: &[MemoryEntry<'_>]) {
        for memory in memories {
            let text = escape_truncated(memory.text, MAX_MEMORY_CHARS);
            let source = match (memory.auto, memory.origin) {
                (false, _) => self.pick("〔手动〕", "[manual]").to_owned(),
                (true, "") => self.pick("〔自动〕", "[auto]").to_owned(),
                (true, origin) => match self.locale() {
                    Locale::Zh => format!("〔自动·来自 {}〕", escape_truncated(origin, 60)),
                    Locale::En => format!("[auto, from {}]", escape_truncated(origin, 60)),
                },
            };
            let _ = writeln!(
                out,
                "#{} {} {source} {text}",
                memory.number,
                escape_html(memory.date)
            );
        }
    }

    /// One page of `/memory`: a heading with the counts, the page's memories, then how to page,
    /// search and delete. A page past the last says how many pages there are.
    pub fn memory_page(self, memories: &[MemoryEntry<'_>], view: MemoryPageView) -> String {
        let MemoryPageView { total, page, pages } = view;
        if total == 0 {
            return self.pick("还没有长期记忆", "No memories yet").to_owned();
        }
        if memories.is_empty() {
            return match self.locale() {
                Locale::Zh => format!(
                    "没有第 {page} 页：长期记忆共 {total} 条，{pages} 页（/memory {pages} 是最后一页）"
                ),
                Locale::En => format!(
                    "There is no page {page}: {total} memories in {pages} page(s) (/memory {pages} is the last)"
                ),
            };
        }
        let mut out = match self.locale() {
            Locale::Zh => format!("<b>长期记忆</b>（共 {total} 条，第 {page}/{pages} 页）\n"),
            Locale::En => format!("<b>Memories</b> ({total} in total, page {page}/{pages})\n"),
        };
        self.push_memory_lines(&mut out, memories);
        out.push('\n');
        let mut hints = Vec::new();
        if page > 1 {
            hints.push(match self.locale() {
                Locale::Zh => format!("/memory {} 上一页", page - 1),
                Locale::En => format!("/memory {} previous", page - 1),
            });
        }
        if page < pages {
            hints.push(match self.locale() {
                Locale::Zh => format!("/memory {} 下一页", page + 1),
                Locale::En => format!("/memory {} next", page + 1),
            });
        }
        hints.push(
            self.pick("/memory 关键词 搜索", "/memory words to search")
                .to_owned(),
        );
        hints.push(
            self.pick("/forget #n 删除", "/forget #n to delete")
                .to_owned(),
        );
        out.push_str(&hints.join(" · "));
        out
    }

    /// The memories matching `query` (numbered `#1..`), or a line saying none match.
    pub fn memory_hits(self, query: &str, memories: &[MemoryEntry<'_>]) -> String {
        let query = escape_truncated(query, MAX_QUERY_SHOWN);
        if memories.is_empty() {
            return match self.locale() {
                Locale::Zh => format!("没有找到与“{query}”相关的记忆（/memory 查看全部）"),
                Locale::En => format!("No memories match “{query}” (/memory lists them all)"),
            };
        }
        let n = memories.len();
        let mut out = match self.locale() {
            Locale::Zh => format!("<b>与“{query}”相关的记忆</b>（{n} 条）\n"),
            Locale::En => format!("<b>Memories matching “{query}”</b> ({n})\n"),
        };
        self.push_memory_lines(&mut out, memories);
        out.push_str(self.pick("\n/forget #n 删除", "\n/forget #n to delete"));
        out
    }

    /// The button to the previous page of `/memory`.
    pub fn memory_previous_button(self) -> &'static str {
        self.pick("‹ 上一页", "‹ Previous")
    }

    /// The button to the next page of `/memory`.
    pub fn memory_next_button(self) -> &'static str {
        self.pick("下一页 ›", "Next ›")
    }

    /// A command's text argument is longer than `max` characters.
    pub(super) fn too_long(self, command: CommandKind, max: usize) -> String {
        let name = command.name();
        match self.locale() {
            Locale::Zh => format!("/{name} 的内容太长：最多 {max} 个字符，请用几个关键词"),
            Locale::En => {
                format!(
                    "The text of /{name} is too long: at most {max} characters; use a few words"
                )
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ZH: Texts = Texts::new(Locale::Zh);
    const EN: Texts = Texts::new(Locale::En);

    fn entry(number: u32, auto: bool) -> MemoryEntry<'static> {
        MemoryEntry {
            number,
            date: "2026-01-02",
            text: "喜欢 <b>乌龙茶</b>",
            auto,
            origin: "",
        }
    }

    #[test]
    fn a_page_marks_the_source_and_says_how_to_page() {
        let view = MemoryPageView {
            total: 45,
            page: 2,
            pages: 3,
        };
        let page = ZH.memory_page(&[entry(21, false), entry(22, true)], view);
        assert!(
            page.starts_with("<b>长期记忆</b>（共 45 条，第 2/3 页）\n"),
            "{page}"
        );
        assert!(
            page.contains("#21 2026-01-02 〔手动〕 喜欢 &lt;b&gt;乌龙茶"),
            "{page}"
        );
        assert!(page.contains("#22 2026-01-02 〔自动〕 "), "{page}");
        assert!(page.contains("/memory 1 上一页") && page.contains("/memory 3 下一页"));
        let en = EN.memory_page(&[entry(1, true)], MemoryPageView { page: 1, ..view });
        assert!(
            en.contains("#1 2026-01-02 [auto] ") && !en.contains("previous"),
            "{en}"
        );
        let past = ZH.memory_page(
            &[],
            MemoryPageView {
                page: 99999,
                ..view
            },
        );
        assert!(
            past.contains("没有第 99999 页") && past.contains("3 页"),
            "{past}"
        );
        let from_tool = MemoryEntry {
            origin: "tool mcp_docs__search",
            ..entry(3, true)
        };
        let page = ZH.memory_page(&[from_tool], view);
        assert!(
            page.contains("#3 2026-01-02 〔自动·来自 tool mcp_docs__search〕"),
            "{page}"
        );
        let none = EN.memory_page(
            &[],
            MemoryPageView {
                total: 0,
                page: 1,
                pages: 0,
            },
        );
        assert_eq!(none, "No memories yet");
    }

    #[test]
    fn search_hits_and_none() {
        let hits = ZH.memory_hits("乌龙茶", &[entry(1, false)]);
        assert!(
            hits.contains("与“乌龙茶”相关") && hits.contains("#1 "),
            "{hits}"
        );
        let none = EN.memory_hits("<script>", &[]);
        assert!(none.contains("&lt;script&gt;"), "{none}");
        assert!(ZH.too_long(CommandKind::Memory, 200).contains("200"));
    }
}
