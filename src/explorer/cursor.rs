//! A selection in a list, and the first row shown so the selection stays in view.

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Cursor {
    pub index: usize,
    pub scroll: usize,
}

impl Cursor {
    pub fn move_by(&mut self, delta: isize, len: usize) {
        if len == 0 {
            self.index = 0;
            return;
        }
        let target = self.index as isize + delta;
        self.index = target.clamp(0, len as isize - 1) as usize;
    }

    pub fn set(&mut self, index: usize, len: usize) {
        self.index = index.min(len.saturating_sub(1));
    }

    /// Scrolls the least needed for the selection to be one of `height` visible rows.
    pub fn keep_visible(&mut self, height: usize) {
        let height = height.max(1);
        if self.index < self.scroll {
            self.scroll = self.index;
        } else if self.index >= self.scroll + height {
            self.scroll = self.index + 1 - height;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clamps_and_scrolls_minimally() {
        let mut c = Cursor::default();
        c.move_by(-3, 10);
        assert_eq!(c.index, 0);
        c.move_by(15, 10);
        assert_eq!(c.index, 9);
        c.keep_visible(4);
        assert_eq!(c.scroll, 6);
        c.move_by(-1, 10);
        c.keep_visible(4);
        assert_eq!(c.scroll, 6);
        c.set(2, 10);
        c.keep_visible(4);
        assert_eq!(c.scroll, 2);
    }
}
