//! Running the binary as a person would in a terminal: a pseudo-terminal as its stdin,
//! stdout and stderr (the terminal decisions refuse a pipe).
#![cfg(unix)]

use std::io::{Read, Write};
use std::path::Path;
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::bin;

/// A command run with a pseudo-terminal as stdin, stdout and stderr; `typed` is sent
/// once the output shows `prompt`. Returns the exit code and everything shown.
pub fn in_terminal(project: &Path, args: &[&str], prompt: &str, typed: &str) -> (i32, String) {
    let mut cmd = bin(project);
    cmd.args(args);
    run_in_terminal(cmd, prompt, typed)
}

/// A new pseudo-terminal: its master side, and the side a program is given.
pub fn open_pty() -> (std::fs::File, std::fs::File) {
    use rustix::pty::{grantpt, openpt, ptsname, unlockpt, OpenptFlags};
    let master = openpt(OpenptFlags::RDWR | OpenptFlags::NOCTTY).expect("a pseudo-terminal");
    grantpt(&master).unwrap();
    unlockpt(&master).unwrap();
    let name = ptsname(&master, Vec::new()).unwrap();
    let slave = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(name.to_str().unwrap())
        .unwrap();
    (std::fs::File::from(master), slave)
}

/// [`in_terminal`] for any command (`cmd` may start the binary under other processes).
pub fn run_in_terminal(mut cmd: Command, prompt: &str, typed: &str) -> (i32, String) {
    let (mut master, slave) = open_pty();
    let mut child = cmd
        .stdin(slave.try_clone().unwrap())
        .stdout(slave.try_clone().unwrap())
        .stderr(slave)
        .spawn()
        .expect("the command runs");
    // The command holds the terminal's other side: the output ends only once it is gone.
    drop(cmd);
    let shown = Arc::new(Mutex::new(String::new()));
    let reader = {
        let mut master = master.try_clone().unwrap();
        let shown = shown.clone();
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            // EIO once the child's side is closed: the end of the output.
            while let Ok(n) = master.read(&mut buf) {
                if n == 0 {
                    break;
                }
                shown
                    .lock()
                    .unwrap()
                    .push_str(&String::from_utf8_lossy(&buf[..n]));
            }
        })
    };
    let deadline = Instant::now() + Duration::from_secs(30);
    while !shown.lock().unwrap().contains(prompt) {
        if Instant::now() > deadline || child.try_wait().unwrap().is_some() {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    // A command that already ended may leave nobody to read it.
    let _ = master.write_all(typed.as_bytes());
    let status = child.wait().unwrap();
    drop(master);
    let _ = reader.join();
    let out = shown.lock().unwrap().clone();
    (status.code().unwrap_or(-1), out)
}
