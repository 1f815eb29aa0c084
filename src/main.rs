//! The `bmad-mcp` binary: with no arguments it serves MCP over stdio.

use clap::Parser;
use rmcp::ServiceExt;
use tracing_subscriber::EnvFilter;

use bmad_mcp::server::args::Limits;
use bmad_mcp::store::DefaultRoot;
use bmad_mcp::BmadServer;

/// MCP server (stdio) that runs the BMAD agile workflow: Product Owner → Architect →
/// Scrum Master → Developer → Reviewer → QA. Register it in Claude Code with
/// `claude mcp add-json bmad '{"type":"stdio","command":"bmad-mcp"}'`.
///
/// Environment: BMAD_PROJECT_ROOT or CLAUDE_PROJECT_DIR (project directory when a call
/// gives no cwd), BMAD_MAX_RESULT_BYTES, BMAD_MAX_OBJECTIVE_BYTES, BMAD_MAX_TEXT_BYTES
/// (input limits), RUST_LOG (log level; logs go to stderr).
#[derive(Parser)]
#[command(name = "bmad-mcp", version, about, long_about)]
struct Cli {}

fn main() -> std::process::ExitCode {
    Cli::parse();
    tracing_subscriber::fmt()
        .with_env_filter(
            EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("warn")),
        )
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .init();

    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("bmad-mcp: cannot start the async runtime: {e}");
            return std::process::ExitCode::FAILURE;
        }
    };
    match runtime.block_on(serve()) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            tracing::error!(error = %e, "server stopped");
            std::process::ExitCode::FAILURE
        }
    }
}

async fn serve() -> Result<(), Box<dyn std::error::Error>> {
    let server = BmadServer::new(DefaultRoot::from_env(), Limits::from_env());
    tracing::info!(
        version = env!("CARGO_PKG_VERSION"),
        "bmad-mcp serving on stdio"
    );
    let running = server.serve(rmcp::transport::io::stdio_pipes()).await?;
    let reason = running.waiting().await?;
    tracing::info!(?reason, "client disconnected");
    Ok(())
}
