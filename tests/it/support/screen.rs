//! A host's full-screen terminal interface as a person runs it: the program on a
//! pseudo-terminal of a set size, what it draws read as it comes (the escape sequences
//! taken out), keys typed when the screen shows what a person would wait for, and the
//! terminal's answers to the queries such interfaces make when they start (where the
//! cursor is, and the terminal's colours), which a real terminal gives.
#![cfg(unix)]

use std::io::{Read, Write};
use std::process::{Child, Command};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// A program running on a pseudo-terminal.
pub struct Screen {
    child: Child,
    master: std::fs::File,
    drawn: Arc<Mutex<Vec<u8>>>,
    reader: Option<std::thread::JoinHandle<()>>,
}

/// The terminal's answers to what a program asks of it: the cursor's position (`ESC [ 6 n`),
/// the primary device attributes (`ESC [ c`) and the foreground and background colours
/// (OSC 10 and 11).
const ANSWERS: [(&[u8], &[u8]); 4] = [
    (b"\x1b[6n", b"\x1b[1;1R"),
    (b"\x1b[c", b"\x1b[?62;22c"),
    (b"\x1b]10;?", b"\x1b]10;rgb:ffff/ffff/ffff\x1b\\"),
    (b"\x1b]11;?", b"\x1b]11;rgb:0000/0000/0000\x1b\\"),
];

impl Screen {
    /// Starts `cmd` (its program, arguments, directory and the variables it sets, no
    /// others) on a new pseudo-terminal of 50 rows and 160 columns, its controlling
    /// terminal in a session of its own (`setsid -c`; the size set with `stty` before the
    /// program starts, so that it reads it as it would from a real terminal).
    pub fn start(cmd: &Command) -> Screen {
        let (master, slave) = super::terminal::open_pty();
        let mut sized = Command::new("setsid");
        sized
            .args(["-c", "sh", "-c"])
            .arg("stty rows 50 cols 160 && exec \"$0\" \"$@\"")
            .arg(cmd.get_program())
            .args(cmd.get_args())
            .env_clear()
            .envs(cmd.get_envs().filter_map(|(k, v)| Some((k, v?))));
        if let Some(dir) = cmd.get_current_dir() {
            sized.current_dir(dir);
        }
        let child = sized
            .stdin(slave.try_clone().unwrap())
            .stdout(slave.try_clone().unwrap())
            .stderr(slave)
            .spawn()
            .expect("the program runs");
        // The program holds the terminal's other side: the output ends once it is gone.
        drop(sized);
        let drawn = Arc::new(Mutex::new(Vec::new()));
        let reader = {
            let (mut read, mut answer) = (master.try_clone().unwrap(), master.try_clone().unwrap());
            let drawn = drawn.clone();
            std::thread::spawn(move || {
                let mut buf = [0u8; 8192];
                // EIO once the program's side is closed: the end of the output.
                while let Ok(n) = read.read(&mut buf) {
                    if n == 0 {
                        break;
                    }
                    let chunk = &buf[..n];
                    for (asked, reply) in ANSWERS {
                        if chunk.windows(asked.len()).any(|w| w == asked) {
                            let _ = answer.write_all(reply);
                        }
                    }
                    drawn.lock().unwrap().extend_from_slice(chunk);
                }
            })
        };
        Screen {
            child,
            master,
            drawn,
            reader: Some(reader),
        }
    }

    /// Everything drawn so far as text, the escape sequences out.
    pub fn text(&self) -> String {
        plain(&String::from_utf8_lossy(&self.drawn.lock().unwrap()))
    }

    /// Waits until the screen shows `what` ([`compact`]: an interface draws a line in
    /// pieces, wraps it in a box, renders code spans), up to `limit`; false when it did
    /// not, or the program ended first.
    pub fn shows(&mut self, what: &str, limit: Duration) -> bool {
        let wanted = compact(what);
        let deadline = Instant::now() + limit;
        loop {
            let text = compact(&self.text());
            if text.contains(&wanted) {
                return true;
            }
            if Instant::now() > deadline || self.child.try_wait().unwrap().is_some() {
                return false;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Types `keys` as a person would, a key at a time.
    pub fn type_keys(&mut self, keys: &str) {
        for c in keys.chars() {
            let mut b = [0u8; 4];
            self.master
                .write_all(c.encode_utf8(&mut b).as_bytes())
                .unwrap();
            std::thread::sleep(Duration::from_millis(30));
        }
    }

    /// Whether the program has ended.
    pub fn ended(&mut self) -> bool {
        self.child.try_wait().unwrap().is_some()
    }

    /// Waits up to `limit` for the program to end (a headless run), then ends what is left
    /// of it; everything it drew.
    pub fn until_ended(mut self, limit: Duration) -> String {
        let deadline = Instant::now() + limit;
        while !self.ended() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(100));
        }
        // What it wrote last reaches the reader a moment after it ends.
        std::thread::sleep(Duration::from_millis(300));
        self.end()
    }

    /// Ends the program and every process of its session's group (it was left running),
    /// and returns everything it drew.
    pub fn end(mut self) -> String {
        self.kill();
        self.text()
    }

    fn kill(&mut self) {
        if let Some(pid) = rustix::process::Pid::from_raw(self.child.id() as i32) {
            let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
        // A process of the host's that left the group may hold the terminal: the reader
        // is not waited for.
        drop(self.reader.take());
    }
}

impl Drop for Screen {
    fn drop(&mut self) {
        self.kill();
    }
}

/// `text` as a screen is compared: without whitespace, the box-drawing and block characters
/// an interface draws around and beside text, and the backticks of code spans (which some
/// render as a style).
pub fn compact(text: &str) -> String {
    text.chars()
        .filter(|c| !c.is_whitespace() && *c != '`' && !('\u{2500}'..='\u{259F}').contains(c))
        .collect()
}

/// `drawn` without its escape sequences (CSI, OSC, and two-byte ones) and carriage
/// returns.
fn plain(drawn: &str) -> String {
    let escapes = regex::Regex::new(
        r"\x1b\[[0-9;?<>=!]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(\x07|\x1b\\)|\x1b[()][0-9A-Za-z]|\x1b[=>78MDEc]|\r",
    )
    .unwrap();
    escapes.replace_all(drawn, "").into_owned()
}
