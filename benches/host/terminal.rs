//! The human at a terminal: the server binary run with a pseudo-terminal as its stdin,
//! stdout and stderr (its decisions refuse a pipe), from the bench's own process, which no
//! assistant runs, in the project, with the home Claude Code has. The answer is typed once
//! the output shows the question.

use std::io::{Read, Write};
use std::path::Path;
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rustix::pty::{grantpt, openpt, ptsname, unlockpt, OpenptFlags};

/// How long a decision may take before the bench gives up waiting for its question.
const PATIENCE: Duration = Duration::from_secs(30);

/// Runs `server args…` in `project` with `home`, types `typed` once `[y/N]` shows; returns
/// an error with what was shown when it does not exit 0.
pub fn decide(
    server: &Path,
    project: &Path,
    home: &Path,
    args: &[String],
    typed: &str,
) -> Result<(), String> {
    let master = openpt(OpenptFlags::RDWR | OpenptFlags::NOCTTY).map_err(|e| e.to_string())?;
    grantpt(&master).map_err(|e| e.to_string())?;
    unlockpt(&master).map_err(|e| e.to_string())?;
    let name = ptsname(&master, Vec::new()).map_err(|e| e.to_string())?;
    let slave = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(name.to_string_lossy().as_ref())
        .map_err(|e| e.to_string())?;
    let io = |f: &std::fs::File| f.try_clone().map_err(|e| e.to_string());
    let mut child = Command::new(server)
        .args(args)
        .current_dir(project)
        .env("HOME", home)
        .env_remove("CLAUDECODE")
        .stdin(io(&slave)?)
        .stdout(io(&slave)?)
        .stderr(slave)
        .spawn()
        .map_err(|e| format!("{}: {e}", server.display()))?;
    let mut master = std::fs::File::from(master);
    let shown = Arc::new(Mutex::new(String::new()));
    let reader = {
        let mut master = io(&master)?;
        let shown = shown.clone();
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            // EIO once the child's side is closed: the end of what it shows.
            while let Ok(n @ 1..) = master.read(&mut buf) {
                shown
                    .lock()
                    .unwrap()
                    .push_str(&String::from_utf8_lossy(&buf[..n]));
            }
        })
    };
    let deadline = Instant::now() + PATIENCE;
    while !shown.lock().unwrap().contains("[y/N]") {
        if Instant::now() > deadline || matches!(child.try_wait(), Ok(Some(_))) {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    // A command that already ended leaves nobody to read the answer.
    let _ = master.write_all(typed.as_bytes());
    let status = child.wait().map_err(|e| e.to_string())?;
    drop(master);
    let _ = reader.join();
    let shown = shown.lock().unwrap().clone();
    if status.success() {
        Ok(())
    } else {
        Err(format!(
            "`bmad-mcp {}` exited {status}:\n{shown}",
            args.join(" ")
        ))
    }
}
