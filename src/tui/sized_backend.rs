//! The terminal's size, asked of the terminal the frames go to. crossterm
//! answers `size()` by opening `/dev/tty` each time, and ratatui asks for
//! the size at every frame (twice with the screen's own question): two
//! opens and closes of a tty a second, a tenth of what the screen cost
//! when nothing changed. One `TIOCGWINSZ` on standard output, where
//! every frame is written, answers the same; when standard output is no
//! terminal, crossterm is asked as before. The answer is kept until the
//! screen says the size may have changed (SIGWINCH, a return from Ctrl-Z):
//! a frame drawn when nothing changed asks the terminal nothing.

use std::cell::Cell;
use std::io::Write;

use ratatui::backend::{Backend, ClearType, WindowSize};
use ratatui::layout::{Position, Size};

/// `B` with its size read from standard output, and kept until
/// [`SizedBackend::forget_size`].
#[derive(Debug)]
pub struct SizedBackend<B>(pub B, Cell<Option<Size>>);

impl<B> SizedBackend<B> {
    /// `backend`, its size not asked yet.
    pub fn new(backend: B) -> Self {
        SizedBackend(backend, Cell::new(None))
    }

    /// The terminal may have changed size: the next question asks it.
    pub fn forget_size(&self) {
        self.1.set(None);
    }
}

/// Standard output's terminal size (`None`: not a terminal, or it says 0).
fn stdout_size() -> Option<Size> {
    let ws = rustix::termios::tcgetwinsize(rustix::stdio::stdout()).ok()?;
    (ws.ws_col > 0 && ws.ws_row > 0).then_some(Size {
        width: ws.ws_col,
        height: ws.ws_row,
    })
}

impl<B: Backend> Backend for SizedBackend<B> {
    type Error = B::Error;

    fn draw<'a, I>(&mut self, content: I) -> Result<(), Self::Error>
    where
        I: Iterator<Item = (u16, u16, &'a ratatui::buffer::Cell)>,
    {
        self.0.draw(content)
    }

    fn append_lines(&mut self, n: u16) -> Result<(), Self::Error> {
        self.0.append_lines(n)
    }

    fn hide_cursor(&mut self) -> Result<(), Self::Error> {
        self.0.hide_cursor()
    }

    fn show_cursor(&mut self) -> Result<(), Self::Error> {
        self.0.show_cursor()
    }

    fn get_cursor_position(&mut self) -> Result<Position, Self::Error> {
        self.0.get_cursor_position()
    }

    fn set_cursor_position<P: Into<Position>>(&mut self, position: P) -> Result<(), Self::Error> {
        self.0.set_cursor_position(position)
    }

    fn clear(&mut self) -> Result<(), Self::Error> {
        self.0.clear()
    }

    fn clear_region(&mut self, clear_type: ClearType) -> Result<(), Self::Error> {
        self.0.clear_region(clear_type)
    }

    fn size(&self) -> Result<Size, Self::Error> {
        if let Some(size) = self.1.get() {
            return Ok(size);
        }
        let size = match stdout_size() {
            Some(size) => size,
            None => self.0.size()?,
        };
        self.1.set(Some(size));
        Ok(size)
    }

    fn window_size(&mut self) -> Result<WindowSize, Self::Error> {
        self.0.window_size()
    }

    fn flush(&mut self) -> Result<(), Self::Error> {
        Backend::flush(&mut self.0)
    }
}

impl<B: Write> Write for SizedBackend<B> {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.write(bytes)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Write::flush(&mut self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ratatui::backend::TestBackend;

    /// Everything but the size goes to the wrapped backend; the size is
    /// standard output's when it is a terminal, the wrapped backend's
    /// otherwise (under `cargo test` it is a pipe or a file).
    #[test]
    fn the_size_is_the_terminals_or_the_wrapped_backends() {
        let mut sized = SizedBackend::new(TestBackend::new(37, 11));
        let size = sized.size().expect("size");
        match stdout_size() {
            Some(tty) => assert_eq!(size, tty),
            None => assert_eq!(size, Size::new(37, 11)),
        }
        sized.set_cursor_position((3, 4)).expect("cursor");
        assert_eq!(
            sized.get_cursor_position().expect("cursor"),
            Position::new(3, 4)
        );
        let cell = ratatui::buffer::Cell::new("x");
        sized.draw(std::iter::once((1, 2, &cell))).expect("draw");
        assert_eq!(sized.0.buffer()[(1, 2)].symbol(), "x");
    }

    /// The size is asked once and kept: a terminal that changed size says
    /// so only after [`SizedBackend::forget_size`].
    #[test]
    fn the_size_is_kept_until_forgotten() {
        if stdout_size().is_some() {
            // The wrapped backend's size is never asked on a terminal.
            return;
        }
        let mut sized = SizedBackend::new(TestBackend::new(37, 11));
        assert_eq!(sized.size().expect("size"), Size::new(37, 11));
        sized.0.resize(90, 30);
        assert_eq!(sized.size().expect("size"), Size::new(37, 11));
        sized.forget_size();
        assert_eq!(sized.size().expect("size"), Size::new(90, 30));
    }
}
