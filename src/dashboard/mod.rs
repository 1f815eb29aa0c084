//! The human's dashboard: a page in their own browser to read every task, compare the rounds of a
//! document, see the audit and the checks, and decide, on the same files and rules as every other
//! channel. `bmad-mcp dashboard` serves it alone on loopback; `serve --http` serves it beside
//! `/mcp`. Either prints an address with a one-time key, and a new one only when Enter is pressed
//! in its own terminal (a signal, which any of the user's processes can send, the assistant's shell
//! among them, prints none); everything else is refused ([`guard`]), and every browser that signs
//! in is shown on the page. Documents are untrusted and rendered so that nothing in them can run
//! ([`render`]); the page updates when files change ([`events`]); decisions go through
//! [`act::human`](crate::act::human) recorded `via: dashboard` ([`decide`]). Every asset is
//! embedded in the binary: it works offline.
//!
//! A project it serves gets `.bmad-task/dashboard.json` (the page's address, without the
//! secret, and this process's id), so that a reply asking the human to decide carries
//! the page's deep link; it is removed when the dashboard stops. A project with no task
//! yet gets it once its first task is started ([`Dashboard::announce_when_started`]): the
//! dashboard makes no `.bmad-task/` in a folder that may be no project.

pub mod checks;
pub mod decide;
pub mod events;
pub mod guard;
pub mod matrix;
pub mod render;
pub mod rounds;
pub mod routes;
pub mod threads;
pub mod view;

use std::io::{BufRead, Write};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use axum::Router;
use tokio_util::sync::CancellationToken;

use crate::exit::Exit;
use crate::files::{DefaultRoot, Project, Roots};
use crate::settings::{Acting, Settings};
use crate::store::{Store, DASHBOARD_REL};

/// Where the page is served.
pub const PREFIX: &str = "/dashboard";
/// The default address of `bmad-mcp dashboard`: loopback, a port the system picks.
pub const DEFAULT_ADDR: &str = "127.0.0.1:0";

/// How often the dashboard looks for a project's first task, to tell it where the page is.
const ANNOUNCE_EVERY: Duration = Duration::from_millis(500);

/// What every request of the page shares.
pub struct Dashboard {
    /// The projects served, by the index the page names them with.
    projects: RwLock<Projects>,
    /// The directories asked for: they and the work trees of their clones are served.
    asked: Vec<PathBuf>,
    /// Where a work tree must lie to be served (`serve --http`'s roots).
    roots: Option<Roots>,
    acting: Acting,
    /// Where the page was announced to the projects, for a work tree that joins later.
    announced: Mutex<Option<SocketAddr>>,
    /// When the clones' work trees were last listed.
    looked: Mutex<Instant>,
    pub keys: guard::Keys,
    /// Cancelled when the server stops: the event streams end.
    pub stop: CancellationToken,
}

/// The projects served, in the order the list shows them. A work tree added to a clone
/// while the page runs joins at the end, so an index the page holds stays its project.
#[derive(Default)]
struct Projects {
    dirs: Vec<PathBuf>,
    stores: Vec<Arc<Store>>,
    /// Per project, whether it was told where the page is ([`Dashboard::announce`]).
    told: Vec<AtomicBool>,
}

/// How often the clones' work trees are listed again (`git worktree add` while it runs).
const WORKTREES_EVERY: Duration = Duration::from_secs(1);

impl Dashboard {
    /// The page for the projects in `asked` and the other work trees of their clones
    /// (under `roots`, when given), whose decisions are made with `acting`.
    pub fn new(
        asked: Vec<PathBuf>,
        roots: Option<Roots>,
        bound: SocketAddr,
        stop: CancellationToken,
        acting: &Acting,
    ) -> Dashboard {
        let dash = Dashboard {
            projects: RwLock::new(Projects::default()),
            asked,
            roots,
            acting: acting.clone(),
            announced: Mutex::new(None),
            looked: Mutex::new(Instant::now()),
            keys: guard::Keys::new(bound),
            stop,
        };
        dash.serve_new(with_worktrees(dash.asked.clone(), dash.roots.as_ref()));
        dash
    }

    /// Serves the directories of `found` not served yet, and tells them where the page is
    /// when it was announced.
    fn serve_new(&self, found: Vec<PathBuf>) {
        let mut p = self.projects.write().unwrap_or_else(|e| e.into_inner());
        let announced = *self.announced.lock().unwrap_or_else(|e| e.into_inner());
        for d in found {
            if p.dirs.contains(&d) {
                continue;
            }
            let store = Arc::new(Store::new(
                DefaultRoot {
                    source_name: "the dashboard's project",
                    value: d.display().to_string(),
                },
                self.acting.clone(),
            ));
            let told = AtomicBool::new(false);
            if let Some(bound) = announced {
                self.announce_to(&store, &told, bound);
            }
            p.dirs.push(d);
            p.stores.push(store);
            p.told.push(told);
        }
    }

    /// Lists the clones' work trees again, at most every [`WORKTREES_EVERY`], and serves
    /// one added since: a worktree made while the page runs is on it within seconds.
    pub fn pick_up_worktrees(&self) {
        {
            let mut looked = self.looked.lock().unwrap_or_else(|e| e.into_inner());
            if looked.elapsed() < WORKTREES_EVERY {
                return;
            }
            *looked = Instant::now();
        }
        self.serve_new(with_worktrees(self.asked.clone(), self.roots.as_ref()));
    }

    /// The directories served, by index.
    pub fn dirs(&self) -> Vec<PathBuf> {
        self.projects
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .dirs
            .clone()
    }

    /// The stores of the projects served, by index.
    pub fn stores(&self) -> Vec<Arc<Store>> {
        self.projects
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .stores
            .clone()
    }

    /// The store of the project at `index`.
    pub fn store(&self, index: usize) -> Option<Arc<Store>> {
        self.projects
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .stores
            .get(index)
            .cloned()
    }

    /// The page's address without the secret: what deep links start with.
    pub fn base(&self, bound: SocketAddr) -> String {
        format!("http://{bound}{PREFIX}/")
    }

    /// A fresh address that opens the page once: the one printed before it dies.
    pub fn login_url(&self, bound: SocketAddr) -> String {
        format!("{}?k={}", self.base(bound), self.keys.mint())
    }

    /// Says on stderr, each time the process gets SIGUSR1, that only Enter in its terminal
    /// prints a new address: any process of the user's can send a signal, the assistant's
    /// shell too, and where the address is printed (a log, a terminal pane) may be read by
    /// it. Handled so that the signal does not end the process.
    #[cfg(unix)]
    fn refuse_signal(self: &Arc<Self>) {
        use tokio::signal::unix::{signal, SignalKind};
        let mut signals = match signal(SignalKind::user_defined1()) {
            Ok(s) => s,
            Err(e) => {
                tracing::warn!(error = %e, "dashboard: SIGUSR1 not handled");
                return;
            }
        };
        let dash = self.clone();
        tokio::spawn(async move {
            loop {
                tokio::select! {
                    _ = dash.stop.cancelled() => return,
                    got = signals.recv() => match got {
                        Some(()) => eprintln!("bmad-mcp: SIGUSR1 prints no new address of the dashboard (any process of yours can send it, an assistant's shell too): press Enter in the terminal it runs in"),
                        None => return,
                    },
                }
            }
        });
    }

    #[cfg(not(unix))]
    fn refuse_signal(self: &Arc<Self>) {}

    /// Tells each project served that has tasks, and was not told yet, where the page is
    /// (for the replies' deep links), and each that joins later. Whether all were told.
    pub fn announce(&self, bound: SocketAddr) -> bool {
        *self.announced.lock().unwrap_or_else(|e| e.into_inner()) = Some(bound);
        let p = self.projects.read().unwrap_or_else(|e| e.into_inner());
        let mut all = true;
        for (store, told) in p.stores.iter().zip(&p.told) {
            if !told.load(Ordering::Relaxed) {
                all &= self.announce_to(store, told, bound);
            }
        }
        all
    }

    /// Writes the page's address into `store`'s project once it has tasks; whether it did.
    fn announce_to(&self, store: &Store, told: &AtomicBool, bound: SocketAddr) -> bool {
        let text = serde_json::json!({"url": self.base(bound), "pid": std::process::id()});
        let Some(p) = store.project(None).ok().filter(Project::has_state) else {
            return false;
        };
        if let Err(e) = p.write_atomic(DASHBOARD_REL, text.to_string().as_bytes()) {
            tracing::warn!(error = %e, "dashboard: cannot write {DASHBOARD_REL}");
        }
        told.store(true, Ordering::Relaxed);
        true
    }

    /// [`Dashboard::announce`] now, then every [`ANNOUNCE_EVERY`] until the server stops:
    /// the clones' work trees are listed again (at most every [`WORKTREES_EVERY`]), whether
    /// or not a page is open, and a project not told yet is told. A project whose first
    /// task starts after the dashboard does, and a work tree added while it runs, get the
    /// page's address within seconds, so their replies link to it.
    pub fn announce_when_started(self: &Arc<Self>, bound: SocketAddr) {
        self.announce(bound);
        let dash = self.clone();
        tokio::spawn(async move {
            loop {
                tokio::select! {
                    _ = dash.stop.cancelled() => return,
                    () = tokio::time::sleep(ANNOUNCE_EVERY) => {}
                }
                let d = dash.clone();
                let _ = tokio::task::spawn_blocking(move || {
                    d.pick_up_worktrees();
                    if !d.all_told() {
                        d.announce(bound);
                    }
                })
                .await;
            }
        });
    }

    fn all_told(&self) -> bool {
        let p = self.projects.read().unwrap_or_else(|e| e.into_inner());
        p.told.iter().all(|t| t.load(Ordering::Relaxed))
    }

    /// Removes what [`Dashboard::announce`] wrote, when it is still this process's.
    pub fn withdraw(&self) {
        for dir in &self.dirs() {
            let path = dir.join(DASHBOARD_REL);
            let ours = std::fs::read_to_string(&path)
                .ok()
                .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
                .is_some_and(|v| v["pid"] == std::process::id());
            if ours {
                let _ = std::fs::remove_file(path);
            }
        }
    }
}

/// The projects under the roots of `serve --http`: each root, and each folder directly
/// in it that holds a `.bmad-task/`.
pub fn projects_under(roots: &Roots) -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    for root in roots.dirs() {
        dirs.push(root.clone());
        let mut children: Vec<PathBuf> = std::fs::read_dir(root)
            .map(|d| {
                d.filter_map(|e| e.ok().map(|e| e.path()))
                    .filter(|p| p.join(".bmad-task").is_dir())
                    .collect()
            })
            .unwrap_or_default();
        children.sort();
        dirs.extend(children);
    }
    dirs
}

/// `dirs`, each followed by the other work trees of its clone (as git lists them), each
/// once: one page shows a clone's stories in whichever work tree they run. With `roots`,
/// only the work trees under them: `serve --http` serves nothing outside its roots.
pub fn with_worktrees(dirs: Vec<PathBuf>, roots: Option<&Roots>) -> Vec<PathBuf> {
    let real = |p: &PathBuf| p.canonicalize().unwrap_or_else(|_| p.clone());
    let allowed: Option<Vec<PathBuf>> = roots.map(|r| r.dirs().iter().map(real).collect());
    let mut out: Vec<PathBuf> = Vec::new();
    let mut seen: Vec<PathBuf> = Vec::new();
    for dir in dirs {
        for d in std::iter::once(dir.clone()).chain(same_folder_elsewhere(&dir)) {
            let r = real(&d);
            let inside = allowed
                .as_ref()
                .is_none_or(|roots| roots.iter().any(|root| r.starts_with(root)));
            if inside && !seen.contains(&r) {
                seen.push(r);
                out.push(d);
            }
        }
    }
    out
}

/// The folder `dir` is in its work tree, in each other work tree of the clone where it
/// exists (a project in a subfolder of the repository is that subfolder everywhere).
fn same_folder_elsewhere(dir: &std::path::Path) -> Vec<PathBuf> {
    let Some(repo) = crate::git::Repo::at(dir) else {
        return Vec::new();
    };
    let real = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
    let trees: Vec<(PathBuf, PathBuf)> = repo
        .worktrees()
        .into_iter()
        .map(|t| (t.canonicalize().unwrap_or_else(|_| t.clone()), t))
        .collect();
    // The work tree holding `dir`: the longest that is a prefix of it.
    let Some(rel) = trees
        .iter()
        .filter_map(|(r, _)| real.strip_prefix(r).ok())
        .min_by_key(|rel| rel.components().count())
        .map(std::path::Path::to_path_buf)
    else {
        return Vec::new();
    };
    // A project at the top of its work tree is that work tree, named as git names it (a
    // join of the empty path would end it with a separator, shown to the human).
    trees
        .into_iter()
        .map(|(_, t)| {
            if rel.as_os_str().is_empty() {
                t
            } else {
                t.join(&rel)
            }
        })
        .filter(|p| p.is_dir())
        .collect()
}

/// Withdraws the dashboard's address from its projects when dropped.
pub struct Served(Arc<Dashboard>);

impl Drop for Served {
    fn drop(&mut self) {
        self.0.withdraw();
    }
}

/// What `serve --http` serves beside `/mcp`: the dashboard of the projects under its
/// roots, a one-time address printed to stderr (a new one on Enter, where its stdin is a
/// terminal): what a log keeps
/// of it opens nothing once used, replaced or [`guard::LOGIN_TTL`] old. Not under an
/// assistant's shell, which would read the address and decide as the human: then the
/// server runs without it, and says so.
pub fn beside_http(at: &crate::http::Listening, acting: &Acting) -> Option<crate::http::Beside> {
    if let Some(why) = crate::process_origin::behind_me() {
        eprintln!("bmad-mcp: no dashboard beside this server: it runs under an assistant's shell ({why}). The dashboard is the human's: run `bmad-mcp dashboard` yourself, in your own terminal.");
        return None;
    }
    let bound = at.addr;
    let dash = Arc::new(Dashboard::new(
        projects_under(at.roots()),
        Some(at.roots().clone()),
        bound,
        at.stop.clone(),
        acting,
    ));
    {
        dash.announce_when_started(bound);
        let print: fn(&str) = |url| {
            eprintln!(
                "bmad-mcp: a one-time address (one use, within {} minutes; Enter in this server's terminal prints a new one) of the human's dashboard (loopback only) is at {url}",
                guard::LOGIN_TTL.as_secs() / 60,
            )
        };
        print(&dash.login_url(bound));
        dash.refuse_signal();
        if std::io::IsTerminal::is_terminal(&std::io::stdin()) {
            reissue_on_enter(dash.clone(), bound, print);
        }
    }
    Some((router(dash.clone()), Box::new(Served(dash))))
}

/// The page's routes behind its guard, to serve beside `/mcp` (other paths are not its).
pub fn router(dash: Arc<Dashboard>) -> Router {
    // `route_layer`: the guard wraps the page's routes only, never the fallback that the
    // server beside it keeps for its own paths.
    routes::routes(dash.clone())
        .route_layer(axum::middleware::from_fn_with_state(dash, guard::check))
}

/// [`router`] served alone: every path is behind the guard (unknown ones then get 404).
fn router_alone(dash: Arc<Dashboard>) -> Router {
    routes::routes(dash.clone())
        .fallback(|| async { (axum::http::StatusCode::NOT_FOUND, "Not Found\n") })
        .layer(axum::middleware::from_fn_with_state(dash, guard::check))
}

/// `bmad-mcp dashboard`: serves the page for the project (`--project`, else as the
/// terminal's commands find it) and the other work trees of its clone, on loopback until
/// SIGINT or SIGTERM.
pub fn run(addr: &str, settings: &Settings) -> Exit {
    // Whoever starts the dashboard reads its secret: never an assistant.
    if let Some(why) = crate::process_origin::behind_me() {
        eprintln!("bmad-mcp: refusing to start the dashboard: this command runs under an assistant's shell ({why}). The dashboard is the human's: run it yourself, in your own terminal, outside the assistant.");
        return Exit::UnderAssistant;
    }
    let addr = match crate::http::options::parse_addr(addr) {
        Ok(a) if a.ip().is_loopback() => a,
        Ok(a) => {
            eprintln!("bmad-mcp: the dashboard listens on loopback only, not {a}");
            return Exit::Refused;
        }
        Err(e) => {
            eprintln!("bmad-mcp: {e}");
            return Exit::Refused;
        }
    };
    let dir = match Project::open(None, &settings.default_root) {
        Ok(p) => p.root.clone(),
        Err(e) => {
            eprintln!("bmad-mcp: {e}");
            return Exit::Failed;
        }
    };
    crate::http::run_to_end(
        tokio::runtime::Builder::new_multi_thread().worker_threads(2),
        serve(dir, addr, &settings.acting),
    )
}

async fn serve(dir: PathBuf, addr: SocketAddr, acting: &Acting) -> std::io::Result<()> {
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|e| std::io::Error::new(e.kind(), format!("cannot listen on {addr}: {e}")))?;
    let bound = listener.local_addr()?;
    let stop = CancellationToken::new();
    let dash = Arc::new(Dashboard::new(
        vec![dir.clone()],
        None,
        bound,
        stop.clone(),
        acting,
    ));
    dash.announce_when_started(bound);
    // The addresses go to stdout, for the human who started it (and to a test); nothing
    // else is printed there.
    let print: fn(&str) = |url| {
        let mut out = std::io::stdout().lock();
        // A closed stdout only means nobody reads the new address.
        let _ = writeln!(out, "{url}").and_then(|()| out.flush());
    };
    print(&dash.login_url(bound));
    eprintln!(
        "bmad-mcp {}: the dashboard of {} is at the address above (loopback only; it opens once, within {} minutes: press Enter here for a new one; Ctrl-C stops it)",
        env!("CARGO_PKG_VERSION"),
        dir.display(),
        guard::LOGIN_TTL.as_secs() / 60
    );
    dash.refuse_signal();
    reissue_on_enter(dash.clone(), bound, print);
    let app = router_alone(dash.clone()).into_make_service_with_connect_info::<SocketAddr>();
    let stopping = stop.clone();
    let served = axum::serve(listener, app)
        .with_graceful_shutdown(async move {
            crate::http::stop_signal().await;
            stopping.cancel();
        })
        .await;
    dash.withdraw();
    served
}

/// Prints a fresh one-time address with `print` for each line the human enters on stdin,
/// until it ends. A thread of its own: a read of stdin cannot be cancelled, and the
/// process may end while it waits.
fn reissue_on_enter(dash: Arc<Dashboard>, bound: SocketAddr, print: fn(&str)) {
    let spawned = std::thread::Builder::new()
        .name("dashboard-enter".into())
        .spawn(move || {
            for line in std::io::stdin().lock().lines() {
                if line.is_err() || dash.stop.is_cancelled() {
                    return;
                }
                print(&dash.login_url(bound));
            }
        });
    if let Err(e) = spawned {
        tracing::warn!(error = %e, "dashboard: no new address on Enter");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::git::tests::git;

    /// Every work tree of the clone, once; under `serve --http`, only those in its roots.
    #[test]
    fn the_clones_work_trees_are_served_within_the_roots() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        let (main, inside, outside) = (base.join("r/app"), base.join("r/side"), base.join("o"));
        std::fs::create_dir_all(&main).unwrap();
        git(&main, &["init", "-q", "-b", "main"]);
        git(
            &main,
            &[
                "-c",
                "user.name=A",
                "-c",
                "user.email=a@e.org",
                "commit",
                "-q",
                "--allow-empty",
                "-m",
                "one",
            ],
        );
        for (wt, branch) in [(&inside, "side"), (&outside, "out")] {
            git(
                &main,
                &["worktree", "add", "-q", "-b", branch, wt.to_str().unwrap()],
            );
        }
        let all = with_worktrees(vec![main.clone(), inside.clone()], None);
        // The given ones first, then the others in the order git lists them.
        assert_eq!(all, vec![main.clone(), outside.clone(), inside.clone()]);
        // A project in a subfolder is that subfolder in every work tree that has it.
        for wt in [&main, &inside] {
            std::fs::create_dir_all(wt.join("web")).unwrap();
        }
        assert_eq!(
            with_worktrees(vec![main.join("web")], None),
            vec![main.join("web"), inside.join("web")]
        );
        let roots = Roots::new(&[base.join("r")]).unwrap();
        let served = with_worktrees(vec![base.join("r"), main.clone()], Some(&roots));
        assert_eq!(served, vec![base.join("r"), main.clone(), inside.clone()]);
        // An entry written by hand under `.git/worktrees/` naming another repository (git
        // lists it) is not served: that project is not the clone's.
        let victim = base.join("victim");
        std::fs::create_dir_all(&victim).unwrap();
        git(&victim, &["init", "-q", "-b", "main"]);
        let forged = main.join(".git/worktrees/evil");
        std::fs::create_dir_all(&forged).unwrap();
        let gitdir = format!("{}\n", victim.join(".git").display());
        std::fs::write(forged.join("gitdir"), gitdir).unwrap();
        std::fs::write(forged.join("HEAD"), "ref: refs/heads/main\n").unwrap();
        std::fs::write(forged.join("commondir"), "../..\n").unwrap();
        assert_eq!(
            with_worktrees(vec![main.clone()], None),
            vec![main, outside, inside]
        );
    }
}
