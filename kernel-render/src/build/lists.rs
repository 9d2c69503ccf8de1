//! List layout while building: item markers ("• ", "3. ", task boxes), indentation by depth,
//! and whether an item's first block follows on the next line (tight lists, nested lists) or
//! after a blank line (loose lists).

use super::Sep;

/// Indentation per nesting level.
const INDENT: &str = "   ";
/// Deeper nesting is drawn at this depth, so indentation never eats a chunk.
const MAX_DEPTH: usize = 6;

#[derive(Debug)]
struct List {
    next: Option<u64>,
    items: usize,
    nested: bool,
}

#[derive(Debug)]
struct Item {
    /// The marker, until the item's first line is written.
    marker: Option<String>,
    /// No block of the item has started yet.
    fresh: bool,
    first_in_list: bool,
    in_nested_list: bool,
}

/// The open lists and items.
#[derive(Debug, Default)]
pub(super) struct Lists {
    lists: Vec<List>,
    items: Vec<Item>,
    /// The next block is a paragraph (in a list item: the list is loose).
    paragraph: bool,
}

impl Lists {
    pub(super) fn start_list(&mut self, first: Option<u64>) {
        self.lists.push(List {
            next: first,
            items: 0,
            nested: !self.items.is_empty(),
        });
    }

    pub(super) fn end_list(&mut self) {
        self.lists.pop();
    }

    pub(super) fn start_item(&mut self) {
        let Some(list) = self.lists.last_mut() else {
            return;
        };
        let marker = match &mut list.next {
            Some(number) => {
                let marker = format!("{number}. ");
                *number = number.saturating_add(1);
                marker
            }
            None => "• ".to_owned(),
        };
        list.items += 1;
        self.items.push(Item {
            marker: Some(marker),
            fresh: true,
            first_in_list: list.items == 1,
            in_nested_list: list.nested,
        });
    }

    pub(super) fn end_item(&mut self) {
        self.items.pop();
    }

    pub(super) fn paragraph_started(&mut self) {
        self.paragraph = true;
    }

    /// Replaces a bullet with a task box (or adds the box after a number). False when the
    /// item's first line is already written.
    pub(super) fn task_marker(&mut self, checked: bool) -> bool {
        let Some(marker) = self.items.last_mut().and_then(|item| item.marker.as_mut()) else {
            return false;
        };
        let task = if checked { "☑ " } else { "☐ " };
        if marker == "• " {
            *marker = task.to_owned();
        } else {
            marker.push_str(task);
        }
        true
    }

    /// The marker of an item whose first line was never written (an empty item).
    pub(super) fn pending_marker(&mut self) -> Option<String> {
        self.items.last_mut().and_then(|item| item.marker.take())
    }

    /// The separator before a block that would otherwise get `sep`.
    pub(super) fn separator(&mut self, sep: Sep) -> Sep {
        let paragraph = std::mem::take(&mut self.paragraph);
        let Some(item) = self.items.last_mut().filter(|item| item.fresh) else {
            return sep;
        };
        item.fresh = false;
        match (item.first_in_list, item.in_nested_list, paragraph) {
            (true, true, _) => Sep::Line,
            (true, false, _) => sep,
            (false, _, true) => Sep::Blank,
            (false, _, false) => Sep::Line,
        }
    }

    /// What starts a block's first line: the item's marker, indented by its depth, or (if
    /// `indent`; not before a code block, which Telegram draws as a box of its own) the
    /// indentation of the enclosing items.
    pub(super) fn first_line_prefix(&mut self, indent: bool) -> String {
        let depth = self.items.len().min(MAX_DEPTH);
        match self.items.last_mut().and_then(|item| item.marker.take()) {
            Some(marker) => INDENT.repeat(depth.saturating_sub(1)) + &marker,
            None if indent => INDENT.repeat(depth),
            None => String::new(),
        }
    }

    /// What starts a continuation line inside the current item.
    pub(super) fn continuation(&self) -> String {
        INDENT.repeat(self.items.len().min(MAX_DEPTH))
    }
}
