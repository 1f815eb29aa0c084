//! Headless Chromium driven over WebDriver (W3C) by plain HTTP to `chromedriver`: Debian's
//! `chromium` and `chromium-driver`. Only what the dashboard's browser test needs: open an
//! address, find elements, click, type, read text, run a script, take a screenshot.

use std::net::{SocketAddr, TcpListener};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::dash::request;

pub const CHROMIUM: &str = "/usr/bin/chromium";
pub const CHROMEDRIVER: &str = "/usr/bin/chromedriver";
const ELEMENT: &str = "element-6066-11e4-a52e-4f735466cecf";

pub struct Browser {
    driver: Child,
    addr: SocketAddr,
    session: String,
    _profile: tempfile::TempDir,
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn call(addr: SocketAddr, method: &str, path: &str, body: Option<&Value>) -> Value {
    let text = body.map(|b| b.to_string()).unwrap_or_default();
    let a = request(
        addr,
        method,
        path,
        &[("Content-Type", "application/json")],
        text.as_bytes(),
    );
    let v: Value = serde_json::from_str(&a.body)
        .unwrap_or_else(|e| panic!("chromedriver answered no JSON ({e}): {a:?}"));
    assert!(
        a.status == 200,
        "{method} {path} {text}: {} {}",
        a.status,
        v["value"]
    );
    v["value"].clone()
}

impl Browser {
    /// Starts chromedriver and a headless Chromium with an empty profile.
    pub fn start() -> Browser {
        let port = free_port();
        let driver = Command::new(CHROMEDRIVER)
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("chromedriver starts");
        let addr: SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
        let deadline = Instant::now() + Duration::from_secs(20);
        while std::net::TcpStream::connect(addr).is_err() {
            assert!(Instant::now() < deadline, "chromedriver does not listen");
            std::thread::sleep(Duration::from_millis(50));
        }
        let profile = tempfile::tempdir().unwrap();
        let args = [
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-dev-shm-usage",
            "--window-size=1280,1600",
        ]
        .iter()
        .map(|a| a.to_string())
        .chain([format!("--user-data-dir={}", profile.path().display())])
        .collect::<Vec<_>>();
        let caps = json!({"capabilities": {"alwaysMatch": {
            "browserName": "chrome",
            "goog:chromeOptions": {"binary": CHROMIUM, "args": args},
        }}});
        let v = call(addr, "POST", "/session", Some(&caps));
        Browser {
            driver,
            addr,
            session: v["sessionId"].as_str().unwrap().to_string(),
            _profile: profile,
        }
    }

    fn at(&self, rest: &str) -> String {
        format!("/session/{}{rest}", self.session)
    }

    pub fn goto(&self, url: &str) {
        call(
            self.addr,
            "POST",
            &self.at("/url"),
            Some(&json!({"url": url})),
        );
    }

    /// The first element `css` selects, waited for up to 20 s.
    pub fn find(&self, css: &str) -> String {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let a = request(
                self.addr,
                "POST",
                &self.at("/element"),
                &[("Content-Type", "application/json")],
                json!({"using": "css selector", "value": css})
                    .to_string()
                    .as_bytes(),
            );
            if a.status == 200 {
                let v: Value = serde_json::from_str(&a.body).unwrap();
                return v["value"][ELEMENT].as_str().unwrap().to_string();
            }
            assert!(
                Instant::now() < deadline,
                "no element `{css}` in the page: {}",
                self.text("body")
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// `op` (`click`, `value`, `text`) on the first element `css` selects; found again when
    /// the page replaced it meanwhile (a live update re-renders the task).
    fn on(&self, css: &str, method: &str, op: &str, body: Option<&Value>) -> Value {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let e = self.find(css);
            let text = body.map(|b| b.to_string()).unwrap_or_default();
            let a = request(
                self.addr,
                method,
                &self.at(&format!("/element/{e}/{op}")),
                &[("Content-Type", "application/json")],
                text.as_bytes(),
            );
            let v: Value = serde_json::from_str(&a.body).unwrap_or_default();
            if a.status == 200 {
                return v["value"].clone();
            }
            // A live page re-renders: an element replaced, or not yet laid out, is found
            // again until the deadline.
            let error = &v["value"]["error"];
            let stale = error == "stale element reference" || error == "element not interactable";
            assert!(
                stale && Instant::now() < deadline,
                "{op} on `{css}`: {} {}",
                a.status,
                v["value"]
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    pub fn click(&self, css: &str) {
        self.on(css, "POST", "click", Some(&json!({})));
    }

    pub fn type_into(&self, css: &str, text: &str) {
        self.on(css, "POST", "value", Some(&json!({"text": text})));
    }

    pub fn text(&self, css: &str) -> String {
        self.on(css, "GET", "text", None)
            .as_str()
            .unwrap_or_default()
            .to_string()
    }

    /// Runs `script` in the page (a returned promise is awaited) and returns its value.
    pub fn run(&self, script: &str) -> Value {
        call(
            self.addr,
            "POST",
            &self.at("/execute/sync"),
            Some(&json!({"script": script, "args": []})),
        )
    }

    /// Sets the window's outer size, as a laptop's or a phone's screen.
    pub fn resize(&self, width: u32, height: u32) {
        call(
            self.addr,
            "POST",
            &self.at("/window/rect"),
            Some(&json!({"width": width, "height": height})),
        );
    }

    /// Saves a PNG of the page to `path`.
    pub fn screenshot(&self, path: &Path) {
        let v = call(self.addr, "GET", &self.at("/screenshot"), None);
        let png = decode_base64(v.as_str().unwrap());
        assert!(png.starts_with(b"\x89PNG"), "a PNG");
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, png).unwrap();
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = request(self.addr, "DELETE", &self.at(""), &[], b"");
        let _ = self.driver.kill();
        let _ = self.driver.wait();
    }
}

fn decode_base64(text: &str) -> Vec<u8> {
    let value = |c: u8| match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'+' => 62,
        _ => 63,
    };
    let digits: Vec<u8> = text
        .bytes()
        .filter(|c| c.is_ascii_alphanumeric() || *c == b'+' || *c == b'/')
        .map(value)
        .collect();
    let mut out = Vec::with_capacity(digits.len() * 3 / 4);
    for chunk in digits.chunks(4) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, d)| n | (u32::from(*d) << (18 - 6 * i)));
        let bytes = n.to_be_bytes();
        out.extend_from_slice(&bytes[1..chunk.len()]);
    }
    out
}
