//! Log lines that describe normal use are not errors. rmcp logs one at ERROR that is the
//! ordinary end of a 2026-07-28 `subscriptions/listen` stream: the client closes its event
//! stream (every `claude mcp list` health check does), the subscription ends, and rmcp tries
//! to send the subscription's final result on the stream that just closed ("failed to send
//! pending response during drain", or "fail to response message" when the result is
//! ready a moment before the close is seen; both with "channel closed"). Nobody is there to
//! read it, and nothing was lost. [`Quiet`] drops exactly those events (at DEBUG it says
//! so); every other ERROR, including the same messages with another cause, still shows.
//!
//! [`init`] sets up the process's logs with it: on stderr (stdout is the protocol's), at the
//! levels `RUST_LOG` asks for.

use std::fmt;

use tracing::field::{Field, Visit};
use tracing::{Event, Level, Subscriber};
use tracing_subscriber::filter::Targets;
use tracing_subscriber::layer::{Context, Layer, SubscriberExt};
use tracing_subscriber::util::SubscriberInitExt;

/// The default is quiet when all is well: warnings and errors, without the end of a
/// stream its client closed, which rmcp logs as an error ([`Quiet`]). `spec` is the
/// settings' `RUST_LOG`.
pub fn init(spec: Option<&str>) {
    tracing_subscriber::registry()
        .with(filter(spec))
        .with(Quiet)
        .with(
            tracing_subscriber::fmt::layer()
                .with_writer(std::io::stderr)
                .with_ansi(false),
        )
        .init();
}

/// The levels `RUST_LOG` (`spec`) asks for: a default level and `target=level` pairs,
/// separated by commas (`info`, `bmad_mcp=debug,warn`); `warn` when it is unset or not
/// understood. (A plain target filter: `tracing-subscriber`'s `EnvFilter`, with span and
/// field filters, pulls in a regex compiler of its own, 0.2 MB of binary.)
fn filter(spec: Option<&str>) -> Targets {
    let warn = || Targets::new().with_default(Level::WARN);
    match spec {
        Some(spec) => spec.parse().unwrap_or_else(|e| {
            eprintln!("bmad-mcp: RUST_LOG={spec:?} is not understood ({e}); logging at warn");
            warn()
        }),
        None => warn(),
    }
}

/// The layer that drops the log events of [`is_normal_end`].
pub struct Quiet;

impl<S: Subscriber> Layer<S> for Quiet {
    fn event_enabled(&self, event: &Event<'_>, _cx: Context<'_, S>) -> bool {
        let meta = event.metadata();
        if *meta.level() != Level::ERROR || !meta.target().starts_with("rmcp::service") {
            return true;
        }
        let mut fields = Fields::default();
        event.record(&mut fields);
        if is_normal_end(meta.target(), &fields.message, &fields.error) {
            tracing::debug!(
                "a client closed its stream before the final result of its subscription"
            );
            return false;
        }
        true
    }
}

/// Whether an rmcp log event with this target, message and `error` field is the end of a
/// stream its client closed (see the module's documentation).
pub fn is_normal_end(target: &str, message: &str, error: &str) -> bool {
    const RESPONSE_NOT_SENT: [&str; 2] = [
        // The subscription's result, when the loop has already seen the stream close.
        "failed to send pending response during drain",
        // The same, when the result is ready just before the loop sees it.
        "fail to response message",
    ];
    target == "rmcp::service" && RESPONSE_NOT_SENT.contains(&message) && error == "channel closed"
}

#[derive(Default)]
struct Fields {
    message: String,
    error: String,
}

impl Visit for Fields {
    fn record_str(&mut self, field: &Field, value: &str) {
        match field.name() {
            "message" => self.message = value.to_string(),
            "error" => self.error = value.to_string(),
            _ => {}
        }
    }

    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        match field.name() {
            "message" => self.message = format!("{value:?}"),
            "error" => self.error = format!("{value:?}"),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::is_normal_end;

    #[test]
    fn only_the_closed_stream_is_normal() {
        let drain = "failed to send pending response during drain";
        assert!(is_normal_end("rmcp::service", drain, "channel closed"));
        assert!(is_normal_end(
            "rmcp::service",
            "fail to response message",
            "channel closed"
        ));
        assert!(!is_normal_end("rmcp::service", drain, "broken pipe"));
        assert!(!is_normal_end(
            "rmcp::service",
            "fail to close sink",
            "channel closed"
        ));
        assert!(!is_normal_end("rmcp::other", drain, "channel closed"));
    }
}
