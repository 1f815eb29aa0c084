//! The human at a terminal: the server binary run with a pseudo-terminal as its stdin,
//! stdout and stderr (its decisions refuse a pipe), from the bench's own process, which no
//! assistant runs, without any host's shell marks, in the project, with the home the host
//! has. Each answer is typed once the output shows its question.

use std::io::{Read, Write};
use std::path::Path;
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rustix::pty::{grantpt, openpt, ptsname, unlockpt, OpenptFlags};

/// How long a decision may take before the bench gives up waiting for its question.
const PATIENCE: Duration = Duration::from_secs(30);
/// How long the output stays still before a question counts as shown.
const QUIET: Duration = Duration::from_millis(150);

/// Every environment variable a host's shell tool marks its commands with (the hosts
/// table): none reaches a command the bench runs as the human.
pub fn host_marks() -> Vec<&'static str> {
    bmad_mcp::hosts::HOSTS
        .iter()
        .filter_map(|h| h.shell)
        .flat_map(|s| s.vars.iter().map(|(name, _)| *name))
        .collect()
}

/// Runs `server args…` in `project` with `home`, types `typed` once `[y/N]` shows; returns
/// an error with what was shown when it does not exit 0.
pub fn decide(
    server: &Path,
    project: &Path,
    home: &Path,
    args: &[String],
    typed: &str,
) -> Result<(), String> {
    let typed = [typed.trim_end_matches('\n').to_string()];
    let (status, shown) = run(server, project, home, args, &typed)?;
    if status == 0 {
        Ok(())
    } else {
        Err(format!(
            "`bmad-mcp {}` exited {status}:\n{shown}",
            args.join(" ")
        ))
    }
}

/// Runs `server args…` in `project` with `home` and types each of `typed` (a line, Enter
/// added) once a question shows: the output ends with `[y/N]` or `: ` and then stays
/// quiet a moment. Returns the exit status and all that was shown.
pub fn run(
    server: &Path,
    project: &Path,
    home: &Path,
    args: &[String],
    typed: &[String],
) -> Result<(i32, String), String> {
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
    let mut command = Command::new(server);
    command
        .args(args)
        .current_dir(project)
        .env("HOME", home)
        .env_remove("BMAD_OWNER");
    for var in host_marks() {
        command.env_remove(var);
    }
    let mut child = command
        .stdin(io(&slave)?)
        .stdout(io(&slave)?)
        .stderr(slave)
        .spawn()
        .map_err(|e| format!("{}: {e}", server.display()))?;
    // The builder holds the terminal's other side: the reader sees its end only once the
    // child and this are gone.
    drop(command);
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
    let mut asked = 0;
    for answer in typed {
        if !wait_for_question(&shown, asked, &mut child) {
            break;
        }
        asked = shown.lock().unwrap().len();
        let _ = master.write_all(format!("{answer}\n").as_bytes());
    }
    let status = child.wait().map_err(|e| e.to_string())?;
    drop(master);
    let _ = reader.join();
    let shown = shown.lock().unwrap().clone();
    Ok((status.code().unwrap_or(-1), shown))
}

/// Waits until the output past `from` ends with a question and has been quiet a moment;
/// false when the command ended or the question never came.
fn wait_for_question(shown: &Mutex<String>, from: usize, child: &mut std::process::Child) -> bool {
    let deadline = Instant::now() + PATIENCE;
    let mut last = (0, Instant::now());
    loop {
        if Instant::now() > deadline || matches!(child.try_wait(), Ok(Some(_))) {
            return false;
        }
        let len = shown.lock().unwrap().len();
        if len != last.0 {
            last = (len, Instant::now());
        } else if len > from && last.1.elapsed() > QUIET {
            let text = shown.lock().unwrap();
            let tail = text[from..].trim_end_matches([' ', '\r', '\n']);
            let prompt = tail.ends_with("[y/N]") || tail.ends_with([':', '>', '?']);
            // A question worded otherwise is taken as asked once the output stops.
            if prompt || last.1.elapsed() > QUIET * 8 {
                return true;
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}
