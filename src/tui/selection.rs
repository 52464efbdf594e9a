//! Where the user is looking: the view, the rule, the rows each view is
//! scrolled to, the value and CPU picked, and the expanded variables.
//! Every scroll stays within what it scrolls over.

use std::collections::HashSet;

use super::cpu_panel::CpuPanel;
use crate::rules::{NodeId, RuleKind};

/// The views `Tab` cycles through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum View {
    Overview,
    Rules,
    Graphs,
    /// Why the decisions changed: flapping, flips, feedback loops.
    Flips,
    Log,
}

impl View {
    /// In `Tab` order.
    pub const ALL: [View; 5] = [
        View::Overview,
        View::Rules,
        View::Graphs,
        View::Flips,
        View::Log,
    ];

    /// The name on the tab.
    pub fn title(self) -> &'static str {
        match self {
            View::Overview => "Overview",
            View::Rules => "Rules",
            View::Graphs => "Graphs",
            View::Flips => "Flips",
            View::Log => "Log",
        }
    }
}

/// The view shown and the places in it.
#[derive(Debug)]
pub struct Selection {
    view: View,
    rule: RuleKind,
    expanded: HashSet<NodeId>,
    tree_scroll: usize,
    /// The CPU panel: table or meters, the order, the page.
    cpus: CpuPanel,
    value_cursor: usize,
    /// The CPU row clicked last: highlighted, and `p` pins its busy share
    /// until the value cursor moves again.
    selected_cpu: Option<u32>,
    flips_scroll: usize,
}

impl Default for Selection {
    fn default() -> Self {
        Selection {
            view: View::Overview,
            rule: RuleKind::Hotplug,
            expanded: HashSet::new(),
            tree_scroll: 0,
            cpus: CpuPanel::default(),
            value_cursor: 0,
            selected_cpu: None,
            flips_scroll: 0,
        }
    }
}

impl Selection {
    /// The view shown.
    pub fn view(&self) -> View {
        self.view
    }

    /// Shows `view`.
    pub fn show(&mut self, view: View) {
        self.view = view;
    }

    /// The next view in `Tab` order, or the one before.
    pub fn cycle_view(&mut self, forward: bool) {
        let n = View::ALL.len();
        let i = View::ALL.iter().position(|v| *v == self.view).unwrap_or(0);
        self.view = View::ALL[if forward {
            (i + 1) % n
        } else {
            (i + n - 1) % n
        }];
    }

    /// The rule the Rules view explains.
    pub fn rule(&self) -> RuleKind {
        self.rule
    }

    /// Explains `rule`.
    pub fn select_rule(&mut self, rule: RuleKind) {
        self.rule = rule;
    }

    /// The next rule, round.
    pub fn next_rule(&mut self) {
        self.rule = RuleKind::ALL[(self.rule.index() + 1) % RuleKind::ALL.len()];
    }

    /// The variables shown expanded.
    pub fn expanded(&self) -> &HashSet<NodeId> {
        &self.expanded
    }

    /// Whether the variable at `node` is shown expanded.
    pub fn is_expanded(&self, node: NodeId) -> bool {
        self.expanded.contains(&node)
    }

    /// Expands `node`, or folds it if it was expanded.
    pub fn toggle_node(&mut self, node: NodeId) {
        if !self.expanded.remove(&node) {
            self.expanded.insert(node);
        }
    }

    /// Expands all of `nodes`, or folds everything when they all were.
    pub fn toggle_all(&mut self, nodes: Vec<NodeId>) {
        if nodes.iter().all(|n| self.expanded.contains(n)) {
            self.expanded.clear();
        } else {
            self.expanded.extend(nodes);
        }
    }

    /// Folds every variable (new rules have other nodes).
    pub fn fold_all(&mut self) {
        self.expanded.clear();
    }

    /// The Rules view's row under the cursor.
    pub fn tree_scroll(&self) -> usize {
        self.tree_scroll
    }

    /// The CPU panel's layout, order and page.
    pub fn cpus(&self) -> &CpuPanel {
        &self.cpus
    }

    /// The CPU panel, to page, sort or switch.
    pub fn cpus_mut(&mut self) -> &mut CpuPanel {
        &mut self.cpus
    }

    /// The value under the cursor in the Values panel.
    pub fn value_cursor(&self) -> usize {
        self.value_cursor
    }

    /// The CPU clicked last, while it is the one `p` pins.
    pub fn selected_cpu(&self) -> Option<u32> {
        self.selected_cpu
    }

    /// A click on a CPU's row.
    pub fn select_cpu(&mut self, id: u32) {
        self.selected_cpu = Some(id);
    }

    /// Gives `p` back to the values.
    pub fn drop_cpu(&mut self) {
        self.selected_cpu = None;
    }

    /// The first flip shown, counted back from the newest.
    pub fn flips_scroll(&self) -> usize {
        self.flips_scroll
    }

    /// Shows the flips from `back` changes before the newest (a page, the
    /// oldest, the newest).
    pub fn set_flips_scroll(&mut self, back: usize) {
        self.flips_scroll = back;
    }

    /// ↑ (`up`) or ↓ in the view shown, within `rows` of it: values
    /// (a keyed value drops the CPU picked), the rule tree, the flips
    /// (newest at the bottom, as in a terminal: ↑ goes back in time).
    pub fn scroll(&mut self, up: bool, rows: usize) {
        let step = |v: usize| if up { v.saturating_sub(1) } else { v + 1 };
        let back = |v: usize| if up { v + 1 } else { v.saturating_sub(1) };
        match self.view {
            View::Overview => {
                self.selected_cpu = None;
                self.value_cursor = step(self.value_cursor).min(rows.saturating_sub(1));
            }
            View::Rules => self.tree_scroll = step(self.tree_scroll),
            View::Flips => {
                self.flips_scroll = back(self.flips_scroll).min(rows.saturating_sub(1));
            }
            View::Graphs | View::Log => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scrolls_stay_within_what_they_scroll_over() {
        let mut s = Selection::default();
        s.scroll(false, 0);
        assert_eq!(s.value_cursor(), 0, "no values: nowhere to go");
        for _ in 0..5 {
            s.scroll(false, 3);
        }
        assert_eq!(s.value_cursor(), 2);
        s.select_cpu(7);
        s.scroll(true, 3);
        assert_eq!((s.value_cursor(), s.selected_cpu()), (1, None));
        s.show(View::Flips);
        for _ in 0..5 {
            s.scroll(true, 2);
        }
        assert_eq!(s.flips_scroll(), 1, "back no further than the oldest flip");
    }

    #[test]
    fn views_and_rules_go_round() {
        let mut s = Selection::default();
        for _ in 0..View::ALL.len() {
            s.cycle_view(true);
        }
        assert_eq!(s.view(), View::Overview);
        s.cycle_view(false);
        assert_eq!(s.view(), View::Log);
        for _ in 0..RuleKind::ALL.len() {
            s.next_rule();
        }
        assert_eq!(s.rule(), RuleKind::Hotplug);
    }
}
