//! A server's stderr, read line by line on a thread of its own (so the pipe never fills):
//! a test waits for a line the server logs, and sees everything it logged when it fails.

use std::io::BufRead;
use std::process::{Child, ChildStderr};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

pub struct Stderr {
    /// In a mutex only so that a server holding it can be shared between threads.
    lines: Mutex<Receiver<String>>,
    /// Every line so far, shown when a test fails.
    log: Arc<Mutex<Vec<String>>>,
}

impl Stderr {
    pub fn read(stderr: ChildStderr) -> Stderr {
        let (tx, lines) = std::sync::mpsc::channel();
        let log = Arc::new(Mutex::new(Vec::new()));
        let kept = Arc::clone(&log);
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                kept.lock().unwrap().push(line.clone());
                let _ = tx.send(line);
            }
        });
        Stderr {
            lines: Mutex::new(lines),
            log,
        }
    }

    /// Waits (up to a minute) for the next line holding `needle`; returns it. Fails if
    /// `child` exits first.
    pub fn wait_for(&mut self, child: &mut Child, needle: &str) -> String {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.get_mut().unwrap().recv_timeout(left) {
                Ok(line) if line.contains(needle) => return line,
                Ok(_) => {}
                Err(RecvTimeoutError::Timeout) => panic!("no `{needle}` on stderr in a minute"),
                Err(RecvTimeoutError::Disconnected) => {
                    let status = child.wait().unwrap();
                    panic!("the server exited ({status}) before saying `{needle}`")
                }
            }
        }
    }
}

impl Stderr {
    /// Every line logged so far.
    pub fn lines(&self) -> Vec<String> {
        self.log.lock().unwrap().clone()
    }
}

impl Drop for Stderr {
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!("server stderr:\n{}", self.log.lock().unwrap().join("\n"));
        }
    }
}
