//! Benchmarks of `serve --http` against stdio: the latency of one call as a client sees it,
//! over stdio and over HTTP in both protocol eras, and 100 clients of one HTTP server
//! calling at once. It prints figures; it never fails because of one.
//!
//!     cargo bench --bench http                # the full run, ~1 min
//!     cargo bench --bench http -- --quick     # fewer calls
//!
//! Every client is rmcp's (the child-process transport for stdio, the streamable HTTP
//! client over reqwest for HTTP), so both sides carry the same client overhead. The calls
//! are `status` (a read: the transport's cost stands out) and `start` (a change: the
//! project lock, four files written and fsynced). `BMAD_MCP_BIN` overrides the binary
//! (by default the one `cargo bench` builds).

mod common;

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use rmcp::model::{CallToolRequestParams, ProtocolVersion};
use rmcp::service::RunningService;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{ClientLifecycleMode, ClientServiceExt, RoleClient, ServiceExt};
use serde_json::{json, Value};

type Res<T> = Result<T, Box<dyn std::error::Error>>;
type Service = RunningService<RoleClient, ()>;

const OBJECTIVE: &str = "Build a service that publishes a weekly team changelog";

#[derive(Clone, Copy, Debug)]
enum Era {
    Legacy,
    Modern,
}

async fn handshake<T, E, A>(era: Era, transport: T) -> Res<Service>
where
    T: rmcp::transport::IntoTransport<RoleClient, E, A>,
    E: std::error::Error + Send + Sync + 'static,
{
    Ok(match era {
        Era::Legacy => ().serve(transport).await?,
        Era::Modern => {
            ().serve_with_lifecycle(
                transport,
                ClientLifecycleMode::Discover {
                    preferred_versions: vec![ProtocolVersion::V_2026_07_28],
                },
            )
            .await?
        }
    })
}

async fn call(service: &Service, args: Value) -> Res<Value> {
    let Value::Object(map) = args else {
        return Err("arguments are an object".into());
    };
    let result = service
        .call_tool(CallToolRequestParams::new("bmad-task").with_arguments(map))
        .await?;
    let v = result.structured_content.ok_or("no structuredContent")?;
    if result.is_error == Some(true) {
        return Err(format!("tool error: {v}").into());
    }
    Ok(v)
}

/// A running `serve --http` on a free loopback port.
struct HttpServer {
    child: std::process::Child,
    url: String,
}

impl HttpServer {
    fn start(bin: &Path, root: &Path) -> Res<HttpServer> {
        use std::io::BufRead;
        let mut child = std::process::Command::new(bin)
            .args(["serve", "--http", "127.0.0.1:0", "--root"])
            .arg(root)
            .env_remove("BMAD_MCP_TOKEN")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()?;
        let mut line = String::new();
        let mut stderr = std::io::BufReader::new(child.stderr.take().ok_or("no stderr")?);
        stderr.read_line(&mut line)?;
        // The rest (the dashboard's address, logs) is read and dropped: a closed stderr
        // would end the server at its next line.
        std::thread::spawn(move || std::io::copy(&mut stderr, &mut std::io::sink()));
        let url = line
            .split("at ")
            .nth(1)
            .and_then(|r| r.split_whitespace().next())
            .ok_or_else(|| format!("unexpected first line: {line}"))?
            .to_string();
        Ok(HttpServer { child, url })
    }

    async fn connect(&self, era: Era) -> Res<Service> {
        let config = StreamableHttpClientTransportConfig::with_uri(self.url.as_str());
        handshake(era, StreamableHttpClientTransport::from_config(config)).await
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let i = ((sorted.len() - 1) as f64 * p).round() as usize;
    sorted[i]
}

fn summary(values: &mut [f64]) -> String {
    values.sort_by(|a, b| a.total_cmp(b));
    format!(
        "median {:>7.3} ms   p90 {:>7.3} ms   p99 {:>7.3} ms   (n={})",
        percentile(values, 0.5),
        percentile(values, 0.9),
        percentile(values, 0.99),
        values.len()
    )
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// Times `n` `status` calls and `n` `start` calls on one client; returns both lists.
async fn per_call(service: &Service, project: &Path, n: usize) -> Res<(Vec<f64>, Vec<f64>)> {
    let cwd = project.to_str().ok_or("project path")?;
    let first = call(
        service,
        json!({"action": "start", "objective": OBJECTIVE, "cwd": cwd}),
    )
    .await?;
    let sid = first["session_id"]
        .as_str()
        .ok_or("session_id")?
        .to_string();
    let status = json!({"action": "status", "session_id": sid, "cwd": cwd});
    for _ in 0..20 {
        call(service, status.clone()).await?;
    }
    let mut reads = Vec::with_capacity(n);
    for _ in 0..n {
        let t = Instant::now();
        call(service, status.clone()).await?;
        reads.push(ms(t.elapsed()));
    }
    let mut starts = Vec::with_capacity(n);
    for _ in 0..n {
        let t = Instant::now();
        call(
            service,
            json!({"action": "start", "objective": OBJECTIVE, "cwd": cwd}),
        )
        .await?;
        starts.push(ms(t.elapsed()));
    }
    Ok((reads, starts))
}

fn fresh_project(base: &Path, name: &str) -> Res<PathBuf> {
    let p = base.join(name);
    std::fs::create_dir_all(&p)?;
    Ok(p)
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> Res<()> {
    if !common::benchmarking("http") {
        return Ok(());
    }
    let quick = std::env::args().any(|a| a == "--quick");
    let n = if quick { 50 } else { 300 };
    let (clients, each) = (100, if quick { 3 } else { 10 });
    let bin = common::server_binary()?;
    let base = tempfile::tempdir()?;
    println!("bmad-mcp per-call latency, stdio against streamable HTTP ({n} calls each)\n");

    // stdio, the 2026-07-28 era (as Claude Code speaks it).
    let project = fresh_project(base.path(), "stdio")?;
    let mut cmd = tokio::process::Command::new(&bin);
    cmd.current_dir(&project).env_remove("BMAD_PROJECT_ROOT");
    let (transport, _) = TokioChildProcess::builder(cmd)
        .stderr(Stdio::null())
        .spawn()?;
    let stdio = handshake(Era::Modern, transport).await?;
    let (mut reads, mut starts) = per_call(&stdio, &project, n).await?;
    println!("stdio            status  {}", summary(&mut reads));
    println!("stdio            start   {}", summary(&mut starts));
    stdio.cancel().await?;

    for era in [Era::Modern, Era::Legacy] {
        let project = fresh_project(base.path(), &format!("http-{era:?}"))?;
        let server = HttpServer::start(&bin, &project)?;
        let client = server.connect(era).await?;
        let (mut reads, mut starts) = per_call(&client, &project, n).await?;
        let label = match era {
            Era::Modern => "HTTP 2026-07-28",
            Era::Legacy => "HTTP 2025-11-25",
        };
        println!("{label:<16} status  {}", summary(&mut reads));
        println!("{label:<16} start   {}", summary(&mut starts));
        client.cancel().await?;
    }

    // 100 clients of one server at once, half in each era, all on one project.
    println!(
        "\n{clients} concurrent HTTP clients on one server and one project, {each} calls each\n"
    );
    let project = fresh_project(base.path(), "many")?;
    let server = HttpServer::start(&bin, &project)?;
    let mut services = Vec::with_capacity(clients);
    let t = Instant::now();
    for i in 0..clients {
        let era = if i % 2 == 0 { Era::Modern } else { Era::Legacy };
        services.push(server.connect(era).await?);
    }
    println!(
        "connect          {clients} clients in {:.0} ms",
        ms(t.elapsed())
    );
    let cwd = project.to_str().ok_or("project path")?.to_string();
    let seed = call(
        &services[0],
        json!({"action": "start", "objective": OBJECTIVE, "cwd": cwd}),
    )
    .await?;
    let sid = seed["session_id"].as_str().ok_or("session_id")?.to_string();
    let services = std::sync::Arc::new(services);
    for (label, args) in [
        (
            "status",
            json!({"action": "status", "session_id": sid, "cwd": cwd}),
        ),
        (
            "start",
            json!({"action": "start", "objective": OBJECTIVE, "cwd": cwd}),
        ),
    ] {
        let t = Instant::now();
        let runs: Vec<_> = (0..clients)
            .map(|i| {
                let (services, args) = (services.clone(), args.clone());
                tokio::spawn(async move {
                    let mut own = Vec::with_capacity(each);
                    for _ in 0..each {
                        let t = Instant::now();
                        call(&services[i], args.clone())
                            .await
                            .map_err(|e| e.to_string())?;
                        own.push(ms(t.elapsed()));
                    }
                    Ok::<_, String>(own)
                })
            })
            .collect();
        let mut all = Vec::new();
        for run in runs {
            all.extend(run.await??);
        }
        let wall = t.elapsed();
        println!(
            "{label:<7} x{:<5}   {:>6.0} calls/s   per call: {}",
            all.len(),
            all.len() as f64 / wall.as_secs_f64(),
            summary(&mut all)
        );
    }
    let sessions = std::fs::read_dir(project.join(".bmad-task"))?
        .filter(|e| {
            e.as_ref()
                .is_ok_and(|e| e.file_name().to_string_lossy().starts_with("session-"))
        })
        .count();
    println!("sessions on disk: {sessions} (1 + {clients} × {each} starts)");
    Ok(())
}
