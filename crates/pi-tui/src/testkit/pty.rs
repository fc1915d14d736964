//! A program in a pty, its output fed into a [`ScreenModel`] that answers its queries.

use std::io::{Read, Write};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant};

use portable_pty::{Child, CommandBuilder, MasterPty, PtySize, native_pty_system};

use super::screen::{Answers, ScreenModel};

/// What can go wrong driving a pty.
#[derive(Debug, thiserror::Error)]
pub enum PtyError {
    /// Opening the pty or spawning the program failed.
    #[error("pty: {0}")]
    Pty(String),
    /// Writing to the program failed.
    #[error("pty write: {0}")]
    Io(#[from] std::io::Error),
    /// A wait ran out; the screen at that moment is attached.
    #[error("timed out waiting for {what}; screen:\n{screen}")]
    Timeout {
        /// What was awaited.
        what: String,
        /// The screen text then.
        screen: String,
    },
}

/// A program running in a pty of a given size.
pub struct PtySession {
    master: Box<dyn MasterPty + Send>,
    writer: Box<dyn Write + Send>,
    child: Box<dyn Child + Send + Sync>,
    output: Receiver<Vec<u8>>,
    model: ScreenModel,
    exited: Option<u32>,
}

impl PtySession {
    /// Spawns `cmd` in a `rows`×`cols` pty with `TERM=xterm-256color`.
    ///
    /// Errors: the pty could not be opened or the program not started.
    pub fn spawn(
        mut cmd: CommandBuilder,
        rows: u16,
        cols: u16,
        answers: Answers,
    ) -> Result<Self, PtyError> {
        let pair = native_pty_system()
            .openpty(PtySize {
                rows,
                cols,
                pixel_width: 0,
                pixel_height: 0,
            })
            .map_err(|e| PtyError::Pty(e.to_string()))?;
        cmd.env("TERM", "xterm-256color");
        let child = pair
            .slave
            .spawn_command(cmd)
            .map_err(|e| PtyError::Pty(e.to_string()))?;
        drop(pair.slave);
        let mut reader = pair
            .master
            .try_clone_reader()
            .map_err(|e| PtyError::Pty(e.to_string()))?;
        let writer = pair
            .master
            .take_writer()
            .map_err(|e| PtyError::Pty(e.to_string()))?;
        let (tx, rx) = channel();
        std::thread::spawn(move || {
            let mut buf = [0u8; 8192];
            loop {
                match reader.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => {
                        if tx.send(buf[..n].to_vec()).is_err() {
                            break;
                        }
                    }
                }
            }
        });
        Ok(Self {
            master: pair.master,
            writer,
            child,
            output: rx,
            model: ScreenModel::new(rows, cols, answers),
            exited: None,
        })
    }

    /// The screen model.
    pub fn model(&mut self) -> &mut ScreenModel {
        &mut self.model
    }

    /// Sends bytes to the program (keys, pastes).
    ///
    /// Errors: the write failed.
    pub fn send(&mut self, bytes: &[u8]) -> Result<(), PtyError> {
        self.writer.write_all(bytes)?;
        self.writer.flush()?;
        Ok(())
    }

    /// Takes output for up to `wait`, feeding the model and answering queries. Returns
    /// whether anything arrived.
    pub fn pump(&mut self, wait: Duration) -> Result<bool, PtyError> {
        let mut got = false;
        let deadline = Instant::now() + wait;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self
                .output
                .recv_timeout(if got { Duration::ZERO } else { left })
            {
                Ok(chunk) => {
                    got = true;
                    self.model.feed(&chunk);
                    let r = self.model.take_replies();
                    if !r.is_empty() {
                        self.send(&r)?;
                    }
                }
                Err(RecvTimeoutError::Timeout) => return Ok(got),
                Err(RecvTimeoutError::Disconnected) => return Ok(got),
            }
        }
    }

    /// Pumps until `pred` holds on the model, or `timeout`.
    ///
    /// Errors: timeout ([`PtyError::Timeout`] with the screen).
    pub fn wait_for(
        &mut self,
        what: &str,
        timeout: Duration,
        mut pred: impl FnMut(&mut ScreenModel) -> bool,
    ) -> Result<(), PtyError> {
        let deadline = Instant::now() + timeout;
        loop {
            if pred(&mut self.model) {
                return Ok(());
            }
            if Instant::now() >= deadline {
                return Err(PtyError::Timeout {
                    what: what.into(),
                    screen: self.model.screen_text(),
                });
            }
            self.pump(Duration::from_millis(20))?;
        }
    }

    /// Pumps until the screen shows `needle`.
    ///
    /// Errors: timeout.
    pub fn wait_for_text(&mut self, needle: &str, timeout: Duration) -> Result<(), PtyError> {
        self.wait_for(&format!("{needle:?} on screen"), timeout, |m| {
            m.screen_text().contains(needle)
        })
    }

    /// Pumps until output stops for `quiet`.
    ///
    /// Errors: writing replies failed.
    pub fn settle(&mut self, quiet: Duration) -> Result<(), PtyError> {
        while self.pump(quiet)? {}
        Ok(())
    }

    /// Resizes the pty (the program gets SIGWINCH) and the model.
    ///
    /// Errors: the resize failed.
    pub fn resize(&mut self, rows: u16, cols: u16) -> Result<(), PtyError> {
        self.model.resize(rows, cols);
        self.master
            .resize(PtySize {
                rows,
                cols,
                pixel_width: 0,
                pixel_height: 0,
            })
            .map_err(|e| PtyError::Pty(e.to_string()))
    }

    /// The pid of the program.
    pub fn pid(&self) -> Option<u32> {
        self.child.process_id()
    }

    /// Waits for the program to exit (pumping output), returning its exit code.
    ///
    /// Errors: timeout.
    pub fn wait_exit(&mut self, timeout: Duration) -> Result<u32, PtyError> {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(c) = self.exited {
                return Ok(c);
            }
            if let Ok(Some(status)) = self.child.try_wait() {
                self.settle(Duration::from_millis(50))?;
                self.exited = Some(status.exit_code());
                continue;
            }
            if Instant::now() >= deadline {
                return Err(PtyError::Timeout {
                    what: "exit".into(),
                    screen: self.model.screen_text(),
                });
            }
            self.pump(Duration::from_millis(20))?;
        }
    }
}

impl Drop for PtySession {
    fn drop(&mut self) {
        if self.exited.is_none() && matches!(self.child.try_wait(), Ok(None)) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}
