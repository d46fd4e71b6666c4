//! The screen view: the rows of the active screen.

use crate::terminal::Terminal;

impl Terminal {
    /// The rows of the active screen, trailing blanks trimmed (`None` when `cols` is `None`).
    pub fn screen(&self) -> Option<Vec<String>> {
        self.cols?;
        Some(
            self.grid_ref()
                .iter()
                .map(|line| {
                    let mut s = String::new();
                    self.row_text(&mut s, line);
                    let keep = s.trim_end_matches(' ').len();
                    s.truncate(keep);
                    s
                })
                .collect(),
        )
    }
}
