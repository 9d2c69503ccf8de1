//! GFM tables as monospace text: cells collected as plain text, columns padded to their display
//! width (CJK and emoji count as 2) and aligned as the table asks, a rule under the header. The
//! layout says how much of it is header, so a chunk that starts among the rows can repeat it.
//! A header whose cells are all empty (the usual way to write a table without one) is left out
//! together with its rule.

use pulldown_cmark::Alignment;

use super::text::display_width;

/// A laid-out table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Layout {
    /// One line per row, the rule after the header (if it has any text), no trailing spaces.
    pub text: String,
    /// The bytes of `text` taken by the header rows and the rule, with the newline after the
    /// rule; 0 when the table has no header or no body rows.
    pub header_len: usize,
}

/// A table being collected from parser events.
#[derive(Debug)]
pub(crate) struct Table {
    aligns: Vec<Alignment>,
    rows: Vec<Vec<String>>,
    header_rows: usize,
    cell: Option<String>,
}

impl Table {
    pub(crate) fn new(aligns: Vec<Alignment>) -> Self {
        Table {
            aligns,
            rows: Vec::new(),
            header_rows: 0,
            cell: None,
        }
    }

    pub(crate) fn start_row(&mut self) {
        self.rows.push(Vec::new());
    }

    /// Ends the header row (pulldown-cmark gives the header's cells without a row of their own).
    pub(crate) fn end_header(&mut self) {
        self.header_rows = self.rows.len();
    }

    pub(crate) fn start_cell(&mut self) {
        self.cell = Some(String::new());
    }

    pub(crate) fn end_cell(&mut self) {
        let cell = self.cell.take().unwrap_or_default();
        let cell = cell.split_whitespace().collect::<Vec<_>>().join(" ");
        match self.rows.last_mut() {
            Some(row) => row.push(cell),
            None => self.rows.push(vec![cell]),
        }
    }

    /// Adds text to the current cell (text outside a cell is ignored).
    pub(crate) fn push(&mut self, text: &str) {
        if let Some(cell) = &mut self.cell {
            cell.push_str(text);
        }
    }

    /// The laid-out table, one line per row, no trailing spaces.
    pub(crate) fn layout(&self) -> Layout {
        let columns = self.rows.iter().map(Vec::len).max().unwrap_or(0);
        let mut widths = vec![1; columns];
        for row in &self.rows {
            for (width, cell) in widths.iter_mut().zip(row) {
                *width = (*width).max(display_width(cell));
            }
        }
        let blank_header = self.rows[..self.header_rows]
            .iter()
            .all(|row| row.iter().all(String::is_empty));
        let skip = if blank_header { self.header_rows } else { 0 };
        let mut text = String::new();
        let mut header_len = 0;
        for (index, row) in self.rows.iter().enumerate().skip(skip) {
            if index > skip {
                text.push('\n');
            }
            let cells = (0..columns).map(|column| {
                let cell = row.get(column).map_or("", String::as_str);
                self.pad(cell, widths[column], column)
            });
            text.push_str(cells.collect::<Vec<_>>().join(" | ").trim_end());
            if index + 1 == self.header_rows {
                let rule = widths.iter().map(|w| "-".repeat(*w));
                text.push('\n');
                text.push_str(&rule.collect::<Vec<_>>().join("-+-"));
                if index + 1 < self.rows.len() {
                    header_len = text.len() + 1;
                }
            }
        }
        Layout { text, header_len }
    }

    fn pad(&self, cell: &str, width: usize, column: usize) -> String {
        let gap = width.saturating_sub(display_width(cell));
        let (left, right) = match self.aligns.get(column) {
            Some(Alignment::Right) => (gap, 0),
            Some(Alignment::Center) => (gap / 2, gap - gap / 2),
            _ => (0, gap),
        };
        format!("{}{cell}{}", " ".repeat(left), " ".repeat(right))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(aligns: Vec<Alignment>, rows: &[&[&str]]) -> Table {
        let mut table = Table::new(aligns);
        for (index, row) in rows.iter().enumerate() {
            table.start_row();
            for cell in *row {
                table.start_cell();
                table.push(cell);
                table.end_cell();
            }
            if index == 0 {
                table.end_header();
            }
        }
        table
    }

    #[test]
    fn aligns_cjk_by_display_width() {
        let t = table(
            vec![Alignment::None, Alignment::Right],
            &[&["名字", "n"], &["张三", "10"], &["Bob", "7"]],
        );
        let layout = t.layout();
        assert_eq!(layout.text, "名字 |  n\n-----+---\n张三 | 10\nBob  |  7");
        assert_eq!(&layout.text[..layout.header_len], "名字 |  n\n-----+---\n");
    }

    #[test]
    fn centers_and_fills_missing_cells() {
        let t = table(
            vec![Alignment::Center, Alignment::None],
            &[&["a", "b"], &["wide"]],
        );
        assert_eq!(t.layout().text, " a   | b\n-----+--\nwide |");
    }

    #[test]
    fn a_table_without_body_rows_has_no_header_to_repeat() {
        let t = table(vec![Alignment::None], &[&["only"]]);
        assert_eq!(
            t.layout(),
            Layout {
                text: "only\n----".to_owned(),
                header_len: 0
            }
        );
    }

    #[test]
    fn a_blank_header_is_left_out_with_its_rule() {
        let t = table(
            vec![Alignment::None, Alignment::None],
            &[&["", ""], &["a", "one"], &["bb", "two"]],
        );
        assert_eq!(
            t.layout(),
            Layout {
                text: "a  | one\nbb | two".to_owned(),
                header_len: 0
            }
        );
    }
}
